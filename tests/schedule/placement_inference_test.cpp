// Stage placement inference: loop and "V" placements read back exactly, computations deciding
// over transfers, the fallbacks for stages without computations, and both conventions for a
// stage computed on two ranks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/schedule/schedule_test_text.hpp"

#include "engine/schedule/placement_inference.hpp"

namespace pipelens {
namespace {

// Per-rank action texts; the stage count is given, not inferred, so edges can be tested.
Schedule from_rows(const std::vector<std::string>& rows, int stage_count) {
    Schedule schedule;
    schedule.rank_count = static_cast<int>(rows.size());
    schedule.stage_count = stage_count;
    schedule.ranks.resize(rows.size());
    for (std::size_t rank = 0; rank < rows.size(); ++rank)
        for (const std::string& token : testing::split(rows[rank]))
            schedule.ranks[rank].push_back(parse_action(token, schedule.parts));
    return schedule;
}

std::vector<int> placed(const Schedule& schedule) {
    return infer_stage_to_rank(schedule, SplitStage::refuse);
}

TEST(InferStageToRank, LoopPlacement) {
    const Schedule loop = from_rows({"0F0 2F0 2B0 0B0", "1F0 3F0 3B0 1B0"}, 4);
    EXPECT_EQ(placed(loop), (std::vector<int>{0, 1, 0, 1}));
}

TEST(InferStageToRank, VPlacement) {
    const Schedule v = from_rows({"0F0 3F0 3B0 0B0", "1F0 2F0 2B0 1B0"}, 4);
    EXPECT_EQ(placed(v), (std::vector<int>{0, 1, 1, 0}));
}

TEST(InferStageToRank, OverlapPartsCount) {
    Schedule schedule = from_rows({"0F0", "1F0"}, 4);
    schedule.add_overlap(
        1, {make_action(3, ActionKind::forward, 0), make_action(2, ActionKind::full_backward, 0)});
    EXPECT_EQ(placed(schedule), (std::vector<int>{0, 1, 1, 1}));
}

// A transfer's stage number need not be where it runs (a flight-recorder import numbers it by
// its peer), so a computation elsewhere decides, and transfers never make a split.
TEST(InferStageToRank, ComputationsDecideOverEarlierTransfers) {
    const Schedule schedule = from_rows({"0F0 1SEND_F0", "1F0", "1RECV_F0 2F0"}, 3);
    EXPECT_EQ(placed(schedule), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(infer_stage_to_rank(schedule, SplitStage::first_rank), (std::vector<int>{0, 1, 2}));
}

TEST(InferStageToRank, AStageWithoutComputationsGoesToTheFirstRankNamingIt) {
    // Stage 1 only received (a failed run), stage 2 only unsharded, stage 3 named by nothing.
    const Schedule schedule = from_rows({"0F0 0SEND_F0", "2UNSHARD 1RECV_F0", "2RESHARD"}, 4);
    EXPECT_EQ(placed(schedule), (std::vector<int>{0, 1, 1, kNoRank}));
    EXPECT_EQ(stages_without_computation(schedule), (std::vector<int>{1, 2, 3}));
}

TEST(InferStageToRank, StagesOutsideThePipelineAreIgnored) {
    const Schedule schedule = from_rows({"0F0 5F0", "1F0"}, 2);
    EXPECT_EQ(placed(schedule), (std::vector<int>{0, 1}));
    EXPECT_EQ(stages_without_computation(schedule), std::vector<int>{});
    EXPECT_EQ(placed(from_rows({}, 0)), std::vector<int>{});
}

TEST(InferStageToRank, ASplitStageIsRefusedNamingTheStageBothRanksAndWhere) {
    const Schedule split = from_rows({"0F0 0B0 0B1", "1F0 1B0 0F1 1F1 1B1"}, 2);
    try {
        infer_stage_to_rank(split, SplitStage::refuse);
        FAIL() << "stage 0 on ranks 0 and 1 was accepted";
    } catch (const StagePlacementError& error) {
        EXPECT_STREQ(error.what(),
                     "stage 0 computes on rank 0 and on rank 1; a stage must run on one rank");
        EXPECT_EQ(error.split().stage, 0);
        EXPECT_EQ(error.split().first_rank, 0);
        EXPECT_EQ(error.split().rank, 1);
        EXPECT_EQ(error.split().step, 2);
    }
}

TEST(InferStageToRank, ASplitInsideAnOverlapIsFoundAtTheOverlapsStep) {
    Schedule split = from_rows({"0F0 1F1", "2F0"}, 3);
    split.add_overlap(
        1, {make_action(2, ActionKind::forward, 1), make_action(1, ActionKind::full_backward, 0)});
    try {
        infer_stage_to_rank(split, SplitStage::refuse);
        FAIL() << "stage 1 on ranks 0 and 1 was accepted";
    } catch (const StagePlacementError& error) {
        EXPECT_EQ(error.split().stage, 1);
        EXPECT_EQ(error.split().first_rank, 0);
        EXPECT_EQ(error.split().rank, 1);
        EXPECT_EQ(error.split().step, 1);  // the (2F1;1B0)OVERLAP_F_B
    }
    EXPECT_EQ(infer_stage_to_rank(split, SplitStage::first_rank), (std::vector<int>{0, 0, 1}));
}

// The CSV reader's convention: the first rank computing the stage keeps it, so the static check
// can name every misplaced action.
TEST(InferStageToRank, FirstRankConventionKeepsTheFirstComputingRank) {
    const Schedule split = from_rows({"1SEND_F0 0F0 0B0 0B1", "1F0 1B0 0F1 1F1 1B1"}, 2);
    EXPECT_EQ(infer_stage_to_rank(split, SplitStage::first_rank), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace pipelens
