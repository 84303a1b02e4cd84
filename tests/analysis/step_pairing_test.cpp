// Runs that repeat their program (run --steps N): each action's training step (training_steps'
// action_steps), and the analyses over the producer table pairing a consumer with the producer
// of its own step, with exact values on a 1F1B pp=2 m=2 program laid out three times on one
// clock: the critical path is each step's path in turn, each step's waits name that step's
// producers, a rank slow in one step is on the path in that step only, and re-timing it at its
// normal speed gives back the run where it never was slow.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/analysis/bubble_accounting.hpp"
#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/training_steps.hpp"
#include "tests/analysis/simulated_run.hpp"

namespace pipelens::analysis {
namespace {

using testing::find_action;
using testing::round_costs;
using testing::simulate_run;
using testing::two_steps;

constexpr std::int64_t kGapNs = 500;  // between one step's last end and the next step's start
constexpr ScheduleShape kOneFOneB{ScheduleKind::one_f_one_b, 2, 1, 2};

// `steps` run one after another, kGapNs apart.
TimedSchedule in_turn(const std::vector<TimedSchedule>& steps) {
    TimedSchedule run = steps.front();
    for (std::size_t step = 1; step < steps.size(); ++step)
        run = two_steps(run, steps[step], kGapNs);
    return run;
}

// `ref` of a one-step run, as the same action of step `step` of that run repeated.
ActionRef in_step(const TimedSchedule& one_step, ActionRef ref, int step) {
    const auto actions = static_cast<std::int32_t>(one_step.schedule.ranks[ref.rank].size());
    return {ref.rank, ref.index + step * actions};
}

std::string text_of(const TimedSchedule& timed, ActionRef ref) {
    return timed.schedule.text(timed.schedule.ranks[ref.rank][ref.index]);
}

std::vector<std::string> path_texts(const TimedSchedule& timed, const CriticalPath& path) {
    std::vector<std::string> texts;
    for (const PathLink& link : path.links)
        texts.push_back(text_of(timed, link.action));
    return texts;
}

// The computations on the path with their ranks' steps, e.g. "2:1F0" (transfers left out).
std::vector<std::string> compute_chain(const TimedSchedule& timed, const CriticalPath& path) {
    const auto steps = action_steps(timed.schedule);
    std::vector<std::string> chain;
    for (const PathLink& link : path.links)
        if (!timed.times[link.action.rank][link.action.index].communication_lane)
            chain.push_back(std::to_string(steps[link.action.rank][link.action.index]) + ":" +
                            text_of(timed, link.action));
    return chain;
}

std::vector<std::vector<std::int64_t>> recorded_ends(const TimedSchedule& timed) {
    std::vector<std::vector<std::int64_t>> ends(timed.times.size());
    for (std::size_t rank = 0; rank < timed.times.size(); ++rank)
        for (const ActionSpan& span : timed.times[rank])
            ends[rank].push_back(span.end_ns);
    return ends;
}

TEST(ActionSteps, AnActionsStepIsTheOccurrencesOfItsTextBeforeItOnItsRank) {
    Schedule schedule;
    schedule.rank_count = 2;
    schedule.stage_count = 2;
    schedule.microbatch_count = 2;
    schedule.stage_to_rank = {0, 1};  // stage 1's actions on rank 0, as a damaged run holds them
    schedule.ranks = {
        {make_action(0, ActionKind::forward, 0), make_action(0, ActionKind::forward, 1),
         make_action(1, ActionKind::forward, 0), make_action(0, ActionKind::forward, 0),
         make_action(0, ActionKind::full_backward, 0), make_action(0, ActionKind::unshard),
         make_action(0, ActionKind::unshard, -7),  // the same text: 0UNSHARD
         make_action(0, ActionKind::forward, 0), make_action(1, ActionKind::forward, 0)}};
    schedule.add_overlap(
        0, {make_action(1, ActionKind::forward, 1), make_action(0, ActionKind::full_backward, 1)});
    schedule.add_overlap(
        0, {make_action(1, ActionKind::forward, 1), make_action(0, ActionKind::full_backward, 0)});
    schedule.add_overlap(
        0, {make_action(1, ActionKind::forward, 1), make_action(0, ActionKind::full_backward, 1)});
    schedule.ranks.emplace_back();
    EXPECT_EQ(action_steps(schedule),
              (std::vector<std::vector<std::int32_t>>{{0, 0, 0, 1, 0, 0, 1, 2, 1, 0, 0, 1}, {}}));

    const TimedSchedule one = simulate_run(kOneFOneB, round_costs()).timed;
    const auto three = action_steps(in_turn({one, one, one}).schedule);
    ASSERT_EQ(three.size(), 2u);
    for (const auto& rank : three)
        EXPECT_EQ(rank, (std::vector<std::int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
                                                   1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}));
}

// F = 1000, B = 2000, transfers 100: rank 0 runs 0F0 [0, 1000], rank 1 1F0 [1100, 2100],
// 1B0 [2100, 4100], 1F1 [4100, 5100], 1B1 [5100, 7100], and rank 0 0B1 [7200, 9200], after
// 0B0 [4200, 6200]: the path runs through rank 1 and back.
// A run of many steps cut into steps holds each action once: no step keeps room for the whole
// run (a cleared copy of the run per step made the cut quadratic in memory).
TEST(StepPairing, EachStepHoldsOnlyItsOwnActions) {
    const auto one = simulate_run(kOneFOneB, round_costs());
    const TimedSchedule run = in_turn(std::vector<TimedSchedule>(64, one.timed));
    const std::vector<TrainingStep> steps = training_steps(run);
    ASSERT_EQ(steps.size(), 64u);
    for (const TrainingStep& step : steps)
        for (std::size_t rank = 0; rank < step.timed.schedule.ranks.size(); ++rank) {
            const auto& actions = step.timed.schedule.ranks[rank];
            ASSERT_EQ(actions.size(), one.timed.schedule.ranks[rank].size());
            EXPECT_LE(actions.capacity(), 2 * actions.size()) << "rank " << rank;
            EXPECT_LE(step.timed.schedule.parts.capacity(), 2 * step.timed.schedule.parts.size());
        }
}

TEST(StepPairing, TheCriticalPathOfARepeatedRunIsEachStepsPathInTurn) {
    const TimedSchedule one = simulate_run(kOneFOneB, round_costs()).timed;
    const CriticalPath step_path = critical_path(one, HoldGraph(one));
    const std::vector<std::string> step_texts = {"0F0", "0SEND_F0", "1RECV_F0", "1F0",      "1B0",
                                                 "1F1", "1B1",      "1SEND_B1", "0RECV_B1", "0B1"};
    ASSERT_EQ(path_texts(one, step_path), step_texts);
    ASSERT_EQ(step_path.end_ns, 9200);

    const TimedSchedule run = in_turn({one, one, one});
    const CriticalPath path = critical_path(run, HoldGraph(run));
    ASSERT_EQ(path.links.size(), 3 * step_texts.size());
    for (int step = 0; step < 3; ++step)
        for (std::size_t link = 0; link < step_path.links.size(); ++link) {
            const PathLink& got = path.links[step * step_path.links.size() + link];
            EXPECT_EQ(got.action, in_step(one, step_path.links[link].action, step))
                << "step " << step << " link " << link;
            EXPECT_EQ(text_of(run, got.action), step_texts[link]);
        }
    EXPECT_EQ(path.end_ns, 3 * 9200 + 2 * kGapNs);
    // Each step's 0F0 waited the gap for the step before it; the rest is the steps' own paths.
    EXPECT_EQ(path.links[10].waited_ns, kGapNs);
    EXPECT_EQ(path.links[20].waited_ns, kGapNs);
    for (std::size_t share = 0; share < kPathShareCount; ++share) {
        const std::int64_t gaps = share == static_cast<std::size_t>(PathShare::waiting) ? 2 : 0;
        EXPECT_EQ(path.share_ns[share], 3 * step_path.share_ns[share] + gaps * kGapNs)
            << share_name(static_cast<PathShare>(share));
    }
}

TEST(StepPairing, EachStepsWaitNamesThatStepsProducer) {
    const TimedSchedule one = simulate_run(kOneFOneB, round_costs()).timed;
    const TimedSchedule run = in_turn({one, one, one});
    const HoldGraph holds(run);
    for (int step = 0; step < 3; ++step) {
        const auto at = [&](int rank, const char* text) {
            return in_step(one, find_action(one, rank, text), step);
        };
        const WaitedFor forward = waited_for(run, holds, at(1, "1F0"));
        EXPECT_EQ(forward.peer, 0) << "step " << step;
        EXPECT_EQ(forward.held_by, at(1, "1RECV_F0")) << "step " << step;
        EXPECT_EQ(forward.waited_on, at(0, "0F0")) << "step " << step;

        const WaitedFor backward = waited_for(run, holds, at(0, "0B1"));
        EXPECT_EQ(backward.peer, 1) << "step " << step;
        EXPECT_EQ(backward.held_by, at(0, "0RECV_B1")) << "step " << step;
        EXPECT_EQ(backward.waited_on, at(1, "1B1")) << "step " << step;
    }
    // Per step, rank 0 waits 2200 on rank 1 between 0F1 and 0B0 and 1000 between 0B0 and 0B1.
    const auto bubbles = account_bubbles(run, holds, 3 * 9200 + 2 * kGapNs);
    EXPECT_EQ(bubbles[0].split.waiting_on_rank, (std::map<int, std::int64_t>{{1, 3 * 3200}}));
    EXPECT_EQ(bubbles[0].split.local_ns, 2 * kGapNs);
}

// Stage 0 takes F = I = W = 1000 and stage 1 F = 100, I = W = 50: rank 0 sets the pace and its
// path is 0F0 0F1 0B0 0B1 alone. Slowed 30 times (F = 3000, B = 3000), rank 1 sets it instead:
// 0F0, 1F0 [1100, 4100], 1B0, 1F1, 1B1 [10100, 13100], 0B1 [13200, 15200].
sim::CostModel rank_zero_paces(std::vector<double> rank_slowdown = {}) {
    sim::CostModel costs = round_costs(std::move(rank_slowdown));
    costs.stages = {sim::StageCost{1000, 1000, 1000, std::nullopt},
                    sim::StageCost{100, 50, 50, std::nullopt}};
    return costs;
}

TEST(StepPairing, ARankSlowInOneStepIsOnThePathInThatStepOnly) {
    const TimedSchedule fast = simulate_run(kOneFOneB, rank_zero_paces()).timed;
    const TimedSchedule slow = simulate_run(kOneFOneB, rank_zero_paces({1, 30})).timed;
    ASSERT_EQ(latest_end(fast), 6000);
    ASSERT_EQ(latest_end(slow), 15200);

    const TimedSchedule run = in_turn({fast, fast, slow});
    const CriticalPath path = critical_path(run, HoldGraph(run));
    EXPECT_EQ(
        compute_chain(run, path),
        (std::vector<std::string>{"0:0F0", "0:0F1", "0:0B0", "0:0B1", "1:0F0", "1:0F1", "1:0B0",
                                  "1:0B1", "2:0F0", "2:1F0", "2:1B0", "2:1F1", "2:1B1", "2:0B1"}));
    EXPECT_EQ(path.end_ns, 2 * 6000 + 15200 + 2 * kGapNs);
}

TEST(StepPairing, RetimingTheSlowStepAtNormalSpeedGivesBackTheRunThatWasNeverSlow) {
    const TimedSchedule fast = simulate_run(kOneFOneB, rank_zero_paces()).timed;
    const TimedSchedule slow = simulate_run(kOneFOneB, rank_zero_paces({1, 30})).timed;
    const TimedSchedule run = in_turn({fast, fast, slow});
    const auto steps = action_steps(run.schedule);
    // The steps start at the same moments in both runs: the fast run's last step is laid out
    // where the slow one started.
    TimedSchedule never_slow = in_turn({fast, fast, fast});

    const auto ends = retime(run, [&](ActionRef ref) {
        const ActionSpan& span = run.times[ref.rank][ref.index];
        const std::int64_t took = span.end_ns - span.start_ns;
        if (ref.rank != 1 || steps[1][ref.index] != 2 || span.communication_lane)
            return took;
        return static_cast<std::int64_t>(std::llround(static_cast<double>(took) / 30));
    });
    EXPECT_EQ(ends, recorded_ends(never_slow));
    EXPECT_EQ(retimed_end(ends), 3 * 6000 + 2 * kGapNs);
}

// The step that stands for a run of several is the first that took the median step time, the
// upper middle of an even count as the runtime takes it; none when no step took it.
TEST(MedianStep, IsTheFirstStepThatTookTheMedianTime) {
    EXPECT_EQ(median_step({300, 100, 200}, 200), 2u);
    EXPECT_EQ(median_step({400, 100, 300, 200}, 300), 2u);
    EXPECT_EQ(median_step({5, 7, 7, 9}, 7), 1u);
    EXPECT_EQ(median_step({5}, 5), 0u);
    EXPECT_FALSE(median_step({5, 6}, 0));
    EXPECT_FALSE(median_step({}, 5));
}

}  // namespace
}  // namespace pipelens::analysis
