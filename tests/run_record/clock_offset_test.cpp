// The clock offset estimate against exchanges built from a known offset and known one-way
// delays: the estimate is the middle of the bounds every exchange puts on the offset, its
// uncertainty half their width, and the true offset always lies inside.
#include <gtest/gtest.h>

#include <vector>

#include "engine/run_record/clock_offset.hpp"

namespace pipelens::run_record {
namespace {

constexpr std::int64_t kTrueOffset = 1000;  // the answering clock runs 1000 ns ahead

// An exchange asked at `asked` (asking clock) whose question takes `there` ns, is answered
// after `held` ns, and whose answer takes `back` ns.
ClockExchange exchange(std::int64_t asked, std::int64_t there, std::int64_t held,
                       std::int64_t back) {
    const std::int64_t arrived = asked + there + kTrueOffset;
    return {asked, arrived, arrived + held, arrived + held - kTrueOffset + back};
}

void expect_contains_true_offset(const ClockOffset& estimate) {
    EXPECT_LE(estimate.offset_ns - estimate.uncertainty_ns, kTrueOffset);
    EXPECT_GE(estimate.offset_ns + estimate.uncertainty_ns, kTrueOffset);
}

TEST(ClockOffset, OneExchangeGivesTheMiddleOfItsRoundTrip) {
    // Bounds: [answered - answer received, question received - asked] = [950, 1030].
    const std::vector<ClockExchange> one = {exchange(100, 30, 10, 50)};
    const ClockOffset estimate = estimate_clock_offset(one);
    EXPECT_EQ(estimate.offset_ns, 990);
    EXPECT_EQ(estimate.uncertainty_ns, 40);  // half the round trip less the time held
    expect_contains_true_offset(estimate);
}

TEST(ClockOffset, MoreExchangesNarrowTheBoundsToTheirIntersection) {
    std::vector<ClockExchange> exchanges = {exchange(100, 30, 10, 50), exchange(500, 5, 5, 45)};
    ClockOffset estimate = estimate_clock_offset(exchanges);  // [955, 1005]
    EXPECT_EQ(estimate.offset_ns, 980);
    EXPECT_EQ(estimate.uncertainty_ns, 25);
    expect_contains_true_offset(estimate);

    exchanges.push_back(exchange(1000, 40, 5, 2));  // [998, 1040]: now [998, 1005]
    estimate = estimate_clock_offset(exchanges);
    EXPECT_EQ(estimate.offset_ns, 1001);  // a width of 7 is rounded outwards: 1001 ± 4
    EXPECT_EQ(estimate.uncertainty_ns, 4);
    expect_contains_true_offset(estimate);
}

TEST(ClockOffset, BoundsThatDoNotMeetLeaveTheShortestRoundTripToDecide) {
    // The answering clock stepped by +1000 ns between the two exchanges.
    ClockExchange stepped = exchange(500, 5, 5, 5);
    stepped.question_received_ns += 1000;
    stepped.answered_ns += 1000;
    const std::vector<ClockExchange> exchanges = {exchange(100, 30, 10, 50), stepped};
    const ClockOffset estimate = estimate_clock_offset(exchanges);  // [1995, 2005]
    EXPECT_EQ(estimate.offset_ns, 2000);
    EXPECT_EQ(estimate.uncertainty_ns, 5);
}

TEST(ClockOffset, ImpossibleExchangesAreRefusedByIndex) {
    EXPECT_THROW(estimate_clock_offset({}), ClockExchangeError);
    ClockExchange backwards = exchange(100, 30, 10, 50);
    backwards.answer_received_ns = 99;
    const std::vector<ClockExchange> exchanges = {exchange(100, 30, 10, 50), backwards};
    try {
        estimate_clock_offset(exchanges);
        FAIL() << "an answer received before it was asked was accepted";
    } catch (const ClockExchangeError& error) {
        EXPECT_STREQ(error.what(),
                     "clock exchange 1: the answer came back (99 ns) before the question was "
                     "asked (100 ns)");
    }
    ClockExchange early_answer = exchange(100, 30, 10, 50);
    early_answer.answered_ns = early_answer.question_received_ns - 1;
    EXPECT_THROW(estimate_clock_offset(std::vector<ClockExchange>{early_answer}),
                 ClockExchangeError);
}

TEST(ClockOffset, ARanksZeroOnTheRunClock) {
    // A rank left the barrier at 5000 on its clock, 6000 on rank 0's; rank 0 left it at 5900.
    EXPECT_EQ(zero_on_run_clock(5000, {1000, 20}, 5900), 100);
    EXPECT_EQ(zero_on_run_clock(5900, {0, 0}, 5900), 0);  // rank 0 itself
}

}  // namespace
}  // namespace pipelens::run_record
