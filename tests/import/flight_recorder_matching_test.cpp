// Flight-recorder analysis on dumps shaped as PyTorch writes them in the cases fr_trace's own
// tests and code cover: batches closed by "ALLGATHER_coalesced" (2.7+), gather and scatter with
// a non-root's placeholder, all_to_all sizes over the group, ring buffers that wrapped on one
// side of a pipeline's transfers, a rank that left no dump, and dumps of mixed or newer versions.
// Each dump is JSON text read by the same reader as a file's.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/flight_recorder_analysis.hpp"
#include "engine/import/flight_recorder_dump.hpp"
#include "engine/import/imported_run.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::import {
namespace {

using json = nlohmann::json;
using Sizes = std::vector<std::vector<std::int64_t>>;

// One rank's dump, built entry by entry as FlightRecorder records them.
class DumpBuilder {
  public:
    DumpBuilder(int rank, int world, std::string version = "2.10")
        : rank_(rank), version_(std::move(version)) {
        std::string ranks;
        for (int r = 0; r < world; ++r)
            ranks += (r == 0 ? "" : ", ") + std::to_string(r);
        pg_config_["0"] = {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[" + ranks + "]"}};
    }

    // A collective of its own seq id (or, with `same_seq`, one more op of the last one's batch).
    DumpBuilder& collective(const std::string& type, const std::string& state, Sizes in, Sizes out,
                            std::vector<std::string> in_dtypes = {"Float"},
                            std::vector<std::string> out_dtypes = {"Float"},
                            bool same_seq = false) {
        if (!same_seq)
            ++collective_seq_;
        add(type, state, false, std::move(in), std::move(out), std::move(in_dtypes),
            std::move(out_dtypes));
        return *this;
    }

    DumpBuilder& transfer(const std::string& name, const std::string& state, Sizes sizes) {
        ++p2p_seq_;
        add(name, state, true, sizes, sizes, {"Float"}, {"Float"});
        return *this;
    }

    // Another process group this rank belongs to, as pg_config lists it.
    DumpBuilder& group(const std::string& name, const std::string& ranks) {
        pg_config_[name] = {{"name", name}, {"desc", "mesh_pp"}, {"ranks", ranks}};
        return *this;
    }

    // A send or recv in group `name` (its op names count ranks within the group), which keeps
    // its own p2p seq ids.
    DumpBuilder& transfer_in(const std::string& name, const std::string& op,
                             const std::string& state) {
        add(op, state, true, {{4}}, {{4}}, {"Float"}, {"Float"});
        entries_.back()["process_group"] = {name, "mesh_pp"};
        entries_.back()["p2p_seq_id"] = ++group_p2p_seq_[name];
        return *this;
    }

    // Drops the oldest `count` entries, as a ring buffer that wrapped does.
    DumpBuilder& lose_oldest(std::size_t count) {
        entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(count));
        return *this;
    }

    FlightRecorderDump dump() const {
        const json top = {{"version", version_},
                          {"rank", rank_},
                          {"pg_config", pg_config_},
                          {"entries", entries_}};
        return parse_flight_recorder_dump(top.dump(), "rank" + std::to_string(rank_) + ".json");
    }

  private:
    void add(const std::string& name, const std::string& state, bool p2p, Sizes in, Sizes out,
             std::vector<std::string> in_dtypes, std::vector<std::string> out_dtypes) {
        entries_.push_back({{"record_id", record_++},
                            {"pg_id", 0},
                            {"process_group", {"0", "default_pg"}},
                            {"collective_seq_id", collective_seq_},
                            {"p2p_seq_id", p2p_seq_},
                            {"op_id", record_},
                            {"profiling_name", "nccl:" + name},
                            {"time_created_ns", 1'000'000 * record_},
                            {"state", state},
                            {"input_sizes", in},
                            {"input_dtypes", in_dtypes},
                            {"output_sizes", out},
                            {"output_dtypes", out_dtypes},
                            {"is_p2p", p2p}});
    }

    int rank_;
    std::string version_;
    json pg_config_ = json::object();
    json entries_ = json::array();
    std::int64_t record_ = 0;
    std::int64_t collective_seq_ = 0;
    std::int64_t p2p_seq_ = 0;
    std::map<std::string, std::int64_t> group_p2p_seq_;
};

std::vector<std::string> kinds(const FlightRecorderReport& report) {
    std::vector<std::string> out;
    for (const FlightRecorderFinding& finding : report.findings)
        out.push_back(finding.kind);
    return out;
}

TEST(FlightRecorderMatching, AnAllGatherBatchClosedByItsOwnMarkerIsComplete) {
    // PyTorch 2.7+: an uneven all_gather runs as broadcasts in one batch; the ops inside stay
    // "scheduled" and the closing "ALLGATHER_coalesced" entry carries the batch's state.
    std::vector<FlightRecorderDump> dumps;
    for (int rank = 0; rank < 2; ++rank) {
        DumpBuilder builder(rank, 2);
        builder.collective("_broadcast_oop", "scheduled", {{4}}, {{4}})
            .collective("_broadcast_oop", "scheduled", {{6}}, {{6}}, {"Float"}, {"Float"}, true)
            .collective("ALLGATHER_coalesced", "completed", {}, {}, {}, {}, true);
        dumps.push_back(builder.dump());
    }
    const FlightRecorderReport report = analyse_flight_recorder(dumps);
    EXPECT_FALSE(report.hang) << report.text();
    EXPECT_FALSE(report.mismatch);
    EXPECT_TRUE(report.findings.empty()) << report.text();
    EXPECT_EQ(report.ranks[0].ops, 2);  // the marker is not an op
    EXPECT_EQ(report.ranks[0].completed, 2);
}

TEST(FlightRecorderMatching, GatherAndScatterNonRootsAgreeWithTheirRoot) {
    std::vector<FlightRecorderDump> dumps{
        DumpBuilder(0, 2)
            .collective("gather", "completed", {{4}}, {{4}, {4}}, {"Float"}, {"Float", "Float"})
            .collective("scatter", "completed", {{4}, {4}}, {{4}}, {"Float", "Float"}, {"Float"})
            .dump(),
        DumpBuilder(1, 2)
            .collective("gather", "completed", {{4}}, {{}}, {"Float"}, {"Undefined"})
            .collective("scatter", "completed", {{}}, {{4}}, {"Undefined"}, {"Float"})
            .dump()};
    const FlightRecorderReport report = analyse_flight_recorder(dumps);
    EXPECT_TRUE(report.findings.empty()) << report.text();
    EXPECT_FALSE(report.mismatch);
}

TEST(FlightRecorderMatching, AllToAllSizesAreCheckedOverTheGroup) {
    const auto run = [](const std::string& version, std::int64_t rank1_sends) {
        return analyse_flight_recorder(
            {DumpBuilder(0, 2, version).collective("all_to_all", "completed", {{8}}, {{6}}).dump(),
             DumpBuilder(1, 2, version)
                 .collective("all_to_all", "completed", {{rank1_sends}}, {{6}})
                 .dump()});
    };
    EXPECT_TRUE(run("2.10", 4).findings.empty());  // 12 sent, 12 received
    const FlightRecorderReport wrong = run("2.10", 8);
    ASSERT_EQ(kinds(wrong), std::vector<std::string>{"size_mismatch"});
    EXPECT_TRUE(wrong.mismatch);
    EXPECT_EQ(wrong.findings[0].ranks, (std::vector<int>{0, 1}));
    EXPECT_EQ(wrong.findings[0].message,
              "process group '0' (default_pg) collective #1 (nccl:all_to_all): its ranks send 16 "
              "elements in all but receive 12 elements; some rank's sizes are wrong");
    // Dumps before 2.4 did not record all_to_all sizes: nothing to check, as in fr_trace.
    EXPECT_TRUE(run("2.3", 8).findings.empty());
}

// A two-stage pipeline's forward transfers from rank 0 to rank 1: six sends and six receives
// (sizes 1 to 6, all completed but, with `hang`, the last), of which rank 1 kept the last three.
std::vector<FlightRecorderDump> wrapped_pipeline(bool hang) {
    DumpBuilder sender(0, 2);
    DumpBuilder receiver(1, 2);
    for (std::int64_t k = 1; k <= 6; ++k) {
        const std::string state = hang && k == 6 ? "started" : "completed";
        sender.transfer("send 0->1", state, {{k}});
        receiver.transfer("recv 1<-0", state, {{k}});
    }
    receiver.lose_oldest(3);
    return {sender.dump(), receiver.dump()};
}

TEST(FlightRecorderMatching, TransfersOfAWrappedRankAreLinedUpAtTheLastCompletedOne) {
    const FlightRecorderReport report = analyse_flight_recorder(wrapped_pipeline(false));
    EXPECT_TRUE(report.findings.empty()) << report.text();
    ASSERT_EQ(report.transfers.size(), 3u);
    EXPECT_EQ(report.transfers[0].send_step, 3);  // rank 0's 4th send with rank 1's first entry
    EXPECT_EQ(report.transfers[0].recv_step, 0);
    EXPECT_NE(report.text().find("3 older entr(ies) whose partner was lost are not paired"),
              std::string::npos)
        << report.text();
}

TEST(FlightRecorderMatching, AWrappedRanksStuckTransferPairsWithItsPartner) {
    const FlightRecorderReport report = analyse_flight_recorder(wrapped_pipeline(true));
    EXPECT_FALSE(report.mismatch) << report.text();
    ASSERT_TRUE(report.hang);
    const HangReport& hang = report.hang_report;
    ASSERT_EQ(hang.cycle.size(), 2u) << report.text();
    EXPECT_EQ(hang.cycle[0].rank, 0);
    EXPECT_EQ(hang.cycle[0].step, 5);
    EXPECT_EQ(hang.cycle[0].holder_step, 2);  // rank 1's third surviving entry: the 6th recv
}

TEST(FlightRecorderMatching, ARankWithoutADumpIsNamedAsTheOneTheOthersWaitFor) {
    // Ranks 0 and 1 both sit in all_reduce #2; rank 2 left no dump.
    std::vector<FlightRecorderDump> dumps;
    for (int rank = 0; rank < 2; ++rank)
        dumps.push_back(DumpBuilder(rank, 3)
                            .collective("all_reduce", "completed", {{4}}, {{4}})
                            .collective("all_reduce", "started", {{4}}, {{4}})
                            .dump());
    const FlightRecorderReport report = analyse_flight_recorder(dumps);
    ASSERT_TRUE(report.hang);
    const HangReport& hang = report.hang_report;
    ASSERT_EQ(hang.cycle.size(), 1u) << report.text();
    EXPECT_EQ(hang.cycle[0].holder_rank, 2);
    EXPECT_FALSE(hang.closes_cycle());
    EXPECT_EQ(report.hang_headline, "wait chain rank 0 -> rank 2, which left no dump");
    EXPECT_EQ(hang.text("the dumps show a hang"),
              "the dumps show a hang: a rank waits for an action that never runs\n"
              "  rank 0 is stuck at step 1 (nccl:all_reduce [pg 0, #2]): it needs "
              "nccl:all_reduce [pg 0, #2] on rank 2, which rank 2 may not have posted: it left "
              "no dump\n"
              " also stuck:\n"
              "  rank 1 is stuck at step 1 (nccl:all_reduce [pg 0, #2]): it needs "
              "nccl:all_reduce [pg 0, #2] on rank 2, which rank 2 may not have posted: it left "
              "no dump");
}

TEST(FlightRecorderMatching, DumpsOfDifferentVersionsAreRefusedNewerOnesReadWithANote) {
    const std::string dir = ::testing::TempDir();
    const auto write = [&](const std::string& name, const std::string& version) {
        const std::string path = dir + name;
        std::FILE* file = std::fopen(path.c_str(), "w");
        const std::string text =
            json{{"version", version},
                 {"pg_config", {{"0", {{"name", "0"}, {"desc", "x"}, {"ranks", "[0, 1]"}}}}}}
                .dump();
        std::fwrite(text.data(), 1, text.size(), file);
        std::fclose(file);
        return path;
    };
    const std::string old_rank = write("mixed_rank_0.json", "2.4");
    const std::string new_rank = write("mixed_rank_1.json", "2.10");
    EXPECT_EQ(testing::thrown_message<ImportError>(
                  [&] {
                      read_flight_recorder_dumps({old_rank, new_rank});
                  },
                  "no error"),
              new_rank + " is a version 2.10 dump but " + old_rank +
                  " is version 2.4: the ranks of one job write one version; are these dumps "
                  "from different runs?");
    const FlightRecorderDump newer = DumpBuilder(0, 1, "2.11").dump();
    ASSERT_EQ(newer.notes.size(), 1u);
    EXPECT_EQ(newer.notes[0],
              "rank 0: dump version 2.11 is newer than those pipelens was checked against (2.0 "
              "to 2.10); its fields were read as 2.10's");
}

TEST(FlightRecorderMatching, AGroupStatusThatCannotBeReadIsLeftOutNotFatal) {
    const json top = {
        {"version", "2.10"},
        {"rank", 0},
        {"pg_config", {{"0", {{"name", "0"}, {"desc", "x"}, {"ranks", "[0]"}}}}},
        {"pg_status",
         {{"0", {{"last_enqueued_collective", "n/a"}}}, {"1", {{"last_enqueued_collective", 3}}}}}};
    const FlightRecorderDump dump = parse_flight_recorder_dump(top.dump(), "d.json");
    ASSERT_EQ(dump.pg_status.size(), 1u);
    EXPECT_EQ(dump.pg_status[0].last_enqueued_collective, 3);
    ASSERT_EQ(dump.notes.size(), 1u);
    EXPECT_EQ(dump.notes[0],
              "d.json: pg_status '0': `last_enqueued_collective` should be an integer, not "
              "\"n/a\"; that group's status is left out");
}

// Rank 1 was dumped after its third all_reduce; rank 0 went on to a fourth and a send to rank 1,
// and both completed, which they cannot without rank 1: its dump is older, nobody is missing.
TEST(FlightRecorderMatching, OpsCompletedAfterAPeersDumpWasTakenAreANoteNotFindings) {
    DumpBuilder rank0(0, 2), rank1(1, 2);
    for (int i = 0; i < 3; ++i) {
        rank0.collective("all_reduce", "completed", {{8}}, {{8}});
        rank1.collective("all_reduce", "completed", {{8}}, {{8}});
    }
    rank0.collective("all_reduce", "completed", {{8}}, {{8}})
        .transfer("send 0->1", "completed", {{4}});
    const FlightRecorderReport report = analyse_flight_recorder({rank0.dump(), rank1.dump()});
    EXPECT_FALSE(report.hang);
    EXPECT_TRUE(report.findings.empty()) << report.text();
    ASSERT_EQ(report.notes.size(), 1u) << report.text();
    EXPECT_EQ(report.notes[0],
              "rank 1's dump ends before 2 op(s) that other ranks completed with it (the first: "
              "process group '0' (default_pg) collective #4 (nccl:all_reduce)): it was dumped "
              "earlier, so they are not findings");

    // Not completed, the same op is what a rank that never posted leaves: a finding.
    DumpBuilder waiting(0, 2);
    for (int i = 0; i < 3; ++i)
        waiting.collective("all_reduce", "completed", {{8}}, {{8}});
    waiting.collective("all_reduce", "started", {{8}}, {{8}});
    EXPECT_EQ(kinds(analyse_flight_recorder({waiting.dump(), rank1.dump()})),
              (std::vector<std::string>{"missing_rank", "hang"}));
}

// A pipeline of 4 whose rank 2 died and left no dump: rank 0 waits on rank 1, which waits on
// rank 2. Rank 1 never posted what rank 0 needs, but it is stuck, so the chain goes on to the
// rank that holds everyone.
TEST(FlightRecorderMatching, AHangChainRunsThroughStuckRanksToTheRankWithoutADump) {
    DumpBuilder rank0(0, 4), rank1(1, 4), rank3(3, 4);
    rank0.transfer("send 0->1", "completed", {{4}}).transfer("recv 0<-1", "started", {{4}});
    rank1.transfer("recv 1<-0", "completed", {{4}})
        .transfer("send 1->2", "completed", {{4}})
        .transfer("recv 1<-2", "started", {{4}});
    rank3.transfer("send 3->2", "started", {{4}});
    const FlightRecorderReport report =
        analyse_flight_recorder({rank0.dump(), rank1.dump(), rank3.dump()});
    ASSERT_TRUE(report.hang);
    EXPECT_FALSE(report.wait_cycle);
    EXPECT_EQ(report.hang_headline, "wait chain rank 0 -> rank 1 -> rank 2, which left no dump");
    const std::string text = report.text();
    EXPECT_NE(text.find("the dumps show a hang: wait chain rank 0 -> rank 1 -> rank 2, which "
                        "left no dump\n"
                        "  rank 0 is stuck at step 1 (nccl:recv 0<-1 [pg 0, p2p #2]): it needs "
                        "nccl:send 1->0 on rank 1, which rank 1 never posted (it is stuck at step "
                        "2)\n"
                        "  rank 1 is stuck at step 2 (nccl:recv 1<-2 [pg 0, p2p #3]): it needs "
                        "nccl:send 2->1 on rank 2, which rank 2 may not have posted: it left no "
                        "dump\n"
                        " also stuck:\n"
                        "  rank 3 is stuck at step 0"),
              std::string::npos)
        << text;
}

// Pipeline groups {0, 2} and {1, 3}: rank 3 waits for a second send from rank 1, which is stuck
// in the default group's all_reduce that rank 3 never reached. Neither op was posted, yet it is
// a deadlock, and the headline says so.
TEST(FlightRecorderMatching, StuckRanksWaitingForOpsTheOtherNeverPostedFormACycle) {
    std::vector<DumpBuilder> ranks;
    for (int rank = 0; rank < 4; ++rank) {
        ranks.emplace_back(rank, 4);
        ranks.back().group("1", "[0, 2]").group("2", "[1, 3]");
        ranks.back().collective("all_reduce", "completed", {{8}}, {{8}});
    }
    ranks[0].transfer_in("1", "send 0->1", "completed");
    ranks[2].transfer_in("1", "recv 1<-0", "completed");
    ranks[1].transfer_in("2", "send 0->1", "completed");
    ranks[3].transfer_in("2", "recv 1<-0", "completed").transfer_in("2", "recv 1<-0", "started");
    for (const std::size_t rank : {0u, 1u, 2u})
        ranks[rank].collective("all_reduce", "started", {{8}}, {{8}});
    std::vector<FlightRecorderDump> dumps;
    for (const DumpBuilder& builder : ranks)
        dumps.push_back(builder.dump());
    const FlightRecorderReport report = analyse_flight_recorder(dumps);
    ASSERT_TRUE(report.hang);
    EXPECT_TRUE(report.wait_cycle);
    EXPECT_FALSE(report.hang_report.closes_cycle());  // no op of the cycle was posted
    EXPECT_EQ(report.hang_headline, "wait cycle rank 1 -> rank 3 -> rank 1");
    const std::string text = report.text();
    EXPECT_NE(text.find("the dumps show a hang: wait cycle rank 1 -> rank 3 -> rank 1\n"
                        "  rank 1 is stuck at step 2 (nccl:all_reduce [pg 0, #2]): it needs "
                        "nccl:all_reduce [pg 0, #2] on rank 3, which rank 3 never posted (it is "
                        "stuck at step 2)\n"
                        "  rank 3 is stuck at step 2 (nccl:recv 1<-0 [pg 2, p2p #2]): it needs "
                        "nccl:send 0->1 on rank 1, which rank 1 never posted (it is stuck at step "
                        "2)\n"
                        " also stuck:"),
              std::string::npos)
        << text;
}

}  // namespace
}  // namespace pipelens::import
