// Names a user types for a schedule kind: the nearest-name rule every "did you mean" uses, the
// suggestion a mistyped kind gets, and aliases that mean exactly one kind or are refused with the
// kind to name instead.
#include <gtest/gtest.h>

#include <string>

#include "engine/schedule/schedule_kind.hpp"
#include "engine/text/nearest_names.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens {
namespace {

std::string refusal(std::string_view name) {
    return testing::thrown_message<ScheduleConfigError>([&] { parse_schedule_kind(name); },
                                                        "(accepted)");
}

TEST(NearestNames, EditDistanceCountsASwapOfNeighboursAsOneAndIgnoresCase) {
    EXPECT_EQ(edit_distance("1FB1", "1F1B"), 1u);
    EXPECT_EQ(edit_distance("simlate", "simulate"), 1u);
    EXPECT_EQ(edit_distance("GPIPE", "gpipe"), 0u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(NearestNames, OnlyTheClosestWithinAThirdOfTheTypedLength) {
    const std::vector<std::string> commands = {"schedule", "check", "simulate", "summary", "sweep"};
    EXPECT_EQ(nearest_names("simlate", commands), std::vector<std::string>{"simulate"});
    EXPECT_EQ(nearest_names("sweeep", commands), std::vector<std::string>{"sweep"});
    EXPECT_TRUE(nearest_names("frobnicate", commands).empty());
    EXPECT_EQ(nearest_names("ab", {"ac", "ad", "xyz"}), (std::vector<std::string>{"ac", "ad"}));
    EXPECT_EQ(quoted_alternatives({"ac", "ad", "ae"}, "'"), "'ac', 'ad' or 'ae'");
}

TEST(ScheduleNames, AMistypedKindSuggestsTheNearestKinds) {
    EXPECT_EQ(refusal("1FB1"),
              "unknown schedule kind '1FB1': did you mean 1F1B? expected one of GPipe, 1F1B, "
              "Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV, "
              "ZeroBubbleH2, ZeroBubbleAuto");
    EXPECT_EQ(refusal("dualpipe")
                  .rfind("unknown schedule kind 'dualpipe': did you mean "
                         "DualPipeV? expected one of",
                         0),
              0u);
    EXPECT_EQ(refusal("Chimera").rfind("unknown schedule kind 'Chimera': expected one of", 0), 0u);
}

// ZB-H1 is the zero-bubble paper's one-stage-per-rank schedule, InterleavedZeroBubble at v = 1;
// the alias once gave InterleavedZeroBubble at its default v = 2.
TEST(ScheduleNames, AliasesMeanExactlyOneKindOrAreRefusedNamingTheKind) {
    EXPECT_EQ(parse_schedule_kind("zbv"), ScheduleKind::zbv_zero_bubble);
    EXPECT_EQ(parse_schedule_kind("ZBH2"), ScheduleKind::zero_bubble_h2);
    EXPECT_EQ(parse_schedule_kind("zbauto"), ScheduleKind::zero_bubble_auto);
    EXPECT_EQ(refusal("ZBH1"),
              "'ZBH1' is the zero-bubble paper's ZB-H1, one stage per rank: name "
              "InterleavedZeroBubble with v = 1 (--v 1)");
    EXPECT_EQ(refusal("zb1p"),
              "'zb1p' means two schedules: PyTorch calls InterleavedZeroBubble ZB1P, the "
              "zero-bubble paper's ZB-1p is ZeroBubbleAuto (memory limit p); name the one you "
              "mean");
    EXPECT_EQ(refusal("ZeroBubble"),
              "'ZeroBubble' names a family: InterleavedZeroBubble, ZBVZeroBubble, ZeroBubbleH2 "
              "or ZeroBubbleAuto");
}

}  // namespace
}  // namespace pipelens
