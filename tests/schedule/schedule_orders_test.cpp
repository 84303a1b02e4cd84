// Per-rank compute orders derived by hand from the algorithms in PyTorch's schedules.py, for
// small shapes of every family, and the shape rules' messages.
#include <gtest/gtest.h>

#include "tests/schedule/schedule_test_text.hpp"

#include "engine/schedule/generate.hpp"

namespace pipelens {
namespace {

using testing::split;
using testing::texts;

Schedule make(ScheduleKind kind, int pp, int v, int m) {
    return generate_schedule({kind, pp, v, m});
}

TEST(ScheduleOrders, GPipeRunsAllForwardsThenAllBackwards) {
    const Schedule schedule = make(ScheduleKind::gpipe, 2, 1, 3);
    EXPECT_EQ(texts(schedule, 0), split("0F0 0F1 0F2 0B0 0B1 0B2"));
    EXPECT_EQ(texts(schedule, 1), split("1F0 1F1 1F2 1B0 1B1 1B2"));
}

TEST(ScheduleOrders, OneFOneBWarmsUpByDistanceFromTheLastStage) {
    const Schedule schedule = make(ScheduleKind::one_f_one_b, 2, 1, 4);
    EXPECT_EQ(texts(schedule, 0), split("0F0 0F1 0B0 0F2 0B1 0F3 0B2 0B3"));
    EXPECT_EQ(texts(schedule, 1), split("1F0 1B0 1F1 1B1 1F2 1B2 1F3 1B3"));
    const Schedule full_warmup = make(ScheduleKind::one_f_one_b, 4, 1, 4);
    EXPECT_EQ(texts(full_warmup, 0), split("0F0 0F1 0F2 0F3 0B0 0B1 0B2 0B3"));
    EXPECT_EQ(texts(full_warmup, 2), split("2F0 2F1 2B0 2F2 2B1 2F3 2B2 2B3"));
}

TEST(ScheduleOrders, LoopedBfsRunsStageByStageAndBackwardsInReverse) {
    const Schedule schedule = make(ScheduleKind::looped_bfs, 2, 2, 2);
    EXPECT_EQ(texts(schedule, 0), split("0F0 0F1 2F0 2F1 2B1 2B0 0B1 0B0"));
    EXPECT_EQ(texts(schedule, 1), split("1F0 1F1 3F0 3F1 3B1 3B0 1B1 1B0"));
}

TEST(ScheduleOrders, Interleaved1F1BIsDepthFirstInRounds) {
    const Schedule schedule = make(ScheduleKind::interleaved_1f1b, 2, 2, 4);
    EXPECT_EQ(texts(schedule, 0),
              split("0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3"));
    EXPECT_EQ(texts(schedule, 1),
              split("1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3"));
}

TEST(ScheduleOrders, InterleavedZeroBubbleDelaysWeightsByRank) {
    const Schedule schedule = make(ScheduleKind::interleaved_zero_bubble, 2, 2, 4);
    EXPECT_EQ(texts(schedule, 0), split("0F0 0F1 2F0 2F1 2I0 2W0 0F2 2I1 2W1 0F3 0I0 0W0 2F2 0I1 "
                                        "0W1 2F3 2I2 2W2 2I3 2W3 0I2 0W2 0I3 0W3"));
    EXPECT_EQ(texts(schedule, 1), split("1F0 1F1 3F0 3I0 3F1 3I1 3W0 1F2 1I0 3W1 1F3 1I1 1W0 3F2 "
                                        "3I2 1W1 3F3 3I3 3W2 1I2 3W3 1I3 1W2 1W3"));
}

TEST(ScheduleOrders, ZbvPlacesStagesInAVAndSplitsBackwards) {
    const Schedule schedule = make(ScheduleKind::zbv_zero_bubble, 2, 2, 4);
    EXPECT_EQ(schedule.stage_to_rank, (std::vector<int>{0, 1, 1, 0}));
    EXPECT_EQ(texts(schedule, 0), split("0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 3W1 0F3 0I0 0W0 3F2 3I2 "
                                        "3W2 0I1 0W1 3F3 3I3 3W3 0I2 0W2 0I3 0W3"));
    EXPECT_EQ(texts(schedule, 1), split("1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1F3 1I1 "
                                        "1W1 2F3 2I2 2W2 1I2 2I3 1I3 1W2 2W3 1W3"));
}

TEST(ScheduleOrders, ZbvDropsMicrobatchesBeyondM) {
    // Built for max(2pp-1, m) = 3 microbatches; everything of microbatch 2 is dropped.
    const Schedule schedule = make(ScheduleKind::zbv_zero_bubble, 2, 2, 2);
    EXPECT_EQ(texts(schedule, 0), split("0F0 0F1 3F0 3I0 3W0 3F1 3I1 3W1 0I0 0W0 0I1 0W1"));
}

TEST(ScheduleOrders, DualPipeVOverlapsForwardAndBackward) {
    const Schedule schedule = make(ScheduleKind::dual_pipe_v, 2, 2, 4);
    EXPECT_EQ(schedule.stage_to_rank, (std::vector<int>{0, 1, 1, 0}));
    EXPECT_EQ(texts(schedule, 0),
              split("0F0 0F1 0F2 3F0 3I0 3W0 3F1 (0F3;3B1)OVERLAP_F_B (3F2;0B0)OVERLAP_F_B 3B2 "
                    "(3F3;0B1)OVERLAP_F_B 3B3 0I2 0W2 0I3 0W3"));
    EXPECT_EQ(texts(schedule, 1),
              split("1F0 2F0 1F1 2F1 1F2 2B0 (2F2;1B0)OVERLAP_F_B (1F3;2B1)OVERLAP_F_B "
                    "(2F3;1B1)OVERLAP_F_B 2B2 1B2 2I3 1I3 2W3 1W3"));
}

void expect_rejected(ScheduleShape shape, const std::string& fragment) {
    try {
        generate_schedule(shape);
        FAIL() << "shape accepted";
    } catch (const ScheduleConfigError& error) {
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
}

TEST(ScheduleRules, InvalidCombinationsNameTheRuleAndValues) {
    expect_rejected({ScheduleKind::one_f_one_b, 4, 1, 3},
                    "1F1B needs at least as many microbatches as stages: m=3 < stages=4");
    expect_rejected({ScheduleKind::gpipe, 4, 2, 8}, "v must be 1 (got v=2)");
    expect_rejected({ScheduleKind::interleaved_1f1b, 4, 2, 9},
                    "multiple of its number of rounds max(1, m / pp) = 2: m=9 with pp=4");
    expect_rejected({ScheduleKind::interleaved_zero_bubble, 2, 2, 5}, "m=5 with pp=2");
    expect_rejected({ScheduleKind::zbv_zero_bubble, 2, 3, 4}, "v must be 2 (got v=3)");
    expect_rejected({ScheduleKind::dual_pipe_v, 4, 2, 7},
                    "DualPipeV needs at least as many microbatches as stages: m=7 < stages=8");
    expect_rejected({ScheduleKind::looped_bfs, 0, 1, 4}, "pp must be at least 1 (got pp=0)");
    expect_rejected({ScheduleKind::looped_bfs, 2, 1, 0}, "m must be at least 1 (got m=0)");
}

// pp*v*m once wrapped around in 64 bits and let these through to an unbounded generation.
TEST(ScheduleRules, SizesNearIntMaxAreRefusedWithoutOverflow) {
    expect_rejected({ScheduleKind::one_f_one_b, 2147483647, 1, 2147483647},
                    "1F1B: pp*v*m = 2147483647*1*2147483647 is too large (the limit is 536870911 "
                    "stage-microbatches)");
    expect_rejected({ScheduleKind::looped_bfs, 2147483647, 2147483647, 2147483647},
                    "pp*v*m = 2147483647*2147483647*2147483647 is too large");
    expect_rejected({ScheduleKind::gpipe, 536870912, 1, 1}, "is too large");
    EXPECT_NO_THROW(validate_shape({ScheduleKind::gpipe, 1, 1, 536870911}));
}

TEST(ScheduleRules, KindNamesAcceptPyTorchClassNamesInAnyCase) {
    EXPECT_EQ(parse_schedule_kind("Interleaved1F1B"), ScheduleKind::interleaved_1f1b);
    EXPECT_EQ(parse_schedule_kind("scheduleinterleaved1f1b"), ScheduleKind::interleaved_1f1b);
    EXPECT_EQ(parse_schedule_kind("ZBVZeroBubble"), ScheduleKind::zbv_zero_bubble);
    EXPECT_EQ(parse_schedule_kind("ScheduleDualPipeV"), ScheduleKind::dual_pipe_v);
    EXPECT_EQ(parse_schedule_kind("gpipe"), ScheduleKind::gpipe);
    EXPECT_EQ(parse_schedule_kind("1f1b"), ScheduleKind::one_f_one_b);
    try {
        parse_schedule_kind("Chimera");
        FAIL();
    } catch (const ScheduleConfigError& error) {
        EXPECT_NE(std::string(error.what()).find("unknown schedule kind 'Chimera'"),
                  std::string::npos);
        EXPECT_NE(std::string(error.what()).find("DualPipeV"), std::string::npos);
    }
}

}  // namespace
}  // namespace pipelens
