// Profiler traces of multi-stage schedules that PyTorch 2.11 wrote: Interleaved1F1B over Gloo
// processes (pp = 2 and 4, tests/data/pytorch/profiler/Interleaved1F1B_pp*_cpu) and
// Interleaved1F1B, ZBVZeroBubble and DualPipeV with every stage on one H100
// (*_pp1_v2_m4_cuda, NCCL world of one). The importer reads back every action once, in the
// order PyTorch ran, which is pipelens' generated order for the same kind and shape; times the
// GPU's actions on the GPU; and names the kind, saying so where two kinds run the same order
// (InterleavedZeroBubble and ZBVZeroBubble coincide at pp=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "engine/import/imported_run.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "engine/schedule/generate.hpp"
#include "tests/import/pytorch_written_fixtures.hpp"

namespace pipelens::import {
namespace {

struct CudaRun {
    const char* folder;
    ScheduleKind ran;
    const char* named;
    std::size_t actions;  // compute, and per stage PyTorch's UNSHARD, RESHARD and REDUCE_GRAD
    int gpu_timed;        // those that launched GPU work (not UNSHARD, RESHARD, stage 0's I)
};

std::vector<std::string> compute_texts(const Schedule& schedule, int rank) {
    std::vector<std::string> texts;
    for (const Action& action : schedule.ranks.at(rank))
        if (is_compute(action.kind))
            texts.push_back(schedule.text(action));
    return texts;
}

bool has_note_containing(const ImportedRun& run, const std::string& part) {
    return std::any_of(run.notes.begin(), run.notes.end(), [&](const std::string& note) {
        return note.find(part) != std::string::npos;
    });
}

class CudaProfile : public ::testing::TestWithParam<CudaRun> {};

TEST_P(CudaProfile, ReadsPyTorchsOrderTimedOnTheGpu) {
    const CudaRun& expected = GetParam();
    const std::vector<std::string> files = testing::profiler_rank_files(expected.folder, 1);
    if (!std::filesystem::exists(files.front()))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun run = read_pytorch_profiler(files);
    EXPECT_EQ(run.schedule.name, expected.named);
    EXPECT_EQ(run.schedule.rank_count, 1);
    EXPECT_EQ(run.schedule.stages_per_rank, 2);
    EXPECT_EQ(run.schedule.microbatch_count, 4);
    const Schedule generated = generate_schedule({expected.ran, 1, 2, 4});
    EXPECT_EQ(compute_texts(run.schedule, 0), compute_texts(generated, 0));
    EXPECT_EQ(run.schedule.ranks.at(0).size(), expected.actions);
    EXPECT_EQ(run.schedule.ranks.at(0).size() - compute_texts(run.schedule, 0).size(), 6u)
        << "two stages' UNSHARD, RESHARD and REDUCE_GRAD";
    EXPECT_TRUE(has_note_containing(
        run, std::to_string(expected.gpu_timed) + " actions timed on the GPU (the kernels"))
        << testing::first_lines(run.notes);
    EXPECT_FALSE(run.memory.at(0).empty()) << "the trace's GPU memory events were dropped";
    // Each action ends after it starts, and the step is at least the compute it holds.
    std::int64_t busy = 0;
    for (const ImportedTiming& timing : run.timings.at(0)) {
        EXPECT_GT(timing.end_ns, timing.start_ns);
        busy += timing.end_ns - timing.start_ns;
    }
    EXPECT_GT(busy, 0);
}

INSTANTIATE_TEST_SUITE_P(
    PyTorchOnOneGpu, CudaProfile,
    ::testing::Values(CudaRun{"Interleaved1F1B_pp1_v2_m4_cuda", ScheduleKind::interleaved_1f1b,
                              "Interleaved1F1B", 22, 18},
                      CudaRun{"ZBVZeroBubble_pp1_v2_m4_cuda", ScheduleKind::zbv_zero_bubble,
                              "InterleavedZeroBubble", 30, 22},
                      CudaRun{"DualPipeV_pp1_v2_m4_cuda", ScheduleKind::dual_pipe_v, "DualPipeV",
                              18, 13}),
    [](const auto& info) { return std::string(schedule_kind_name(info.param.ran)); });

// The Gloo runs' traces (tests/data/pytorch/profiler/Interleaved1F1B_pp*_cpu): per rank, each of
// its two stages' F and B per microbatch, every boundary's SEND and RECV, and each stage's
// UNSHARD, RESHARD and REDUCE_GRAD. pp=2 v=2 m=4: 16 + 24 + 6 = 46 on both ranks. pp=4 v=2 m=8:
// the end ranks have one boundary fewer, 32 + 48 + 6 = 86; the middle ones 32 + 64 + 6 = 102.
TEST(GlooProfile, InterleavedTracesHoldEveryActionOnceAndPyTorchsOrder) {
    for (const auto& [folder, pp, m, counts] :
         {std::tuple{"Interleaved1F1B_pp2_v2_m4_cpu", 2, 4, std::vector<std::size_t>{46, 46}},
          std::tuple{"Interleaved1F1B_pp4_v2_m8_cpu", 4, 8,
                     std::vector<std::size_t>{86, 102, 102, 86}}}) {
        SCOPED_TRACE(folder);
        const std::vector<std::string> files = testing::profiler_rank_files(folder, pp);
        if (!std::filesystem::exists(files.front()))
            GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
        const ImportedRun run = read_pytorch_profiler(files);
        EXPECT_EQ(run.schedule.name, "Interleaved1F1B");
        const Schedule generated = generate_schedule({ScheduleKind::interleaved_1f1b, pp, 2, m});
        for (int rank = 0; rank < pp; ++rank) {
            EXPECT_EQ(run.schedule.ranks.at(rank).size(), counts[rank]) << "rank " << rank;
            EXPECT_EQ(compute_texts(run.schedule, rank), compute_texts(generated, rank))
                << "rank " << rank;
        }
        EXPECT_EQ(run.schedule.pair_count, 2 * (2 * pp - 1) * m);  // F and B over each boundary
    }
}

// A backward's kernels are launched by the autograd engine's thread, not the thread that holds its
// PP: range: its gpu_user_annotation twin spans 995 ns. What the GPU ran from 1B0's first kernel
// to its last (launched 258.578 us into the range, the last ending 12,812.918 us later; computed
// from the trace's kernels and cudaLaunchKernel calls by their correlation) is the action.
TEST(CudaProfile, ABackwardSpansTheKernelsTheAutogradThreadLaunched) {
    const std::vector<std::string> files =
        testing::profiler_rank_files("Interleaved1F1B_pp1_v2_m4_cuda", 1);
    if (!std::filesystem::exists(files.front()))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun run = read_pytorch_profiler(files);
    const auto& actions = run.schedule.ranks.at(0);
    const auto backward = std::find_if(actions.begin(), actions.end(), [&](const Action& action) {
        return run.schedule.text(action) == "1B0";
    });
    ASSERT_NE(backward, actions.end());
    const ImportedTiming& timing = run.timings.at(0).at(backward - actions.begin());
    EXPECT_EQ(timing.end_ns - timing.start_ns, 12'812'918);
}

TEST(CudaProfile, NamesTheKindsThatRunTheSameOrder) {
    const std::vector<std::string> files =
        testing::profiler_rank_files("ZBVZeroBubble_pp1_v2_m4_cuda", 1);
    if (!std::filesystem::exists(files.front()))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun run = read_pytorch_profiler(files);
    EXPECT_TRUE(has_note_containing(run,
                                    "named InterleavedZeroBubble, but at this shape "
                                    "ZBVZeroBubble runs the same compute order"))
        << testing::first_lines(run.notes);
}

}  // namespace
}  // namespace pipelens::import
