// How a failed run is described (traces/run_outcome.hpp): its root cause first, whatever order the
// ranks recorded their errors in, and, when that cause is a timeout, the computation another rank
// was stuck in, since that is what the timed-out rank waited for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "traces/run_outcome.hpp"

namespace pipelens::traces {
namespace {

ErrorRecord error(int rank, std::string action, std::string kind, std::string message,
                  std::int64_t time_ns, std::optional<std::int64_t> started_ns = std::nullopt) {
    ErrorRecord record;
    record.rank = rank;
    record.stage = rank;
    record.microbatch = 0;
    record.action = std::move(action);
    record.kind = std::move(kind);
    record.message = std::move(message);
    record.time_ns = time_ns;
    record.started_ns = started_ns;
    return record;
}

// Three ranks, stage 1 asleep in its first forward: rank 2 times out waiting for its input, rank
// 0 is stopped in its wait for a gradient, rank 1 is stopped in 1F0 (recorded in rank order).
std::vector<ErrorRecord> stuck_rank_errors() {
    return {error(0, "0RECV_B0", "stopped", "stopped: rank 2 timed out", 2'000'400'000, 235'000),
            error(1, "1F0", "stopped", "stopped: rank 2 timed out", 2'001'409'342, 176'840),
            error(2, "2RECV_F0", "timeout",
                  "rank 2 timed out waiting for 2RECV_F0: no data from rank 1 (tag 1) within "
                  "2000 ms",
                  2'000'331'177)};
}

// A flight recorder's run finished, but holds no computation: no step, and it says so where
// the step's figures would be; any other finished run has its step.
TEST(RunOutcome, AFinishedRunOfCommunicationOnlyHasNoStep) {
    RunRecord run;
    run.status = RunStatus::finished;
    run.step_time_ns = 4'655'000;
    run.bubble_ratio = 0;
    run.schedule = std::string(kFlightRecorderSchedule);
    const RunOutcome dumps = run_outcome(run, {});
    EXPECT_FALSE(step_figures_apply(dumps));
    EXPECT_FALSE(run_has_step(run));
    EXPECT_EQ(outcome_text(dumps),
              "no step: a flight recorder's dumps hold collectives and transfers, no computation");
    run.schedule = "1F1B";
    EXPECT_TRUE(step_figures_apply(run_outcome(run, {})));
    EXPECT_TRUE(run_has_step(run));
    EXPECT_EQ(outcome_text(run_outcome(run, {})), "");
    run.status = RunStatus::failed;
    EXPECT_FALSE(run_has_step(run));
}

TEST(RunOutcome, ATimeoutNamesTheComputationAnotherRankWasStuckIn) {
    const RunOutcome outcome = run_outcome(RunStatus::failed, stuck_rank_errors());
    ASSERT_TRUE(outcome.first_error);
    EXPECT_EQ(outcome.first_error->kind, "timeout");
    ASSERT_TRUE(outcome.longest_interrupted);
    EXPECT_EQ(outcome.longest_interrupted->action, "1F0");  // not rank 0's longer wait
    EXPECT_EQ(outcome_text(outcome),
              "failed at rank 2, stage 2, action 2RECV_F0: rank 2 timed out waiting for "
              "2RECV_F0: no data from rank 1 (tag 1) within 2000 ms; rank 1 had been in 1F0 for "
              "2.001 s when it was stopped");
}

TEST(RunOutcome, AFailureThatIsNotATimeoutNeedsNoStuckRank) {
    std::vector<ErrorRecord> errors = stuck_rank_errors();
    errors[2] = error(2, "2F0", "shape_mismatch", "Stage 2 forward inputs[0] ...", 5'000, 4'000);
    const RunOutcome outcome = run_outcome(RunStatus::failed, errors);
    EXPECT_EQ(outcome.first_error->kind, "shape_mismatch");
    EXPECT_FALSE(outcome.longest_interrupted);
    EXPECT_EQ(outcome_text(outcome),
              "failed at rank 2, stage 2, action 2F0: Stage 2 forward inputs[0] ...");
}

TEST(RunOutcome, ATimeoutWithNoComputationInFlightSaysOnlyItself) {
    std::vector<ErrorRecord> errors = stuck_rank_errors();
    errors[1].started_ns.reset();  // rank 1 was between actions when it was stopped
    const RunOutcome outcome = run_outcome(RunStatus::failed, errors);
    EXPECT_FALSE(outcome.longest_interrupted);
    EXPECT_EQ(outcome_text(outcome).find("had been in"), std::string::npos);
}

}  // namespace
}  // namespace pipelens::traces
