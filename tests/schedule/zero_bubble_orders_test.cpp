// ZB-H2 and the automatic zero-bubble scheduler: the exact orders of Qi et al.'s figure 3 and of
// the authors' scheduler (sail-sg/zero-bubble-pipeline-parallelism, auto_schedule.py at
// 77b9eed9), whose expected orders and costs were printed by running that code on these inputs:
// unit times at 1p and 2p memory, F/I/W = 5/6/4 with communication 1, and the repository's own
// example configurations, where the first-found-minimum tie rule decides.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "tests/schedule/schedule_test_text.hpp"

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/zero_bubble_search.hpp"

namespace pipelens {
namespace {

using testing::split;

// "F3", "B3", "W3": the paper's letters (B for the input gradient), microbatches 0-based.
std::string paper_text(ActionKind kind, int microbatch) {
    const char* letter = kind == ActionKind::forward          ? "F"
                         : kind == ActionKind::backward_input ? "B"
                                                              : "W";
    return fmt::format("{}{}", letter, microbatch);
}

std::vector<std::string> paper_order(const Schedule& schedule, int rank) {
    std::vector<std::string> order;
    for (const Action& action : schedule.ranks[rank])
        order.push_back(paper_text(action.kind, action.microbatch));
    return order;
}

std::vector<std::string> paper_order(const ZeroBubbleRun& run, int stage) {
    std::vector<std::string> order;
    for (const ZeroBubbleOp& op : run.stages[stage])
        order.push_back(paper_text(op.kind, op.microbatch));
    return order;
}

const std::vector<std::string> kZbH1 = {
    "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7",
    "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 B5 W4 B6 W5 B7 W6 W7",
    "F0 F1 B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 B6 W4 B7 W5 W6 W7",
    "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7",
};

TEST(ZeroBubbleH2, FigureThreeOrderForFourStagesAndEightMicrobatches) {
    const Schedule schedule = generate_schedule({ScheduleKind::zero_bubble_h2, 4, 1, 8});
    const std::vector<std::string> expected = {
        "F0 F1 F2 F3 F4 F5 F6 B0 W0 F7 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5 B6 W6 B7 W7",
        "F0 F1 F2 F3 F4 B0 F5 B1 F6 B2 W0 F7 B3 W1 B4 W2 B5 W3 B6 W4 B7 W5 W6 W7",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 W0 F7 B5 W1 B6 W2 B7 W3 W4 W5 W6 W7",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 W0 F7 B7 W1 W2 W3 W4 W5 W6 W7",
    };
    for (int rank = 0; rank < 4; ++rank)
        EXPECT_EQ(paper_order(schedule, rank), split(expected[rank])) << "rank " << rank;
}

TEST(ZeroBubbleH2, SameRuleWithOneWarmUpForwardIsZeroBubbleH1) {
    const Schedule h1 = generate_schedule({ScheduleKind::interleaved_zero_bubble, 4, 1, 8});
    for (int rank = 0; rank < 4; ++rank)
        EXPECT_EQ(paper_order(h1, rank), split(kZbH1[rank])) << "rank " << rank;
}

TEST(ZeroBubbleH2, FewMicrobatchesAndEveryShapeLowersWithoutAHang) {
    for (int pp = 1; pp <= 6; ++pp)
        for (int m = 1; m <= 3 * pp; ++m) {
            SCOPED_TRACE("pp=" + std::to_string(pp) + " m=" + std::to_string(m));
            const Schedule schedule = generate_schedule({ScheduleKind::zero_bubble_h2, pp, 1, m});
            for (const auto& actions : schedule.ranks)
                EXPECT_EQ(actions.size(), 3u * m);
            EXPECT_NO_THROW(lower(schedule));
        }
}

TEST(ZeroBubbleAuto, UnitTimesAtOnePIsZeroBubbleH1) {
    const ZeroBubbleSearch search = search_zero_bubble(4, 8, {1, 1, 1, 0, 4});
    ASSERT_EQ(search.best, 0);
    for (const ZeroBubbleRun& run : search.runs)
        EXPECT_EQ(run.cost, 27);
    for (int stage = 0; stage < 4; ++stage)
        EXPECT_EQ(paper_order(search.runs[0], stage), split(kZbH1[stage]));
    // A bare shape searches with unit times and ZB-1p's limit.
    const Schedule schedule = generate_schedule({ScheduleKind::zero_bubble_auto, 4, 1, 8});
    for (int rank = 0; rank < 4; ++rank)
        EXPECT_EQ(paper_order(schedule, rank), split(kZbH1[rank]));
}

TEST(ZeroBubbleAuto, UnitTimesAtTwoPReachZeroBubble) {
    const ZeroBubbleSearch search = search_zero_bubble(4, 8, {1, 1, 1, 0, 8});
    ASSERT_EQ(search.best, 0);
    EXPECT_EQ(search.runs[0].cost, 24);
    const std::vector<std::string> expected = {
        "F0 F1 F2 F3 F4 F5 F6 B0 F7 W0 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5 B6 W6 B7 W7",
        "F0 F1 F2 F3 F4 B0 F5 B1 F6 B2 F7 B3 W0 B4 W1 B5 W2 B6 W3 B7 W4 W5 W6 W7",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 W0 B6 W1 B7 W2 W3 W4 W5 W6 W7",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 W0 W1 W2 W3 W4 W5 W6 W7",
    };
    for (int stage = 0; stage < 4; ++stage)
        EXPECT_EQ(paper_order(search.runs[0], stage), split(expected[stage]));
}

std::vector<std::int64_t> costs_of(const ZeroBubbleSearch& search) {
    std::vector<std::int64_t> costs;
    for (const ZeroBubbleRun& run : search.runs)
        costs.push_back(run.cost);
    return costs;
}

TEST(ZeroBubbleAuto, UnequalTimesWithCommunicationOnePAndTwoP) {
    const ZeroBubbleSearch one_p = search_zero_bubble(4, 8, {5, 6, 4, 1, 4});
    EXPECT_EQ(costs_of(one_p), (std::vector<std::int64_t>{159, 153, 159, 153, 159, 153, 159, 153}));
    ASSERT_EQ(one_p.best, 1);  // allow bubble, prioritize B, not greedy
    for (int stage = 0; stage < 4; ++stage)
        EXPECT_EQ(paper_order(one_p.runs[1], stage), split(kZbH1[stage]));
    // Completion times in the scheduler's own model, stage 1.
    std::vector<std::int64_t> ends;
    for (const ZeroBubbleOp& op : one_p.runs[1].stages[1])
        ends.push_back(op.end_ns);
    EXPECT_EQ(ends, (std::vector<std::int64_t>{11,  16,  21,  43,  48,  54,  58,  65,
                                               71,  75,  80,  86,  90,  95,  101, 105,
                                               110, 116, 120, 129, 133, 142, 146, 150}));

    const ZeroBubbleSearch two_p = search_zero_bubble(4, 8, {5, 6, 4, 1, 8});
    EXPECT_EQ(costs_of(two_p), (std::vector<std::int64_t>{134, 131, 134, 131, 146, 131, 134, 131}));
    ASSERT_EQ(two_p.best, 1);
    const std::vector<std::string> expected = {
        "F0 F1 F2 F3 F4 F5 F6 F7 B0 W0 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5 B6 W6 B7 W7",
        "F0 F1 F2 F3 F4 F5 B0 F6 B1 F7 B2 W0 B3 W1 B4 W2 B5 W3 B6 W4 B7 W5 W6 W7",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 W0 B6 W1 B7 W2 W3 W4 W5 W6 W7",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 W0 W1 W2 W3 W4 W5 W6 W7",
    };
    for (int stage = 0; stage < 4; ++stage)
        EXPECT_EQ(paper_order(two_p.runs[1], stage), split(expected[stage]));
}

TEST(ZeroBubbleAuto, RepositoryExamplesAndTheFirstFoundTie) {
    // simple_schedule(4, 12, 5478, 5806, 3534, 200, 32): 32 half-units = 16 microbatches.
    const ZeroBubbleSearch search = search_zero_bubble(4, 12, {5478, 5806, 3534, 200, 16});
    EXPECT_EQ(costs_of(search), (std::vector<std::int64_t>{180354, 180000, 180354, 180000, 178898,
                                                           178898, 178898, 178898}));
    ASSERT_EQ(search.best, 4);  // the first of four equal minima
    const std::vector<std::string> expected = {
        "F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 B0 F10 B1 F11 W0 W1 B2 W2 B3 W3 B4 W4 B5 W5 B6 W6 B7 W7 "
        "B8 W8 B9 W9 B10 W10 B11 W11",
        "F0 F1 F2 F3 F4 F5 F6 B0 F7 B1 F8 B2 F9 B3 F10 B4 F11 B5 W0 B6 W1 B7 W2 W3 B8 W4 B9 W5 "
        "B10 W6 W7 B11 W8 W9 W10 W11",
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 F9 B6 F10 B7 F11 B8 W0 B9 W1 B10 W2 W3 B11 "
        "W4 W5 W6 W7 W8 W9 W10 W11",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 F8 B8 F9 B9 F10 B10 F11 B11 W0 W1 W2 W3 "
        "W4 W5 W6 W7 W8 W9 W10 W11",
    };
    for (int stage = 0; stage < 4; ++stage)
        EXPECT_EQ(paper_order(search.runs[4], stage), split(expected[stage]));

    const ZeroBubbleSearch five = search_zero_bubble(4, 12, {5, 6, 4, 0, 5});
    EXPECT_EQ(costs_of(five), (std::vector<std::int64_t>{194, 193, 198, 195, 194, 193, 198, 195}));
    EXPECT_EQ(five.best, 1);
    const ZeroBubbleSearch seven = search_zero_bubble(4, 12, {5, 6, 4, 0, 7});
    EXPECT_EQ(costs_of(seven), (std::vector<std::int64_t>{183, 183, 183, 183, 188, 187, 188, 188}));
    EXPECT_EQ(seven.best, 0);
}

TEST(ZeroBubbleAuto, OrdersAreCompleteAndLowerForManyShapes) {
    for (int pp : {1, 2, 3, 5, 8})
        for (int m : {1, 2, pp, 2 * pp + 1})
            for (int limit : {1, pp, 2 * pp}) {
                SCOPED_TRACE("pp=" + std::to_string(pp) + " m=" + std::to_string(m) +
                             " limit=" + std::to_string(limit));
                ScheduleShape shape{ScheduleKind::zero_bubble_auto, pp, 1, m};
                shape.zero_bubble = {7, 9, 4, 2, limit};
                const Schedule schedule = generate_schedule(shape);
                for (const auto& actions : schedule.ranks)
                    EXPECT_EQ(actions.size(), 3u * m);
                EXPECT_NO_THROW(lower(schedule));
            }
}

TEST(ZeroBubbleAuto, ALimitBelowOneMicrobatchIsRefused) {
    ScheduleShape shape{ScheduleKind::zero_bubble_auto, 4, 1, 8};
    shape.zero_bubble.max_activations = -1;
    EXPECT_THROW(generate_schedule(shape), ScheduleConfigError);
    shape.zero_bubble.max_activations = 1;  // one in flight per stage still runs
    EXPECT_NO_THROW(generate_schedule(shape));
}

// The order depends on the times' ratios only; times whose sum over the pipeline passes 2^62 ns
// wrapped in the search and gave another order without a word. The largest that fit still give
// the unit-time order.
TEST(ZeroBubbleAuto, TimesTheSearchCannotAddUpAreRefusedAndLargeOnesKeepTheOrder) {
    ScheduleShape shape{ScheduleKind::zero_bubble_auto, 32, 1, 256};
    const Schedule unit = generate_schedule(shape);
    shape.zero_bubble = {30'000'000'000'000'000, 30'000'000'000'000'000, 30'000'000'000'000'000, 0,
                         0};
    try {
        generate_schedule(shape);
        FAIL() << "3e7 s per pass was searched";
    } catch (const ScheduleConfigError& error) {
        EXPECT_NE(std::string(error.what()).find("run past 2^62 ns"), std::string::npos)
            << error.what();
    }
    shape.zero_bubble = {100'000'000'000'000, 100'000'000'000'000, 100'000'000'000'000, 0, 0};
    EXPECT_EQ(generate_schedule(shape).ranks, unit.ranks);
    shape.zero_bubble = {-1, 1, 1, 0, 0};
    EXPECT_THROW(generate_schedule(shape), ScheduleConfigError);
}

}  // namespace
}  // namespace pipelens
