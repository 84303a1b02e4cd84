// The importers' shared scalar-type widths and the clock alignment's note, each branch.
#include <gtest/gtest.h>

#include "engine/import/clock_alignment.hpp"
#include "engine/import/scalar_type_bytes.hpp"

namespace pipelens::import {
namespace {

TEST(ScalarTypeBytes, AreC10sWidthsByTheNamesItWrites) {
    EXPECT_EQ(scalar_type_bytes("Float"), 4);
    EXPECT_EQ(scalar_type_bytes("BFloat16"), 2);
    EXPECT_EQ(scalar_type_bytes("Half"), 2);
    EXPECT_EQ(scalar_type_bytes("Double"), 8);
    EXPECT_EQ(scalar_type_bytes("Long"), 8);
    EXPECT_EQ(scalar_type_bytes("Bool"), 1);
    EXPECT_EQ(scalar_type_bytes("Float8_e4m3fn"), 1);
    EXPECT_EQ(scalar_type_bytes("ComplexDouble"), 16);
}

TEST(ScalarTypeBytes, AnUnknownOrQualifiedNameIsZero) {
    EXPECT_EQ(scalar_type_bytes("float32"), 0);    // Python's name, not c10's
    EXPECT_EQ(scalar_type_bytes("c10::Half"), 0);  // the profiler's importer strips the prefix
    EXPECT_EQ(scalar_type_bytes(""), 0);
}

TEST(ClockAlignmentNote, SaysWhatTheAlignmentDid) {
    ClockAlignment kept;
    kept.pairs_used = 3;
    EXPECT_EQ(clock_alignment_note(kept),
              "clocks: the files' own timestamps, consistent with every send/recv (3 rank pairs "
              "checked)");
    ClockAlignment shifted = kept;
    shifted.largest_violation_ns = 1'500'000;
    EXPECT_EQ(clock_alignment_note(shifted),
              "clocks: the files' timestamps had a RECV end 1.500 ms before its SEND started; "
              "ranks shifted onto rank 0's clock by the least that orders all 3 rank pairs");
    shifted.largest_violation_ns = 12'345;
    EXPECT_NE(clock_alignment_note(shifted).find("a RECV end 12.3 us before"), std::string::npos);
    ClockAlignment drifted;
    drifted.consistent = false;
    EXPECT_EQ(clock_alignment_note(drifted),
              "clocks: the ranks' send/recv times contradict any one offset per rank (clock "
              "drift?); times are the best effort");
}

}  // namespace
}  // namespace pipelens::import
