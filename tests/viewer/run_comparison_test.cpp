// A real run against its simulation in the viewer's model, as `pipelens diff` and `pipelens
// summary --stragglers` see them: both runs are simulations of 1F1B pp=2 m=4 (F 1000 ns, I and W
// 1000 ns each, transfers 100 ns), the "real" one with rank 1 at 1.5x and recorded as real. Its
// step-time difference is all speed; rank 1 is flagged a straggler with the exact cost; the
// numbers equal engine/analysis's on the file's rows; a pair diff refuses has no split; runs of
// several steps show the medians and the mean split, or a picked step's row.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "app/viewer/rank_stragglers.hpp"
#include "app/viewer/trace_session.hpp"
#include "engine/analysis/run_divergence.hpp"
#include "engine/analysis/stragglers.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/viewer/multi_step_trace.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::viewer {
namespace {

namespace fs = std::filesystem;

void record(traces::TraceWriter& writer, ScheduleKind kind, std::vector<double> slowdown) {
    const Schedule lowered = lower(generate_schedule({kind, 2, 1, 4}));
    sim::CostModel costs;
    costs.stages = {sim::StageCost{1000, 1000, 1000, std::nullopt}};
    costs.intra_host.latency_ns = 100;
    costs.inter_host.latency_ns = 100;
    costs.rank_slowdown = std::move(slowdown);
    traces::RunRecord run;
    run.schedule = lowered.name;
    run.pp = 2;
    run.m = 4;
    sim::record_simulation(writer, lowered, costs, sim::simulate(lowered, costs), run);
}

// Run 1: the simulation; run 2: the "real" run, rank 1 at 1.5x (a simulation records itself as
// one: relabelled as `pipelens diff`'s tests do); run 3 (`gpipe`): GPipe.
fs::path real_and_simulated(const std::string& name, bool gpipe = false) {
    const fs::path path = testing::fresh_trace(name);
    {
        traces::TraceWriter writer(path);
        record(writer, ScheduleKind::one_f_one_b, {});
        record(writer, ScheduleKind::one_f_one_b, {1, 1.5});
        if (gpipe)
            record(writer, ScheduleKind::gpipe, {});
    }
    EXPECT_EQ(testing::edit_trace(path, "UPDATE runs SET kind = 'real' WHERE id = 2"), 1);
    return path;
}

// 1F1B pp=2 m=4: (m + pp - 1) (F + B) and four transfers on the critical path; at 1.5x, rank 1's
// four F and B (18 us) between rank 0's first F and its last B, each across a transfer.
constexpr std::int64_t kSimulatedStepNs = 5 * 3000 + 4 * 100;             // 15.400 us
constexpr std::int64_t kRealStepNs = 1000 + 100 + 4 * 4500 + 100 + 2000;  // 21.200 us

TEST(RunComparison, ARealRunAgainstItsSimulationIsSplitAsDiffSplitsIt) {
    const fs::path path = real_and_simulated("comparison_split");
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    ASSERT_EQ(session.run_id, 2);
    EXPECT_TRUE(split_lines(session, std::nullopt).empty());  // nothing compared yet
    compare_with(session, 1);
    ASSERT_TRUE(session.split.divergence) << session.split.refused;
    const analysis::RunDivergence& divergence = *session.split.divergence;
    ASSERT_EQ(divergence.steps.size(), 1u);
    const analysis::StepDivergence& step = divergence.steps[0];
    EXPECT_EQ(step.step_time.measured, kRealStepNs);
    EXPECT_EQ(step.step_time.simulated, kSimulatedStepNs);
    EXPECT_EQ(step.split.speed_ns, kRealStepNs - kSimulatedStepNs);  // all of it speed
    EXPECT_EQ(step.split.kinds_ns, 0);
    EXPECT_EQ(step.split.communication_ns, 0);
    EXPECT_EQ(step.split.ordering_ns, 0);
    const std::vector<std::string> lines = {
        "run 2 (real) 21.200 us vs run 1 (sim) 15.400 us: +5.800 us",
        "speed +5.800 us  kinds 0 ns  communication 0 ns  ordering 0 ns"};
    EXPECT_EQ(split_lines(session, std::nullopt), lines);
    EXPECT_EQ(split_lines(session, 0), (std::vector<std::string>{"step 0: " + lines[0], lines[1]}));
    EXPECT_EQ(split_lines(session, 1),
              std::vector<std::string>{"step 1: no step of the other run to compare"});

    // What `pipelens diff` computes from the file's rows: the same numbers.
    const traces::TraceReader reader(path);
    const analysis::RunDivergence from_file = analysis::run_divergence(
        analysis::read_timed_schedule(reader, 2), analysis::read_timed_schedule(reader, 1));
    ASSERT_EQ(from_file.steps.size(), 1u);
    EXPECT_EQ(from_file.steps[0].step_time.measured, step.step_time.measured);
    EXPECT_EQ(from_file.steps[0].step_time.simulated, step.step_time.simulated);
    EXPECT_EQ(from_file.steps[0].split.speed_ns, step.split.speed_ns);
    EXPECT_EQ(from_file.steps[0].split.ordering_ns, step.split.ordering_ns);
    fs::remove(path);
}

TEST(RunComparison, TheRealRunIsTheMeasuredSideWhicheverIsShown) {
    const fs::path path = real_and_simulated("comparison_sides");
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path, 1)) << session.error;  // the simulation shown
    compare_with(session, 2);
    EXPECT_FALSE(session.split.shown_measured);
    EXPECT_EQ(session.split.measured.id, 2);
    EXPECT_EQ(split_lines(session, std::nullopt),
              (std::vector<std::string>{
                  "run 2 (real) 21.200 us vs run 1 (sim) 15.400 us: +5.800 us",
                  "speed +5.800 us  kinds 0 ns  communication 0 ns  ordering 0 ns"}));
    fs::remove(path);
}

TEST(RunComparison, APairDiffRefusesHasNoSplitAndSaysWhy) {
    const fs::path path = real_and_simulated("comparison_refused", true);
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path, 2)) << session.error;
    compare_with(session, 3);
    EXPECT_FALSE(session.split.divergence);
    EXPECT_EQ(
        split_lines(session, std::nullopt),
        std::vector<std::string>{"no split: run 2 has schedule 1F1B but run 3 has schedule GPipe"});
    compare_with(session, 0);  // no comparison: no lines
    EXPECT_TRUE(split_lines(session, std::nullopt).empty());
    fs::remove(path);
}

// A failed run has no step: no split is set against the other run's (the sidebar once said "no
// step to compare" and then printed one), as `pipelens diff` refuses the pair.
TEST(RunComparison, ARunWithoutAStepHasNoSplit) {
    const fs::path path = real_and_simulated("comparison_failed");
    EXPECT_EQ(testing::edit_trace(path,
                                  "UPDATE runs SET status = 'failed', step_time_ns = NULL, "
                                  "bubble_ratio = NULL WHERE id = 2"),
              1);
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path, 2)) << session.error;
    compare_with(session, 1);
    EXPECT_FALSE(session.split.divergence);
    EXPECT_EQ(
        split_lines(session, std::nullopt),
        std::vector<std::string>{"no split: run 2 has no step: diff compares finished steps"});
    fs::remove(path);
}

TEST(RunComparison, TheSlowRankIsAStragglerWithItsExactCost) {
    const fs::path path = real_and_simulated("comparison_straggler");
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    finish_analysis(session);
    const analysis::StragglerReport& report = session.model->stragglers();
    EXPECT_FALSE(report.calibrated);  // no profile rows: the other ranks are the reference
    ASSERT_EQ(report.flagged.size(), 1u);
    const analysis::RankStraggle& flagged = report.flagged[0];
    EXPECT_EQ(flagged.rank, 1);
    EXPECT_EQ(flagged.step, 0);
    EXPECT_EQ(flagged.ratio, 1.5);
    EXPECT_TRUE(flagged.on_critical_path);
    EXPECT_EQ(flagged.cost_ns, kRealStepNs - kSimulatedStepNs);
    EXPECT_EQ(straggle_text(flagged, report.calibrated),
              "rank 1: 1.50x the reference compute at step 0, on the critical path, cost "
              "5.800 us");
    EXPECT_EQ(marked_ranks(report, 2, std::nullopt), (std::vector<bool>{false, true}));
    EXPECT_EQ(marked_ranks(report, 2, 0), (std::vector<bool>{false, true}));
    EXPECT_EQ(marked_ranks(report, 2, 1), (std::vector<bool>{false, false}));
    EXPECT_EQ(rank_straggles(report, 1, std::nullopt).size(), 1u);
    EXPECT_TRUE(rank_straggles(report, 0, std::nullopt).empty());
    EXPECT_TRUE(rank_straggles(report, 1, 1).empty());

    // `pipelens summary --stragglers` reads the same from the file.
    const traces::TraceReader reader(path);
    const analysis::StragglerReport from_file = analysis::read_stragglers(reader, reader.run(2));
    ASSERT_EQ(from_file.flagged.size(), 1u);
    EXPECT_EQ(from_file.flagged[0].ratio, flagged.ratio);
    EXPECT_EQ(from_file.flagged[0].cost_ns, flagged.cost_ns);
    EXPECT_EQ(from_file.steps[0].relative_throughput, report.steps[0].relative_throughput);

    // The simulation has no straggler; a threshold at the ratio flags none.
    ASSERT_TRUE(show_run(session, 1));
    finish_analysis(session);
    EXPECT_TRUE(session.model->stragglers().flagged.empty());
    session.straggler_threshold = 1.5;
    ASSERT_TRUE(show_run(session, 2));
    finish_analysis(session);
    EXPECT_TRUE(session.model->stragglers().flagged.empty());
    EXPECT_EQ(session.model->stragglers().threshold, 1.5);
    fs::remove(path);
}

// Two runs of three steps (multi_step_trace.hpp), the same times: every step's row and the
// medians over the steps are zeros, each named as diff names them.
TEST(RunComparison, OverSeveralStepsTheMediansAndTheMeanSplitOrOneStepsRow) {
    const fs::path path = testing::fresh_trace("comparison_steps");
    {
        traces::TraceWriter writer(path);
        for (int run = 0; run < 2; ++run) {
            const std::int64_t id = testing::begin_multi_step_run(writer);
            for (int step = 0; step < 3; ++step)
                testing::write_step(writer, id, step);
            writer.finish_run(id, testing::kStepSpanNs, 0.5);
        }
    }
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    compare_with(session, 1);
    ASSERT_TRUE(session.split.divergence) << session.split.refused;
    EXPECT_EQ(session.split.divergence->steps.size(), 3u);
    EXPECT_EQ(split_lines(session, std::nullopt),
              (std::vector<std::string>{
                  "over 3 steps, median: run 2 (sim) 6.000 us vs run 1 (sim) 6.000 us: 0 ns",
                  "mean speed 0 ns  kinds 0 ns  communication 0 ns  ordering 0 ns"}));
    EXPECT_EQ(
        split_lines(session, 2),
        (std::vector<std::string>{"step 2: run 2 (sim) 6.000 us vs run 1 (sim) 6.000 us: 0 ns",
                                  "speed 0 ns  kinds 0 ns  communication 0 ns  ordering 0 ns"}));
    fs::remove(path);
}

// A run of three steps, numbered afresh each step as a real run is (run 1), against one step
// (run 2) whose 0F0 takes 1500 ns instead of 1000 and whose 1B0 ends 100 ns later (3900).
fs::path three_steps_against_one(const std::string& name) {
    const fs::path path = testing::fresh_trace(name);
    traces::TraceWriter writer(path);
    const std::int64_t three = testing::begin_multi_step_run(writer);
    for (int step = 0; step < 3; ++step)
        testing::write_step(writer, three, step, testing::ActionNumbering::afresh_each_step);
    writer.finish_run(three, testing::kStepSpanNs, 0.5);
    const std::int64_t one = testing::begin_multi_step_run(writer);
    struct Piece {
        int rank, stage, step;
        std::uint8_t kind;
        std::int64_t start, end;
    };
    for (const Piece& piece : {Piece{0, 0, 0, 0, 0, 1500}, Piece{0, 0, 1, 3, 4000, 6000},
                               Piece{1, 1, 0, 0, 1200, 2200}, Piece{1, 1, 1, 3, 2200, 3900}}) {
        traces::ActionRecord action;
        action.rank = piece.rank;
        action.step = piece.step;
        action.kind = piece.kind;
        action.stage = piece.stage;
        action.microbatch = 0;
        action.start_ns = piece.start;
        action.end_ns = piece.end;
        writer.add_action(one, action);
    }
    writer.finish_run(one, testing::kStepSpanNs, 0.5);
    return path;
}

// Every step of the three meets the one step (as diff pairs them): its ghosts are on every step,
// each action's difference is listed once with its step and a difference of 0 never, and with
// a step picked the step line, the ranks' busy times and the list are that step's.
TEST(RunComparison, EachStepOfARunOfSeveralMeetsTheComparedStep) {
    const fs::path path = three_steps_against_one("comparison_per_step");
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path, 1)) << session.error;
    compare_with(session, 2);
    const StepMatch& match = session.match;
    EXPECT_EQ(match.compared_step, (std::vector<std::optional<int>>{0, 0, 0}));
    ASSERT_EQ(match.ghosts.size(), 2u);
    std::vector<std::pair<std::int64_t, std::int64_t>> ghosts;
    for (const TimelineAction& ghost : match.ghosts[0].compute.actions)
        ghosts.emplace_back(ghost.start_ns, ghost.end_ns);
    EXPECT_EQ(ghosts, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1500},
                                                                          {4000, 6000},
                                                                          {10000, 11500},
                                                                          {14000, 16000},
                                                                          {20000, 21500},
                                                                          {24000, 26000}}));

    // 0F0 -500 ns and 1B0 -100 ns in each step; nothing else differs.
    const std::vector<ActionDifference> all = largest_differences(match, std::nullopt);
    ASSERT_EQ(all.size(), 6u);
    for (int step = 0; step < 3; ++step) {
        EXPECT_EQ(all[static_cast<std::size_t>(step)].step, step);
        EXPECT_EQ(all[static_cast<std::size_t>(step)].delta_ns, -500);
        EXPECT_EQ(all[static_cast<std::size_t>(step)].at,
                  (ActionLocation{0, false, static_cast<std::size_t>(2 * step)}));
    }
    EXPECT_EQ(difference_text(*session.model, all[2], true), "0F0 (step 2) -500 ns");
    EXPECT_EQ(difference_text(*session.model, all[3], false), "1B0        -100 ns");
    const std::vector<ActionDifference> step1 = largest_differences(match, 1);
    ASSERT_EQ(step1.size(), 2u);
    EXPECT_EQ(step1[0].at, (ActionLocation{0, false, 2}));
    EXPECT_EQ(step1[1].at, (ActionLocation{1, false, 3}));

    // The tooltip's duration of step 2's 0F0 is the compared step's.
    const TimelineAction& forward = session.model->action({0, false, 4});
    EXPECT_EQ(match.durations.at(forward.label), 1500);

    // Step 1 (6000 ns) against the compared step (6000 ns); its busy times per rank.
    EXPECT_EQ(comparison_line(session, 1), "step 1 vs run 2's step 0: 0 ns (+0.0%)");
    EXPECT_EQ(rank_busy_lines(*session.model, *session.compared, match, 1),
              (std::vector<std::string>{"rank 0 busy -500 ns", "rank 1 busy -100 ns"}));
    // Ranks busy as long in both runs are counted, not listed one by one.
    EXPECT_EQ(rank_busy_lines(*session.model, *session.model, match, std::nullopt),
              (std::vector<std::string>{"2 ranks are busy as long in both runs"}));
    fs::remove(path);
}

// Two runs whose durations are all the same list no difference, not eight of 0 ns.
TEST(RunComparison, NoDifferenceIsListedWhenNoDurationDiffers) {
    const fs::path path = testing::fresh_trace("comparison_no_difference");
    {
        traces::TraceWriter writer(path);
        for (int run = 0; run < 2; ++run) {
            const std::int64_t id = testing::begin_multi_step_run(writer);
            testing::write_step(writer, id, 0);
            writer.finish_run(id, testing::kStepSpanNs, 0.5);
        }
    }
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    compare_with(session, 1);
    EXPECT_TRUE(largest_differences(session.match, std::nullopt).empty());
    EXPECT_TRUE(largest_differences(session.match, 0).empty());
    fs::remove(path);
}

}  // namespace
}  // namespace pipelens::viewer
