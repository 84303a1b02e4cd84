// Profiler traces of a single-stage schedule, which marks no action (PyTorch's Schedule1F1B):
// the traces PyTorch 2.11 wrote for a pp=2 m=4 and a pp=4 m=8 step (tests/data/pytorch/profiler/
// 1F1B_pp*_cpu, Gloo on CPU) read back into the actions each rank ran, in the order PyTorch's
// runtime loop runs them, and a trace that lost a backward refused with what was expected.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/imported_run.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "tests/import/pytorch_written_fixtures.hpp"
#include "tests/temp_directory.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::import {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> rank_files(const std::string& run, int ranks) {
    return testing::profiler_rank_files(run, ranks);
}

bool have(const std::vector<std::string>& files) {
    for (const std::string& file : files)
        if (!fs::exists(file))
            return false;
    return true;
}

// Schedule1F1B._step_microbatches on stage `stage`: min(m, pp - stage) forwards, then a
// backward and a forward in turn while forwards remain, then the remaining backwards.
std::vector<std::string> pytorch_1f1b_compute(int stage, int pp, int m) {
    const std::string s = std::to_string(stage);
    std::vector<std::string> order;
    int forward = 0;
    int backward = 0;
    for (; forward < std::min(m, pp - stage); ++forward)
        order.push_back(s + "F" + std::to_string(forward));
    while (backward < m) {
        order.push_back(s + "B" + std::to_string(backward++));
        if (forward < m)
            order.push_back(s + "F" + std::to_string(forward++));
    }
    return order;
}

std::vector<std::string> texts(const ImportedRun& run, int rank, bool compute_only) {
    std::vector<std::string> result;
    for (const Action& action : run.schedule.ranks.at(rank))
        if (!compute_only || is_compute(action.kind))
            result.push_back(run.schedule.text(action));
    return result;
}

// Starts never go back, each action ends after it starts, and compute never overlaps compute.
void expect_increasing_times(const ImportedRun& run) {
    for (std::size_t rank = 0; rank < run.timings.size(); ++rank) {
        SCOPED_TRACE("rank " + std::to_string(rank));
        std::int64_t previous_start = 0;
        std::int64_t compute_end = 0;
        for (std::size_t step = 0; step < run.timings[rank].size(); ++step) {
            const ImportedTiming& timing = run.timings[rank][step];
            EXPECT_GE(timing.start_ns, previous_start) << "step " << step;
            EXPECT_GT(timing.end_ns, timing.start_ns) << "step " << step;
            previous_start = timing.start_ns;
            if (is_compute(run.schedule.ranks[rank][step].kind)) {
                EXPECT_GE(timing.start_ns, compute_end) << "step " << step;
                compute_end = timing.end_ns;
            }
        }
    }
}

// Every SEND_F/SEND_B of stage s has the RECV of the same microbatch on its neighbour as pair.
void expect_paired(const ImportedRun& run, int m) {
    const Schedule& schedule = run.schedule;
    const int pp = schedule.rank_count;
    EXPECT_EQ(schedule.pair_count, 2 * (pp - 1) * m);
    for (int rank = 0; rank < pp; ++rank)
        for (const Action& send : schedule.ranks[rank]) {
            if (send.kind != ActionKind::send_forward && send.kind != ActionKind::send_backward)
                continue;
            const bool forward = send.kind == ActionKind::send_forward;
            const int peer = forward ? rank + 1 : rank - 1;
            const Action recv =
                make_action(peer, forward ? ActionKind::recv_forward : ActionKind::recv_backward,
                            send.microbatch);
            int matches = 0;
            for (const Action& other : schedule.ranks.at(peer))
                if (other.kind == recv.kind && other.microbatch == recv.microbatch &&
                    other.stage == peer) {
                    ++matches;
                    EXPECT_EQ(other.link, send.link) << schedule.text(send);
                }
            EXPECT_EQ(matches, 1) << schedule.text(send);
        }
}

TEST(SingleStageProfile, OneF1BTwoRanksFourMicrobatches) {
    const std::vector<std::string> files = rank_files("1F1B_pp2_v1_m4_cpu", 2);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun run = read_pytorch_profiler(files);
    EXPECT_EQ(run.schedule.name, "1F1B");
    EXPECT_EQ(run.schedule.rank_count, 2);
    EXPECT_EQ(run.schedule.microbatch_count, 4);
    EXPECT_EQ(texts(run, 0, false),
              (std::vector<std::string>{"0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0B0",
                                        "0F2", "0SEND_F2", "0RECV_B1", "0B1", "0F3", "0SEND_F3",
                                        "0RECV_B2", "0B2", "0RECV_B3", "0B3"}));
    EXPECT_EQ(texts(run, 1, false),
              (std::vector<std::string>{"1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1",
                                        "1B1", "1SEND_B1", "1RECV_F2", "1F2", "1B2", "1SEND_B2",
                                        "1RECV_F3", "1F3", "1B3", "1SEND_B3"}));
    for (int rank = 0; rank < 2; ++rank)
        EXPECT_EQ(texts(run, rank, true), pytorch_1f1b_compute(rank, 2, 4)) << rank;
    expect_increasing_times(run);
    expect_paired(run, 4);
    const std::string note =
        "no \"PP:\" ranges: a single-stage schedule's actions read from its operators (F: those "
        "that recorded autograd nodes; B: the autograd engine's evaluate_function ranges; "
        "SEND/RECV: c10d::send/recv_), microbatches in the order they ran";
    EXPECT_NE(std::find(run.notes.begin(), run.notes.end(), note), run.notes.end());
}

TEST(SingleStageProfile, OneF1BFourRanksEightMicrobatches) {
    const std::vector<std::string> files = rank_files("1F1B_pp4_v1_m8_cpu", 4);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun run = read_pytorch_profiler(files);
    EXPECT_EQ(run.schedule.name, "1F1B");
    EXPECT_EQ(run.schedule.rank_count, 4);
    EXPECT_EQ(run.schedule.microbatch_count, 8);
    const std::vector<std::size_t> counts{32, 48, 48, 32};  // 16 compute + 8 per neighbour x 2
    for (int rank = 0; rank < 4; ++rank) {
        EXPECT_EQ(run.schedule.ranks[rank].size(), counts[rank]) << rank;
        EXPECT_EQ(texts(run, rank, true), pytorch_1f1b_compute(rank, 4, 8)) << rank;
    }
    // A middle stage: it receives before and sends after every compute, both directions.
    const std::vector<std::string> rank1 = texts(run, 1, false);
    EXPECT_EQ(
        std::vector<std::string>(rank1.begin(), rank1.begin() + 12),
        (std::vector<std::string>{"1RECV_F0", "1F0", "1SEND_F0", "1RECV_F1", "1F1", "1SEND_F1",
                                  "1RECV_F2", "1F2", "1SEND_F2", "1RECV_B0", "1B0", "1SEND_B0"}));
    expect_increasing_times(run);
    expect_paired(run, 8);
    // Without rank 2's file, rank 3 would be read as stage 2 and paired with rank 1.
    const std::vector<std::string> gap = {files[0], files[1], files[3]};
    EXPECT_EQ(testing::thrown_message<ImportError>([&] { read_pytorch_profiler(gap); }, "no error"),
              "3 single-stage traces (global ranks 0, 1, 3) of a job of 4 ranks: a single-stage "
              "schedule's stages are its ranks in order, and no process group of exactly these "
              "ranks says they are the whole pipeline; give every pipeline rank's trace");
}

// PyTorch's own table of the order (its schedule CSV) lists the same kinds in the same order;
// its microbatch numbers for the last stage are not the ones its loop runs ("1F1,1B0,...").
TEST(SingleStageProfile, KindOrderEqualsPyTorchsScheduleTable) {
    for (const auto& [run_name, csv, pp] :
         {std::tuple{"1F1B_pp2_v1_m4_cpu", "1F1B_pp2_v1_m4_compute.csv", 2},
          std::tuple{"1F1B_pp4_v1_m8_cpu", "1F1B_pp4_v1_m8_compute.csv", 4}}) {
        const std::vector<std::string> files = rank_files(run_name, pp);
        const fs::path table = testing::pytorch_fixture_root() / "schedules" / csv;
        if (!have(files) || !fs::exists(table))
            GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
        testing::RankTexts imported;
        const ImportedRun run = read_pytorch_profiler(files);
        for (int rank = 0; rank < pp; ++rank)
            imported.push_back(texts(run, rank, true));
        testing::RankTexts theirs;
        std::ifstream in(table);
        for (std::string line; std::getline(in, line);) {
            theirs.emplace_back();
            for (std::size_t at = 0; at <= line.size();) {
                const std::size_t comma = std::min(line.find(',', at), line.size());
                const std::string token = line.substr(at, comma - at);
                if (!token.empty() && token.find("REDUCE_GRAD") == std::string::npos)
                    theirs.back().push_back(token);
                at = comma + 1;
            }
        }
        testing::drop_microbatches(imported);
        testing::drop_microbatches(theirs);
        EXPECT_EQ(testing::first_difference(theirs, imported), "") << run_name;
    }
}

class SingleStageProfileErrors : public testing::TempDirectoryTest {
  protected:
    SingleStageProfileErrors() : TempDirectoryTest("single_stage_profile") {}
};

// Rank 0 of the pp=2 run without its last backward: the evaluate_function ranges after its
// last receive, and every operator inside them, taken out.
TEST_F(SingleStageProfileErrors, AMissingBackwardIsRefusedWithWhatWasExpected) {
    const std::vector<std::string> files = rank_files("1F1B_pp2_v1_m4_cpu", 2);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    nlohmann::json trace = nlohmann::json::parse(read_input_file(files[0]));
    auto& events = trace["traceEvents"];
    double last_recv = 0;
    for (const auto& event : events)
        if (event.value("name", "") == "c10d::recv_")
            last_recv = std::max(last_recv, event["ts"].get<double>());
    std::vector<std::pair<double, double>> cut;
    for (const auto& event : events)
        if (event.value("name", "").rfind("autograd::engine::evaluate_function:", 0) == 0 &&
            event["ts"].get<double>() > last_recv)
            cut.emplace_back(event["ts"].get<double>(),
                             event["ts"].get<double>() + event["dur"].get<double>());
    // Four layers, each Tanh, Addmm and T backward and an AccumulateGrad for weight and bias.
    ASSERT_EQ(cut.size(), 20u);
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& event : events) {
        const bool inside = event.value("ph", "") == "X" &&
                            std::any_of(cut.begin(), cut.end(), [&](const auto& range) {
                                const double ts = event["ts"].get<double>();
                                return ts >= range.first && ts <= range.second;
                            });
        if (!inside)
            kept.push_back(event);
    }
    events = kept;
    const std::string rank0 = write("rank0.pt.trace.json", trace.dump());
    const std::string message = testing::thrown_message<ImportError>(
        [&] {
            read_pytorch_profiler({rank0, files[1]});
        },
        "no error");
    const std::string expected =
        rank0 +
        ": global rank 0 (pipeline rank 0 of 2) does not fit a single-stage schedule of 4 "
        "microbatches (read from its operators: no \"PP:\" ranges): expected 4 F, 4 B, 4 SEND_F, "
        "0 RECV_F, 0 SEND_B, 4 RECV_B; found 4 F, 3 B, 4 SEND_F, 0 RECV_F, 0 SEND_B, 3 RECV_B, "
        "and a receive (c10d::recv_) at ";
    EXPECT_EQ(message.substr(0, expected.size()), expected) << message;
    EXPECT_NE(message.find(" ns with no forward or backward after it"), std::string::npos)
        << message;
}

}  // namespace
}  // namespace pipelens::import
