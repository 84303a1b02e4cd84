// A run's training steps in the viewer's model: found from the actions of a 3-step trace (at the
// exact times the writer gave them, however the trace numbers its actions), the step picker's
// ranges and fitted views, and the per-step figures of the run summary.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/viewer/run_steps.hpp"
#include "app/viewer/run_summary.hpp"
#include "app/viewer/trace_session.hpp"
#include "tests/viewer/multi_step_trace.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {
namespace {

using testing::kStepBusyNs;
using testing::kStepPeriodNs;
using testing::kStepSpanNs;

std::vector<RunStep> steps_of(const std::filesystem::path& path) {
    const traces::TraceReader reader(path);
    return find_steps(TimelineModel::load(reader, reader.latest_run_id()));
}

std::vector<RunStep> expected_steps(int count) {
    std::vector<RunStep> steps;
    for (int step = 0; step < count; ++step)
        steps.push_back({step, step * kStepPeriodNs, step * kStepPeriodNs + kStepSpanNs,
                         kStepBusyNs, 4});  // each rank's F and B
    return steps;
}

TEST(RunSteps, AThreeStepTraceHasItsStepsAtTheWrittenTimes) {
    const std::vector<RunStep> steps = steps_of(testing::multi_step_trace("steps_three", 3));
    EXPECT_EQ(steps, expected_steps(3));
    // Boundaries: step 1 at 10 us, step 2 at 20 us.
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(steps[1].start_ns, 10'000);
    EXPECT_EQ(steps[2].start_ns, 20'000);
}

TEST(RunSteps, ActionsNumberedAfreshEachStepGiveTheSameSteps) {
    EXPECT_EQ(steps_of(testing::multi_step_trace("steps_afresh", 3,
                                                 testing::ActionNumbering::afresh_each_step)),
              expected_steps(3));
}

TEST(RunSteps, ARunOfOneStepHasOneAndARunWithoutActionsNone) {
    EXPECT_EQ(steps_of(testing::multi_step_trace("steps_one", 1)), expected_steps(1));
    EXPECT_TRUE(steps_of(testing::multi_step_trace("steps_none", 0)).empty());
}

TEST(RunSteps, ThePickersRangeIsTheStepOrTheWholeRun) {
    const std::vector<RunStep> steps = expected_steps(3);
    const TimeSpan run_end{0, 26'000};
    EXPECT_EQ(step_range(steps, std::nullopt, run_end),
              std::make_pair(std::int64_t{0}, run_end.end_ns));
    EXPECT_EQ(step_range(steps, 0, run_end), std::make_pair(std::int64_t{0}, std::int64_t{6000}));
    EXPECT_EQ(step_range(steps, 1, run_end),
              std::make_pair(std::int64_t{10'000}, std::int64_t{16'000}));
    EXPECT_EQ(step_range(steps, 2, run_end),
              std::make_pair(std::int64_t{20'000}, std::int64_t{26'000}));
    // A step the run does not have reads as every step.
    EXPECT_EQ(step_range(steps, 3, run_end), std::make_pair(std::int64_t{0}, run_end.end_ns));
    EXPECT_EQ(step_range(steps, -1, run_end), std::make_pair(std::int64_t{0}, run_end.end_ns));
}

TEST(RunSteps, AllStepsFitTheWholeRunAndAPickedStepItselfWithAMargin) {
    const std::vector<RunStep> steps = expected_steps(3);
    const TimelineGeometry all = fitted_step_geometry(1280, steps, std::nullopt, {0, 26'000});
    EXPECT_EQ(all.view_start, 0);
    EXPECT_EQ(all.view_end, 26'520);  // 2% after the end, as fitted_geometry
    const TimelineGeometry one = fitted_step_geometry(1280, steps, 1, {0, 26'000});
    EXPECT_EQ(one.view_start, 9'880);  // 2% of 6 us either side
    EXPECT_EQ(one.view_end, 16'120);
    EXPECT_EQ(one.left, all.left);
    EXPECT_EQ(one.width, all.width);
}

TEST(RunSteps, PerStepFiguresAreStepTimeAndBubble) {
    const RunStep step{1, 10'000, 16'000, 5'600};
    EXPECT_EQ(step.step_ns(), 6'000);
    EXPECT_DOUBLE_EQ(step.bubble_ratio(2), 1.0 - 5'600.0 / 12'000.0);
    EXPECT_EQ(step_figures_text(step, 2), "step 1: 6.000 us, bubble 53.3%");
    EXPECT_EQ(RunStep{}.bubble_ratio(2), 0.0);  // an empty step has no idle share
}

TEST(RunSteps, TheRunSummaryCountsTheStepsOfARunWithSeveral) {
    TraceSession three;
    ASSERT_TRUE(open_trace(three, testing::multi_step_trace("steps_summary", 3))) << three.error;
    EXPECT_EQ(three.summary.steps, expected_steps(3));
    EXPECT_TRUE(three.summary_line.ends_with("  |  3 steps")) << three.summary_line;
    TraceSession one;
    ASSERT_TRUE(open_trace(one, testing::multi_step_trace("steps_summary_one", 1))) << one.error;
    EXPECT_EQ(one.summary.steps.size(), 1u);
    EXPECT_EQ(one.summary_line.find("steps"), std::string::npos) << one.summary_line;
}

// Every step repeats each recorded index (0F0 is index 0 in each), so a search, --select or a
// click on a listed action takes the copy in the step shown, and the details name the training
// step apart from the index.
TEST(RunSteps, FindingAnActionTakesTheCopyInTheShownStep) {
    TraceSession session;
    ASSERT_TRUE(open_trace(
        session,
        testing::multi_step_trace("steps_select", 3, testing::ActionNumbering::afresh_each_step)))
        << session.error;
    const ActionLocation step0{0, false, 0}, step2{0, false, 4};
    EXPECT_EQ(find_action(session, "0F0", std::nullopt), std::optional(step0));
    EXPECT_EQ(find_action(session, "0F0", 2), std::optional(step2));
    EXPECT_EQ(find_action(session, "1B0", 1), std::optional(ActionLocation{1, false, 3}));
    EXPECT_EQ(session.model->action(*find_action(session, "0F0", 2)).start_ns, 20'000);
    EXPECT_EQ(find_action(session, "0F0", 7), std::optional(step0));  // no step 7: the first
    EXPECT_EQ(find_action(session, "9F9", 2), std::nullopt);
    EXPECT_EQ(action_step_text(session, step2), "training step 2, index 0 in its rank's list");
    EXPECT_EQ(action_step_text(session, {1, false, 3}),
              "training step 1, index 1 in its rank's list");

    TraceSession one;
    ASSERT_TRUE(open_trace(one, testing::multi_step_trace("steps_select_one", 1))) << one.error;
    EXPECT_EQ(action_step_text(one, {0, false, 1}), "index 1 in its rank's list");
}

// A step being written holds fewer actions than a whole one: while its run is running it has no
// step time (its end is only the latest action so far), the header counts the whole steps apart
// from it, and it is in progress while the trace is being written, incomplete otherwise.
TEST(RunSteps, ARunningRunsShortLastStepIsInProgress) {
    std::vector<RunStep> steps(3);
    for (int index = 0; index < 3; ++index) {
        steps[index].step = index;
        steps[index].action_count = index < 2 ? 32 : 5;
    }
    EXPECT_TRUE(last_step_incomplete(steps, true));
    EXPECT_FALSE(last_step_incomplete(steps, false));  // finished or failed: it ended there
    steps[2].action_count = 32;
    EXPECT_FALSE(last_step_incomplete(steps, true));
    EXPECT_FALSE(last_step_incomplete({steps[0]}, true));  // a lone first step cannot be told
    steps[2].action_count = 5;
    EXPECT_EQ(incomplete_step_text(steps[2], 32, true),
              "step 2: in progress, 5 of 32 actions so far");
    // A run left `running` by a writer that died never grows: its last step is cut off.
    EXPECT_EQ(incomplete_step_text(steps[2], 32, false), "step 2: incomplete, 5 of 32 actions");
    RunSummary summary;
    summary.steps = steps;
    summary.last_step_incomplete = true;
    summary.writing = true;
    std::vector<std::string> figures = summary_figures(summary);
    EXPECT_NE(std::find(figures.begin(), figures.end(), "2 steps + 1 in progress"), figures.end());
    summary.writing = false;
    figures = summary_figures(summary);
    EXPECT_NE(std::find(figures.begin(), figures.end(), "2 steps + 1 incomplete"), figures.end());
}

TEST(OccurrenceNumbers, CountEachKeysEarlierCopies) {
    EXPECT_EQ(occurrence_numbers({7, 3, 7, 7, 3}), (std::vector<int>{0, 0, 1, 2, 1}));
    EXPECT_EQ(occurrence_numbers({5, 4, 3}), (std::vector<int>{0, 0, 0}));
    EXPECT_TRUE(occurrence_numbers({}).empty());
}

}  // namespace
}  // namespace pipelens::viewer
