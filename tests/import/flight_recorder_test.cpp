// Flight-recorder dumps: reading both encodings (tests/data/flight_recorder, written from
// PyTorch's dump format by make_dumps.py), refusing bad files with errors naming them, the
// fr_trace-style analysis (collective and transfer matching, stuck ops, the wait chain) and the
// run written into a trace.
#include <gtest/gtest.h>

#include <unistd.h>

#include <limits>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/flight_recorder_analysis.hpp"
#include "engine/import/flight_recorder_dump.hpp"
#include "engine/import/flight_recorder_import.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/import/rank_file_name.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/thrown_message.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::import {
namespace {

const std::string kData = std::string(PIPELENS_SOURCE_DIR) + "/tests/data/flight_recorder/";

std::string pickle_path(const std::string& name, int rank) {
    return kData + name + "/pickle/nccl_trace_rank_" + std::to_string(rank);
}
std::string json_path(const std::string& name, int rank) {
    return kData + name + "/json/nccl_trace_rank_" + std::to_string(rank) + ".json";
}

std::vector<FlightRecorderDump> read_case(const std::string& name, int ranks, bool json = false) {
    std::vector<std::string> paths;
    for (int rank = ranks - 1; rank >= 0; --rank)  // out of order: the reader sorts by rank
        paths.push_back(json ? json_path(name, rank) : pickle_path(name, rank));
    return read_flight_recorder_dumps(paths);
}

std::string error_of(const std::vector<std::string>& paths) {
    return testing::thrown_message<ImportError>([&] { read_flight_recorder_dumps(paths); },
                                                "no error");
}

constexpr std::int64_t kBase = 1'700'000'000'000'000'000;  // make_dumps.py's BASE_NS
constexpr std::int64_t kMs = 1'000'000;

TEST(FlightRecorderDump, ReadsTheTorchPickleWithPyTorchsFields) {
    const auto dumps = read_case("p2p_clean", 2);
    ASSERT_EQ(dumps.size(), 2u);
    const FlightRecorderDump& dump = dumps[0];
    EXPECT_EQ(dump.rank, 0);
    EXPECT_EQ(dump.version, "2.10");
    ASSERT_EQ(dump.pg_config.size(), 1u);
    EXPECT_EQ(dump.pg_config[0].name, "0");
    EXPECT_EQ(dump.pg_config[0].desc, "default_pg");
    EXPECT_EQ(dump.pg_config[0].ranks, (std::vector<int>{0, 1}));
    ASSERT_EQ(dump.pg_status.size(), 1u);
    EXPECT_EQ(dump.pg_status[0].last_completed_collective, 1);
    ASSERT_EQ(dump.entries.size(), 4u);
    const FlightRecorderEntry& send = dump.entries[0];
    EXPECT_EQ(send.record_id, 0);
    EXPECT_EQ(send.pg_name, "0");
    EXPECT_EQ(send.pg_desc, "default_pg");
    EXPECT_EQ(send.profiling_name, "nccl:send 0->1");
    EXPECT_EQ(send.op.type, "send");
    EXPECT_EQ(send.op.src, 0);
    EXPECT_EQ(send.op.dst, 1);
    EXPECT_EQ(send.peer_rank, 1);
    EXPECT_EQ(send.p2p_seq_id, 1);
    EXPECT_EQ(send.collective_seq_id, 0);
    EXPECT_EQ(send.time_created_ns, kBase + kMs);
    EXPECT_EQ(send.time_discovered_started_ns, kBase + kMs + 2000);
    EXPECT_EQ(send.time_discovered_completed_ns, kBase + kMs + 500'000);
    EXPECT_EQ(send.duration_ms, 0.25);
    EXPECT_EQ(send.state, EntryState::completed);
    EXPECT_EQ(send.input_sizes, (std::vector<std::vector<std::int64_t>>{{4, 8}}));
    EXPECT_EQ(send.input_dtypes, (std::vector<std::string>{"Float"}));
    EXPECT_TRUE(send.is_p2p);
    EXPECT_TRUE(send.retired);
    EXPECT_EQ(send.timeout_ms, 600000);
    ASSERT_EQ(send.frames.size(), 1u);
    EXPECT_EQ(send.frames[0].name, "train_step");
    EXPECT_EQ(send.frames[0].line, 42);
    EXPECT_EQ(dump.entries[3].profiling_name, "nccl:all_reduce");
    EXPECT_EQ(dump.entries[3].collective_seq_id, 1);
    EXPECT_FALSE(dump.entries[3].is_p2p);
}

TEST(FlightRecorderDump, JsonTwinsAndPythonPicklesReadTheSame) {
    for (const std::string name : {"p2p_clean", "recv_never_posted", "recv_recv_cycle",
                                   "collective_size_mismatch", "collective_missing_rank"}) {
        const int ranks = name == "collective_missing_rank" ? 3 : 2;
        const auto pickled = read_case(name, ranks);
        const auto json = read_case(name, ranks, true);
        ASSERT_EQ(pickled.size(), json.size());
        for (std::size_t r = 0; r < pickled.size(); ++r) {
            ASSERT_EQ(pickled[r].entries.size(), json[r].entries.size()) << name;
            EXPECT_EQ(pickled[r].pg_status[0].last_started_collective,
                      json[r].pg_status[0].last_started_collective);
            for (std::size_t i = 0; i < pickled[r].entries.size(); ++i) {
                const auto& a = pickled[r].entries[i];
                const auto& b = json[r].entries[i];
                EXPECT_EQ(a.profiling_name, b.profiling_name) << name;
                EXPECT_EQ(a.state, b.state) << name;
                EXPECT_EQ(a.time_created_ns, b.time_created_ns) << name;
                // None in the pickle, 0 in the JSON: both mean "not seen".
                EXPECT_EQ(a.time_discovered_started_ns, b.time_discovered_started_ns) << name;
                EXPECT_EQ(a.time_discovered_completed_ns, b.time_discovered_completed_ns);
                EXPECT_EQ(a.input_sizes, b.input_sizes) << name;
                EXPECT_EQ(a.output_dtypes, b.output_dtypes) << name;
                EXPECT_EQ(a.peer_rank, b.peer_rank) << name;
            }
        }
    }
    // The scheduled send of recv_recv_cycle has neither time.
    const auto cycle = read_case("recv_recv_cycle", 2, true);
    EXPECT_EQ(cycle[0].entries[2].state, EntryState::scheduled);
    EXPECT_FALSE(cycle[0].entries[2].time_discovered_started_ns.has_value());
}

TEST(FlightRecorderDump, RankComesFromTheFileNameAsPyTorchWritesIt) {
    constexpr RankNaming dumps = RankNaming::rank_word_or_trailing;
    EXPECT_EQ(rank_from_file_name("/tmp/dumps/nccl_trace_rank_12", dumps), 12);
    EXPECT_EQ(rank_from_file_name("/tmp/fr_5", dumps),
              5);  // TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/tmp/fr_
    EXPECT_EQ(rank_from_file_name("rank3.json", dumps), 3);
    EXPECT_EQ(rank_from_file_name("rank_7.pkl", dumps), 7);
    EXPECT_EQ(rank_from_file_name("dumps1/trace", dumps), std::nullopt);
    // Every trailing digit counts: a timestamp's last nine once made rank 732051234 (the dump
    // reader refuses a rank no trace holds). One past int reads as the largest int.
    EXPECT_EQ(rank_from_file_name("fr_dump_123456789", dumps), 123456789);
    EXPECT_EQ(rank_from_file_name("fr_dump_1732051234.json", dumps), 1732051234);
    EXPECT_EQ(rank_from_file_name("fr_dump_17320512340000000000", dumps),
              std::numeric_limits<int>::max());
}

// A dump written as rank 0's file under a folder of its own.
std::filesystem::path dump_file(const std::string& folder, const nlohmann::json& dump) {
    const auto directory = std::filesystem::temp_directory_path() /
                           ("pipelens_fr_" + std::to_string(::getpid()) + "_" + folder);
    std::filesystem::create_directories(directory);
    const auto path = directory / "nccl_trace_rank_0.json";
    std::ofstream(path) << dump.dump();
    return path;
}

// A time before the epoch or a duration that is no number is damage: it once became a step of
// 1.7e9 s.
TEST(FlightRecorderDump, TimesThatAreNoTimesAreRefusedNamingEntryAndField) {
    nlohmann::json dump = nlohmann::json::parse(std::ifstream(json_path("p2p_clean", 0)));
    dump["entries"][0]["time_created_ns"] = -5;
    const auto negative = dump_file("negative", dump);
    EXPECT_EQ(error_of({negative.string()}),
              negative.string() +
                  ": entry 0: `time_created_ns` is -5, which is no time (nanoseconds since the "
                  "epoch)");
    dump = nlohmann::json::parse(std::ifstream(json_path("p2p_clean", 0)));
    dump["entries"][1]["duration_ms"] = -2.5;
    const auto backwards = dump_file("backwards", dump);
    EXPECT_EQ(error_of({backwards.string()}),
              backwards.string() + ": entry 1: `duration_ms` is -2.5, which is no duration");
    std::filesystem::remove_all(negative.parent_path());
    std::filesystem::remove_all(backwards.parent_path());
}

// An op type pipelens has no rules for (a newer PyTorch's, or a misspelt one) is matched by its
// sequence id, and said once per rank: it once passed with no word, its sizes unchecked.
TEST(FlightRecorderDump, AnOpTypeWithoutRulesIsNoted) {
    nlohmann::json dump = nlohmann::json::parse(std::ifstream(json_path("p2p_clean", 0)));
    for (nlohmann::json& entry : dump["entries"])
        if (entry["profiling_name"] == "nccl:all_reduce")
            entry["profiling_name"] = "nccl:fancy_new_collective";
    const auto renamed = dump_file("renamed", dump);
    const std::vector<FlightRecorderDump> dumps = read_flight_recorder_dumps({renamed.string()});
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_EQ(dumps[0].notes,
              (std::vector<std::string>{
                  "rank 0: op 'nccl:fancy_new_collective' is not one pipelens knows: matched by "
                  "sequence id, its sizes not checked"}));
    EXPECT_TRUE(read_case("p2p_clean", 2)[0].notes.empty());
    std::filesystem::remove_all(renamed.parent_path());
}

TEST(FlightRecorderDump, BadFilesAreRefusedNamingFileAndPlace) {
    const std::string version = kData + "bad/unknown_version_rank0.pkl";
    EXPECT_EQ(error_of({version}),
              version +
                  ": flight-recorder dump version \"3.0\" is not one pipelens reads (2.N: the "
                  "format PyTorch's FlightRecorder has written since 2.0)");
    const std::string global = kData + "bad/global_rank0.pkl";
    EXPECT_EQ(error_of({global}), global +
                                      ": byte 2: pickle opcode 0x63 (GLOBAL) is not "
                                      "allowed in a flight-recorder dump");
    const std::string truncated = kData + "bad/truncated_rank0.pkl";
    const std::string error = error_of({truncated});
    EXPECT_EQ(error.rfind(truncated + ": byte ", 0), 0u) << error;
    EXPECT_NE(error.find("(truncated file?)"), std::string::npos) << error;
    EXPECT_EQ(error_of({pickle_path("p2p_clean", 0), json_path("p2p_clean", 0)}),
              pickle_path("p2p_clean", 0) + " and " + json_path("p2p_clean", 0) +
                  " both hold rank 0's dump; give one per rank");
}

TEST(FlightRecorderDump, EntryErrorsNameTheEntryAndKey) {
    const std::string text = R"({"version": "2.4", "rank": 2, "pg_config": {"0": {"name": "0",
        "desc": "default_pg", "ranks": "[0, 1, 2]"}}, "entries": [{"record_id": 0,
        "process_group": ["0", "default_pg"], "collective_seq_id": 1, "profiling_name":
        "nccl:send 2->5", "time_created_ns": 1, "state": "scheduled"}]})";
    try {
        parse_flight_recorder_dump(text, "x.json");
        FAIL() << "no error";
    } catch (const ImportError& error) {
        EXPECT_STREQ(error.what(),
                     "x.json: entry 0: `profiling_name` names rank 5 of process "
                     "group '0', which has 3 ranks");
    }
    try {
        parse_flight_recorder_dump(R"({"version": "2.4", "pg_config": {}})", "nameless.json");
        FAIL() << "no error";
    } catch (const ImportError& error) {
        EXPECT_NE(std::string(error.what()).find("nameless.json: cannot tell which rank"),
                  std::string::npos);
    }
    try {
        parse_flight_recorder_dump(R"({"version": "2.10", "rank": 1e999})", "big.json");
        FAIL() << "no error";
    } catch (const ImportError& error) {
        EXPECT_EQ(std::string(error.what()).rfind("big.json: not valid JSON: number overflow", 0),
                  0u)
            << error.what();
    }
    // A sequence number the recorder counts from 0 cannot be negative.
    std::string negative = text;
    negative.replace(negative.find(R"("collective_seq_id": 1)"), 22, R"("collective_seq_id": -5)");
    EXPECT_EQ(testing::thrown_message<ImportError>(
                  [&] { parse_flight_recorder_dump(negative, "x.json"); }, "no error"),
              "x.json: entry 0: `collective_seq_id` is -5, but the recorder counts it from 0");
    // The dump's own `rank` wins over the file name; no entries key means none recorded.
    const FlightRecorderDump dump = parse_flight_recorder_dump(
        R"({"version": "2.10", "rank": 4, "pg_config": {}})", "nccl_trace_rank_1");
    EXPECT_EQ(dump.rank, 4);
    EXPECT_TRUE(dump.entries.empty());
}

// A dump read as another rank's (files swapped or renamed) once made a job whose ranks send to
// themselves or join groups they are not in, and analysed it as clean: refused, naming the op.
TEST(FlightRecorderDump, ADumpWhoseOpsAreAnotherRanksIsRefused) {
    std::ifstream file(json_path("p2p_clean", 0));
    const std::string rank0((std::istreambuf_iterator<char>(file)), {});
    EXPECT_EQ(parse_flight_recorder_dump(rank0, "nccl_trace_rank_0").rank, 0);
    EXPECT_EQ(testing::thrown_message<ImportError>(
                  [&] { parse_flight_recorder_dump(rank0, "nccl_trace_rank_1"); }, "no error"),
              "nccl_trace_rank_1: entry 0: `profiling_name` 'nccl:send 0->1' is posted by rank 0, "
              "but the dump is rank 1 (by its file name): is the file misnamed, or from another "
              "job?");
    EXPECT_EQ(testing::thrown_message<ImportError>(
                  [&] { parse_flight_recorder_dump(rank0, "nccl_trace_rank_7"); }, "no error"),
              "nccl_trace_rank_7: entry 0: `process_group` is '0', whose ranks are [0, 1], but "
              "the dump is rank 7 (by its file name): is the file misnamed, or from another job?");
    nlohmann::json keyed = nlohmann::json::parse(rank0);
    keyed["rank"] = 1;
    EXPECT_NE(testing::thrown_message<ImportError>(
                  [&] { parse_flight_recorder_dump(keyed.dump(), "dump.json"); }, "no error")
                  .find("but the dump is rank 1 (by its `rank` key)"),
              std::string::npos);
}

// A process group's members are a set; a rank listed twice is damage, named with the group.
TEST(FlightRecorderDump, RankListedTwiceInAGroupIsRefused) {
    for (const std::string ranks : {R"("[0, 1, 0]")", "[2, 2]"}) {
        const std::string text = R"({"version": "2.4", "rank": 0, "pg_config": {"7": {"name": "7",
            "desc": "default_pg", "ranks": )" +
                                 ranks + "}}}";
        try {
            parse_flight_recorder_dump(text, "x.json");
            FAIL() << "no error for " << ranks;
        } catch (const ImportError& error) {
            EXPECT_STREQ(error.what(), ranks == "[2, 2]"
                                           ? "x.json: pg_config '7': `ranks` lists rank 2 twice"
                                           : "x.json: pg_config '7': `ranks` lists rank 0 twice");
        }
    }
}

// Shape and dtype lists: a non-list and a list with a misfit item are refused with the key.
TEST(FlightRecorderDump, ListFieldsRefuseNonListsAndMisfitItems) {
    const auto entry_error = [](const std::string& field) {
        const std::string text = R"({"version": "2.4", "rank": 0, "pg_config": {"0": {"name":
            "0", "desc": "default_pg", "ranks": "[0, 1]"}}, "entries": [{"record_id": 0,
            "process_group": ["0", "default_pg"], "collective_seq_id": 1, "profiling_name":
            "nccl:all_reduce", "time_created_ns": 1, "state": "scheduled", )" +
                                 field + "}]}";
        try {
            parse_flight_recorder_dump(text, "x.json");
        } catch (const ImportError& error) {
            return std::string(error.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(entry_error(R"("input_sizes": 3)"),
              "x.json: entry 0: `input_sizes` should be a list of tensor shapes");
    EXPECT_EQ(entry_error(R"("input_sizes": [[2, 3], 4])"),
              "x.json: entry 0: `input_sizes` should be a list of tensor shapes, not a list of 2 "
              "item(s)");
    EXPECT_EQ(entry_error(R"("output_dtypes": "f32")"),
              "x.json: entry 0: `output_dtypes` should be a list of strings");
    EXPECT_EQ(
        entry_error(R"("output_dtypes": ["f32", 1])"),
        "x.json: entry 0: `output_dtypes` should be a list of strings, not a list of 2 item(s)");
}

TEST(FlightRecorderAnalysis, CleanExchangeMatchesEveryTransferAndFindsNothing) {
    const FlightRecorderReport report = analyse_flight_recorder(read_case("p2p_clean", 2));
    EXPECT_FALSE(report.hang);
    EXPECT_FALSE(report.mismatch);
    EXPECT_TRUE(report.findings.empty());
    ASSERT_EQ(report.transfers.size(), 3u);
    EXPECT_EQ(report.transfers[0].send_rank, 0);
    EXPECT_EQ(report.transfers[0].send_step, 0);
    EXPECT_EQ(report.transfers[0].recv_rank, 1);
    EXPECT_EQ(report.transfers[0].recv_step, 0);
    EXPECT_EQ(report.transfers[1].send_rank, 0);  // 0 -> 1 pairs come first
    EXPECT_EQ(report.transfers[1].send_step, 2);
    EXPECT_EQ(report.transfers[2].send_rank, 1);
    EXPECT_EQ(report.transfers[2].recv_step, 1);
    ASSERT_EQ(report.ranks.size(), 2u);
    EXPECT_EQ(report.ranks[0].ops, 4);
    EXPECT_EQ(report.ranks[0].completed, 4);
    EXPECT_EQ(report.ranks[0].last_completed_step, 3);
    EXPECT_EQ(report.ranks[0].last_completed, "nccl:all_reduce [pg 0, #1]");
    EXPECT_EQ(report.ranks[0].first_pending_step, -1);
    EXPECT_TRUE(report.hang_report.cycle.empty());
    const std::string text = report.text();
    EXPECT_NE(text.find("no hang and no mismatch"), std::string::npos) << text;
}

// Rank 0 waits in a send for a recv rank 1 never posted, and rank 1 in an all_reduce rank 0 never
// reached: each is stuck before what the other needs, a deadlock though neither op was posted.
TEST(FlightRecorderAnalysis, RecvNeverPostedByAStuckRankClosesAWaitCycle) {
    const FlightRecorderReport report = analyse_flight_recorder(read_case("recv_never_posted", 2));
    EXPECT_TRUE(report.hang);
    EXPECT_FALSE(report.mismatch);
    ASSERT_EQ(report.findings.size(), 4u);
    EXPECT_EQ(report.findings[0].kind, "missing_rank");
    EXPECT_EQ(report.findings[0].ranks, std::vector<int>{0});
    EXPECT_EQ(report.findings[0].seq_id, 1);
    EXPECT_EQ(report.findings[0].message,
              "process group '0' (default_pg) collective #1 (nccl:all_reduce): rank(s) 0 never "
              "posted it; rank(s) 1 did");
    const FlightRecorderFinding& send = report.findings[1];
    EXPECT_EQ(send.kind, "unmatched_send");
    EXPECT_EQ(send.rank, 0);
    EXPECT_EQ(send.step, 1);
    EXPECT_EQ(send.seq_id, 2);
    EXPECT_EQ(send.ranks, (std::vector<int>{0, 1}));
    EXPECT_EQ(send.expected, "nccl:recv 1<-0 on rank 1");
    EXPECT_EQ(send.actual, "rank 1 posted 1 matching recv(s)");
    EXPECT_EQ(send.message,
              "process group '0' (default_pg): rank 0's nccl:send 0->1 [pg 0, p2p #2] (step 1, "
              "send 2 from rank 0 to rank 1) has no partner: rank 1 posted only 1 recv(s) from "
              "rank 0");
    EXPECT_EQ(report.findings[2].kind, "hang");
    EXPECT_EQ(report.findings[2].rank, 0);
    EXPECT_EQ(report.findings[2].message,
              "rank 0 is stuck at step 1 (nccl:send 0->1 [pg 0, p2p #2], started): it waits for "
              "nccl:recv 1<-0 on rank 1, which rank 1 never posted (it is stuck at step 1)");
    EXPECT_EQ(report.findings[3].rank, 1);

    EXPECT_EQ(report.ranks[0].last_completed_step, 0);
    EXPECT_EQ(report.ranks[0].first_pending_step, 1);
    EXPECT_EQ(report.ranks[0].first_pending, "nccl:send 0->1 [pg 0, p2p #2], started");
    EXPECT_EQ(report.ranks[1].first_pending, "nccl:all_reduce [pg 0, #1], started");

    const HangReport& hang = report.hang_report;
    ASSERT_EQ(hang.cycle.size(), 2u);
    EXPECT_TRUE(report.wait_cycle);
    EXPECT_FALSE(hang.closes_cycle());  // no op of the cycle was posted
    EXPECT_EQ(hang.cycle[0].rank, 0);
    EXPECT_EQ(hang.cycle[0].holder_rank, 1);
    EXPECT_EQ(hang.cycle[0].holder_step, -1);
    EXPECT_EQ(hang.cycle[1].rank, 1);
    EXPECT_EQ(hang.cycle[1].holder_rank, 0);
    ASSERT_EQ(hang.blocked.size(), 2u);
    const std::string text = report.text();
    EXPECT_NE(text.find("the dumps show a hang: wait cycle rank 0 -> rank 1 -> rank 0\n"
                        "  rank 0 is stuck at step 1 (nccl:send 0->1 [pg 0, p2p #2]): it needs "
                        "nccl:recv 1<-0 on rank 1, which rank 1 never posted (it is stuck at "
                        "step 1)\n"
                        "  rank 1 is stuck at step 1 (nccl:all_reduce [pg 0, #1]): it needs "
                        "nccl:all_reduce [pg 0, #1] on rank 0, which rank 0 never posted (it is "
                        "stuck at step 1)"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("also stuck"), std::string::npos) << text;
}

TEST(FlightRecorderAnalysis, RanksWaitingOnEachOthersRecvFormACycle) {
    const FlightRecorderReport report = analyse_flight_recorder(read_case("recv_recv_cycle", 2));
    EXPECT_TRUE(report.hang);
    EXPECT_FALSE(report.mismatch);
    ASSERT_EQ(report.findings.size(), 2u);  // both transfers pair up; two stuck ranks
    EXPECT_EQ(report.findings[0].kind, "hang");
    EXPECT_EQ(report.transfers.size(), 2u);
    const HangReport& hang = report.hang_report;
    ASSERT_EQ(hang.cycle.size(), 2u);
    EXPECT_TRUE(hang.closes_cycle());
    EXPECT_EQ(hang.cycle[0].rank, 0);
    EXPECT_EQ(hang.cycle[0].step, 1);
    EXPECT_EQ(hang.cycle[0].holder_rank, 1);
    EXPECT_EQ(hang.cycle[0].holder_step, 2);
    EXPECT_EQ(hang.cycle[1].rank, 1);
    EXPECT_EQ(hang.cycle[1].holder_rank, 0);
    EXPECT_EQ(hang.cycle[1].holder_step, 2);
    const std::string expected =
        "the dumps show a hang: wait cycle rank 0 -> rank 1 -> rank 0\n"
        "  rank 0 is stuck at step 1 (nccl:recv 0<-1 [pg 0, p2p #1]): it needs nccl:send 1->0 "
        "[pg 0, p2p #2] on rank 1, which rank 1 posted at step 2 but is stuck before it, at "
        "step 1\n"
        "  rank 1 is stuck at step 1 (nccl:recv 1<-0 [pg 0, p2p #1]): it needs nccl:send 0->1 "
        "[pg 0, p2p #2] on rank 0, which rank 0 posted at step 2 but is stuck before it, at "
        "step 1";
    EXPECT_EQ(hang.text("the dumps show a hang"), expected);
    EXPECT_NE(report.text().find(expected), std::string::npos) << report.text();
    EXPECT_EQ(report.text().find("every rank of this cycle"), std::string::npos);
    EXPECT_EQ(report.ranks[0].last_completed_step, 0);
    EXPECT_EQ(report.ranks[1].first_pending_step, 1);
    // The default subject is still the schedule check's.
    EXPECT_EQ(hang.text().rfind("schedule can hang: wait cycle rank 0 -> rank 1 -> rank 0", 0), 0u);
}

TEST(FlightRecorderAnalysis, CollectiveSizeMismatchNamesGroupSeqAndSizes) {
    const FlightRecorderReport report =
        analyse_flight_recorder(read_case("collective_size_mismatch", 2));
    EXPECT_TRUE(report.mismatch);
    EXPECT_TRUE(report.hang);
    ASSERT_FALSE(report.findings.empty());
    const FlightRecorderFinding& finding = report.findings[0];
    EXPECT_EQ(finding.kind, "size_mismatch");
    EXPECT_EQ(finding.process_group, "0");
    EXPECT_EQ(finding.seq_id, 2);
    EXPECT_EQ(finding.ranks, (std::vector<int>{0, 1}));
    EXPECT_EQ(finding.rank, 1);
    EXPECT_EQ(finding.step, 1);
    EXPECT_EQ(finding.expected, "[[1024]]");
    EXPECT_EQ(finding.actual, "[[512]]");
    EXPECT_EQ(finding.message,
              "process group '0' (default_pg) collective #2: rank 1's input sizes [[512]] differ "
              "from rank 0's [[1024]]");
    // Both ranks sit in the same collective: each waits for the other to finish it.
    EXPECT_TRUE(report.hang_report.closes_cycle());
    EXPECT_EQ(report.hang_report.cycle.size(), 2u);
    EXPECT_NE(report.text().find("\n every rank of this cycle has posted the op the next one "
                                 "waits for and none completed"),
              std::string::npos)
        << report.text();
}

TEST(FlightRecorderAnalysis, CollectiveARankNeverJoined) {
    const FlightRecorderReport report =
        analyse_flight_recorder(read_case("collective_missing_rank", 3));
    EXPECT_TRUE(report.hang);
    EXPECT_FALSE(report.mismatch);
    const FlightRecorderFinding& finding = report.findings.at(0);
    EXPECT_EQ(finding.kind, "missing_rank");
    EXPECT_EQ(finding.seq_id, 2);
    EXPECT_EQ(finding.ranks, std::vector<int>{2});
    EXPECT_EQ(finding.expected, "ranks 0, 1, 2");
    EXPECT_EQ(finding.actual, "ranks 0, 1");
    EXPECT_EQ(report.ranks[2].first_pending_step, -1);
    EXPECT_EQ(report.ranks[2].last_completed_step, 0);
    const HangReport& hang = report.hang_report;
    ASSERT_EQ(hang.cycle.size(), 1u);
    EXPECT_EQ(hang.cycle[0].needed, "nccl:all_reduce [pg 0, #2] on rank 2");
    EXPECT_EQ(hang.cycle[0].holder_rank, 2);
    EXPECT_EQ(hang.cycle[0].holder_step, -1);
    EXPECT_EQ(hang.blocked.size(), 2u);
}

TEST(FlightRecorderImport, WritesOpsPairsAndFindingsAndFailsAHungRun) {
    const auto dumps = read_case("recv_never_posted", 2);
    const FlightRecorderReport report = analyse_flight_recorder(dumps);
    const auto path = testing::fresh_trace("flight_recorder_hang");
    std::int64_t run_id = 0;
    {
        traces::TraceWriter writer(path);
        run_id = record_flight_recorder(writer, dumps, report);
    }
    traces::TraceReader reader(path);
    const traces::RunRecord run = reader.run(run_id);
    EXPECT_EQ(run.kind, traces::RunKind::real);
    EXPECT_EQ(run.schedule, "flight-recorder");
    EXPECT_EQ(run.pp, 2);
    EXPECT_EQ(run.status, traces::RunStatus::failed);
    EXPECT_EQ(run.failure, report.findings[0].message);
    const auto actions = reader.actions(run_id);
    ASSERT_EQ(actions.size(), 4u);
    const traces::ActionRecord& stuck = actions[1];  // rank 0's second send, in flight
    EXPECT_EQ(stuck.rank, 0);
    EXPECT_EQ(stuck.step, 1);
    EXPECT_EQ(stuck.lane, traces::ActionLane::communication);
    EXPECT_EQ(stuck.kind, static_cast<std::uint8_t>(ActionKind::send_forward));
    EXPECT_EQ(stuck.stage, 1);       // the peer rank
    EXPECT_EQ(stuck.microbatch, 2);  // p2p #2
    EXPECT_EQ(stuck.bytes, 4 * 8 * 4);
    // Named as the op it is, as the findings name it: "1SEND_F2" would call peer rank 1 a
    // stage and the p2p sequence number a microbatch.
    EXPECT_EQ(stuck.label, "nccl:send 0->1 [pg 0, p2p #2]");
    EXPECT_EQ(actions[2].label, "nccl:recv 1<-0 [pg 0, p2p #1]");
    EXPECT_EQ(actions[3].label, "nccl:all_reduce [pg 0, #1]");
    const auto kept = reader.stored_labels(run_id, 0);
    ASSERT_EQ(kept.size(), 2u);  // what the viewer shows, read without the other columns
    EXPECT_EQ(kept[1], (std::pair<std::int32_t, std::string>{1, stuck.label}));
    EXPECT_EQ(stuck.start_ns, kMs);  // rank 0's first op is the run's 0
    // The latest time any dump holds: rank 1's all_reduce seen started (its clock is 37 us on).
    const std::int64_t horizon = kMs + 37'000 + 2000;
    EXPECT_EQ(stuck.end_ns, horizon);
    EXPECT_EQ(actions[0].end_ns, 500'000);
    EXPECT_EQ(actions[0].pair_id, 0);
    const auto pairs = reader.pairs(run_id);
    ASSERT_EQ(pairs.size(), 1u);
    EXPECT_EQ(pairs[0].send_rank, 0);
    EXPECT_EQ(pairs[0].recv_rank, 1);
    EXPECT_EQ(pairs[0].bytes, 128);
    const auto errors = reader.errors(run_id);
    ASSERT_EQ(errors.size(), report.findings.size());
    EXPECT_EQ(errors[1].kind, "unmatched_send");
    EXPECT_EQ(errors[1].rank, 0);
    EXPECT_EQ(errors[1].action, "nccl:send 0->1 [pg 0, p2p #2]");
    EXPECT_EQ(errors[2].kind, "hang");
    EXPECT_EQ(errors[2].started_ns, kMs + 2000);
    EXPECT_EQ(errors[2].time_ns, horizon);
}

TEST(FlightRecorderImport, CleanDumpsMakeAFinishedRun) {
    const auto dumps = read_case("p2p_clean", 2, true);
    const auto path = testing::fresh_trace("flight_recorder_clean");
    std::int64_t run_id = 0;
    {
        traces::TraceWriter writer(path);
        run_id = record_flight_recorder(writer, dumps, analyse_flight_recorder(dumps));
    }
    traces::TraceReader reader(path);
    EXPECT_EQ(reader.run(run_id).status, traces::RunStatus::finished);
    EXPECT_EQ(reader.pairs(run_id).size(), 3u);
    EXPECT_TRUE(reader.errors(run_id).empty());
    EXPECT_EQ(reader.actions(run_id).size(), 8u);
}

TEST(FlightRecorderImport, AnUnreadableFileWritesNothing) {
    const auto path = testing::fresh_trace("flight_recorder_nothing");
    // The order a caller follows: read and analyse everything, then open the trace.
    EXPECT_THROW(
        {
            const auto dumps = read_flight_recorder_dumps(
                {pickle_path("p2p_clean", 0), kData + "bad/truncated_rank0.pkl"});
            traces::TraceWriter writer(path);
            record_flight_recorder(writer, dumps, analyse_flight_recorder(dumps));
        },
        ImportError);
    EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace pipelens::import
