// The critical path and bubble causes following the step picker, on a 3-step trace
// (multi_step_trace.hpp: 1F1B pp=2 m=1, no transfers, so an F of stage 1 waits for stage 0's F
// directly and a B of stage 0 for stage 1's B). Over the whole run each input's producer is the
// action with its text in the same training step (critical_path.hpp's rules), so the path is each
// step's pipeline in turn; one step alone has its own pipeline's path; a step's gaps wait on
// nothing before the step; the gaps of other steps keep the whole run's causes; going back to
// every step restores the whole run's analysis.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "app/viewer/run_summary.hpp"
#include "app/viewer/trace_session.hpp"
#include "tests/viewer/multi_step_trace.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {
namespace {

// Each rank's compute lane holds its F and B of each step: step k's F at index 2k, its B at
// 2k + 1.
ActionLocation compute(int rank, std::size_t index) {
    return {rank, false, index};
}

std::size_t flagged_count(const TimelineModel& model) {
    std::size_t count = 0;
    for (const RankTimeline& rank : model.ranks())
        for (const Lane* lane : {&rank.compute, &rank.communication})
            for (const TimelineAction& action : lane->actions)
                count += action.on_critical_path;
    return count;
}

// The bubble of `rank` that ends in its compute action `before`.
const Bubble& bubble_before(const TimelineModel& model, int rank, std::int32_t before) {
    for (const Bubble& bubble : model.ranks()[static_cast<std::size_t>(rank)].bubbles)
        if (bubble.before == before)
            return bubble;
    ADD_FAILURE() << "no bubble before " << before << " on rank " << rank;
    return model.ranks()[0].bubbles.front();
}

// The figures beside each rank's lanes follow a picked step: rank 0 computes 3000 of each
// step's 6000 ns, rank 1 2600 (multi_step_trace.hpp).
TEST(StepAnalysis, TheRanksSharesFollowAPickedStep) {
    const auto path = testing::multi_step_trace("analysis_shares", 3);
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    ASSERT_EQ(session.summary.step_busy_ns.size(), 3u);
    for (const std::vector<std::int64_t>& busy : session.summary.step_busy_ns)
        EXPECT_EQ(busy, (std::vector<std::int64_t>{3000, 2600}));
    const std::vector<RankTimeline>& ranks = session.model->ranks();
    EXPECT_EQ(rank_shares_text(ranks[0], session.summary, false, 1), "busy 50%  bubble 50%");
    EXPECT_EQ(rank_shares_text(ranks[1], session.summary, false, 1), "busy 43%  bubble 57%");
    // The Ranks panel's busy column follows the picked step too.
    const std::vector<RankRow> rows = rows_for_step(session.summary, 1);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].busy_ns, 3000);
    EXPECT_EQ(rows[1].busy_ns, 2600);
    EXPECT_EQ(rows_for_step(session.summary, 7)[0].busy_ns, session.summary.ranks[0].busy_ns);
}

TEST(StepAnalysis, TheWholeRunsPathRunsThroughEveryStep) {
    const auto path = testing::multi_step_trace("analysis_whole", 3);
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    finish_analysis(session);
    const TimelineModel& model = *session.model;
    EXPECT_EQ(model.analysed_step(), std::nullopt);
    // Each step's 0F -> 1F -> 1B -> 0B in turn: per step F 2000, B 3600 and 400 waited inside
    // it, and the 4000 between steps waited: 26000 in all.
    const std::vector<ActionLocation> expected = {
        compute(0, 0), compute(1, 0), compute(1, 1), compute(0, 1), compute(0, 2), compute(1, 2),
        compute(1, 3), compute(0, 3), compute(0, 4), compute(1, 4), compute(1, 5), compute(0, 5)};
    EXPECT_EQ(model.critical_path().actions, expected);
    EXPECT_EQ(flagged_count(model), 12u);
    EXPECT_EQ(session.critical_path_line, "critical path (all 3 steps): F 23% B 42% waiting 35%");
}

TEST(StepAnalysis, AStepAloneHasItsOwnPathAndBubbleCauses) {
    const auto path = testing::multi_step_trace("analysis_step", 3);
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    analyse_step(session, 1);  // chosen while the whole run's analysis may still run
    finish_analysis(session);
    const TimelineModel& model = *session.model;
    ASSERT_EQ(model.analysed_step(), std::optional<int>(1));
    ASSERT_TRUE(model.critical_path().error.empty()) << model.critical_path().error;
    // Step 1's pipeline: 0F0 [10000, 11000), 1F0 [11200, 12200) after it, 1B0 to 13800, 0B0
    // [14000, 16000): the 200 ns before each of the last three waited; the step ends at 6000.
    const std::vector<ActionLocation> expected = {compute(0, 2), compute(1, 2), compute(1, 3),
                                                  compute(0, 3)};
    EXPECT_EQ(model.critical_path().actions, expected);
    EXPECT_EQ(flagged_count(model), 4u);
    // Drawn on the run's clock, where the step's actions are, not from the step's own zero.
    const std::vector<std::pair<std::int64_t, std::int64_t>> drawn = {
        {10000, 11000}, {11200, 12200}, {12200, 13800}, {14000, 16000}};
    EXPECT_EQ(model.critical_path().times, drawn);
    const auto& share = model.critical_path().share_ns;
    EXPECT_EQ(share[static_cast<int>(analysis::PathShare::forward)], 2000);
    EXPECT_EQ(share[static_cast<int>(analysis::PathShare::full_backward)], 3600);
    EXPECT_EQ(share[static_cast<int>(analysis::PathShare::waiting)], 400);
    EXPECT_EQ(session.critical_path_line, "critical path (step 1): F 33% B 60% waiting 7%");

    // Rank 0's gap before step 1's F: over the whole run it waited for step 0's B (a click goes
    // there); alone, the step's first F waited for nothing. Rank 1's gap before step 1's F
    // waited for rank 0's F of step 1, over the whole run and alone.
    EXPECT_EQ(bubble_before(model, 0, 2).waited_on, std::nullopt);
    const RankTimeline& rank1 = model.ranks()[1];
    EXPECT_EQ(bubble_before(model, 1, 2).waited_on, std::optional(compute(0, 2)));
    EXPECT_EQ(model.describe(rank1, bubble_before(model, 1, 2)), "waiting on rank 0 (0F0)");
    EXPECT_EQ(bubble_before(model, 0, 3).waited_on, std::optional(compute(1, 3)));
    EXPECT_EQ(model.describe(model.ranks()[0], bubble_before(model, 0, 3)),
              "waiting on rank 1 (1B0)");
    // Step 2's gaps keep the whole run's causes: rank 0's first F waited on its own stream,
    // rank 1's F for rank 0's F of the same step.
    EXPECT_EQ(bubble_before(model, 0, 4).waited_on, std::optional(compute(0, 3)));
    EXPECT_EQ(bubble_before(model, 1, 4).waited_on, std::optional(compute(0, 4)));
    EXPECT_EQ(model.describe(rank1, bubble_before(model, 1, 4)), "waiting on rank 0 (0F0)");

    analyse_step(session, std::nullopt);  // every step again: at once, nothing analysed again
    EXPECT_FALSE(session.pending_analysis.valid());
    EXPECT_EQ(model.analysed_step(), std::nullopt);
    EXPECT_EQ(model.critical_path().actions.size(), 12u);
    EXPECT_EQ(flagged_count(model), 12u);
    EXPECT_EQ(bubble_before(model, 0, 2).waited_on, std::optional(compute(0, 1)));
    EXPECT_EQ(bubble_before(model, 1, 2).waited_on, std::optional(compute(0, 2)));
    EXPECT_EQ(model.describe(rank1, bubble_before(model, 1, 2)), "waiting on rank 0 (0F0)");
    EXPECT_EQ(session.critical_path_line, "critical path (all 3 steps): F 23% B 42% waiting 35%");
}

// A real run numbers each rank's actions afresh every step (`actions.step` is the index in the
// rank's list), so step 1's 0F0 has the same recorded index as step 0's: the path of the whole
// run and of a step alone are still drawn on that step's own copies.
TEST(StepAnalysis, APathFollowsItsStepWhenEveryStepRepeatsTheIndices) {
    const auto path =
        testing::multi_step_trace("analysis_afresh", 3, testing::ActionNumbering::afresh_each_step);
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    finish_analysis(session);
    const TimelineModel& model = *session.model;
    const std::vector<ActionLocation> whole = {
        compute(0, 0), compute(1, 0), compute(1, 1), compute(0, 1), compute(0, 2), compute(1, 2),
        compute(1, 3), compute(0, 3), compute(0, 4), compute(1, 4), compute(1, 5), compute(0, 5)};
    EXPECT_EQ(model.critical_path().actions, whole);
    EXPECT_EQ(session.critical_path_line, "critical path (all 3 steps): F 23% B 42% waiting 35%");
    for (int step = 0; step < 3; ++step) {
        analyse_step(session, step);
        finish_analysis(session);
        const auto first = static_cast<std::size_t>(2 * step);
        const std::vector<ActionLocation> expected = {compute(0, first), compute(1, first),
                                                      compute(1, first + 1), compute(0, first + 1)};
        EXPECT_EQ(model.critical_path().actions, expected) << "step " << step;
        EXPECT_EQ(flagged_count(model), 4u);
        // The step's own gaps wait on its own actions: rank 0's B for rank 1's B of the step.
        EXPECT_EQ(bubble_before(model, 0, static_cast<std::int32_t>(first + 1)).waited_on,
                  std::optional(compute(1, first + 1)));
    }
}

TEST(StepAnalysis, AStepTheRunDoesNotHaveSaysSoAndAReloadKeepsTheStep) {
    const auto path = testing::multi_step_trace("analysis_missing", 2);
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    analyse_step(session, 5);
    finish_analysis(session);
    EXPECT_EQ(session.model->analysed_step(), std::optional<int>(5));
    EXPECT_EQ(session.critical_path_line, "critical path (step 5): n/a (the run has no step 5)");
    ASSERT_TRUE(show_run(session, session.run_id));  // a reload of the shown run keeps the step
    finish_analysis(session);
    EXPECT_EQ(session.model->analysed_step(), std::optional<int>(5));
}

}  // namespace
}  // namespace pipelens::viewer
