// A rank's report on its way to rank 0: JSON and back with every field (NaN and Inf included),
// ranks that never reported, and the merge of every rank's report into the run's result.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/runtime/rank_report.hpp"

namespace pipelens::runtime {
namespace {

RankReport full_report() {
    RankReport report;
    report.run.rank = 1;
    report.run.busy_ns = 700;
    report.run.timeline = {{0, 10, 20, -1}, {1, 25, 40, -1}};
    report.run.memory = {{10, 4096}, {40, 0}};
    report.run.peak_memory_bytes = 8192;
    report.run.memory_before_steps_bytes = 136380416;
    report.run.clock = run_record::ClockOffset{-1500, 30};
    report.run.failure = run_record::RunFailure{
        1, 2, 3, "2F3", "timeout", "a message", "nothing", "rank 1 timed out", 45, 41};
    report.holds_last_stage = true;
    report.loss = std::numeric_limits<double>::quiet_NaN();
    report.reference_loss = 0.5;
    report.output_max_error = std::numeric_limits<double>::infinity();
    report.gradient_max_error = -std::numeric_limits<double>::infinity();
    report.outputs_match = false;
    report.gradients_match = true;
    report.accuracy = {{2, 0, 0.25, 0.125, true, false}};
    report.recording = nullptr;
    report.profile = {{1, 2, -1, "", "F", -1, 0, 900, 850, 950, 20}};
    return report;
}

TEST(RankReport, TravelsAsJsonWithEveryFieldNanAndInfIncluded) {
    const nlohmann::json json = rank_report_to_json(full_report());
    EXPECT_EQ(json.at("loss"), "nan");
    EXPECT_EQ(json.at("output_max_error"), "inf");
    EXPECT_EQ(json.at("gradient_max_error"), "-inf");
    const RankReport back = rank_report_from_json(nlohmann::json::parse(json.dump()));
    EXPECT_EQ(back.run.rank, 1);
    EXPECT_EQ(back.run.busy_ns, 700);
    ASSERT_EQ(back.run.timeline.size(), 2u);
    EXPECT_EQ(back.run.timeline[1].step, 1);
    EXPECT_EQ(back.run.timeline[1].start_ns, 25);
    EXPECT_EQ(back.run.timeline[1].end_ns, 40);
    EXPECT_EQ(back.run.timeline[1].bytes, -1);
    ASSERT_EQ(back.run.memory.size(), 2u);
    EXPECT_EQ(back.run.memory[0].time_ns, 10);
    EXPECT_EQ(back.run.memory[0].bytes, 4096);
    EXPECT_EQ(back.run.peak_memory_bytes, 8192);
    EXPECT_EQ(back.run.memory_before_steps_bytes, std::optional<std::int64_t>(136380416));
    ASSERT_TRUE(back.run.clock.has_value());
    EXPECT_EQ(back.run.clock->offset_ns, -1500);
    EXPECT_EQ(back.run.clock->uncertainty_ns, 30);
    ASSERT_TRUE(back.run.failure.has_value());
    EXPECT_EQ(back.run.failure->stage, 2);
    EXPECT_EQ(back.run.failure->microbatch, 3);
    EXPECT_EQ(back.run.failure->action, "2F3");
    EXPECT_EQ(back.run.failure->kind, "timeout");
    EXPECT_EQ(back.run.failure->message, "rank 1 timed out");
    EXPECT_EQ(back.run.failure->time_ns, 45);
    EXPECT_EQ(back.run.failure->started_ns, std::optional<std::int64_t>(41));
    EXPECT_TRUE(back.holds_last_stage);
    EXPECT_TRUE(std::isnan(back.loss));
    EXPECT_EQ(back.reference_loss, 0.5);
    EXPECT_EQ(back.output_max_error, std::numeric_limits<double>::infinity());
    EXPECT_EQ(back.gradient_max_error, -std::numeric_limits<double>::infinity());
    EXPECT_FALSE(back.outputs_match);
    EXPECT_TRUE(back.gradients_match);
    ASSERT_EQ(back.accuracy.size(), 1u);
    EXPECT_EQ(back.accuracy[0].max_abs_error, 0.25);
    EXPECT_EQ(back.accuracy[0].max_relative_error, 0.125);
    EXPECT_TRUE(back.accuracy[0].diverges);
    ASSERT_EQ(back.profile.size(), 1u);
    EXPECT_EQ(back.profile[0].quantity, "F");
    EXPECT_EQ(back.profile[0].median, 900);
    EXPECT_EQ(back.profile[0].samples, 20);
    EXPECT_TRUE(back.recording.is_null());
}

// A CPU rank's account counts its step tensors only: it has no device baseline, and none is
// made up on the way.
TEST(RankReport, ACpuRankTravelsWithoutADeviceBaseline) {
    RankReport report = full_report();
    report.run.memory_before_steps_bytes.reset();
    const nlohmann::json json = rank_report_to_json(report);
    EXPECT_FALSE(json.contains("memory_before_steps_bytes"));
    EXPECT_FALSE(rank_report_from_json(json).run.memory_before_steps_bytes.has_value());
}

TEST(RankReport, ARankWithoutAPayloadDiedOrWasLost) {
    run_record::PipelineRunOptions options;
    options.timeout_ms = 3000;
    RankReport alive;
    alive.run.rank = 0;
    const std::vector<std::string> payloads = {rank_report_to_json(alive).dump(), "", ""};
    const std::vector<RankReport> reports =
        reports_from_payloads(payloads, options, {"", "killed by signal 9 (Killed)"});
    ASSERT_EQ(reports.size(), 3u);
    EXPECT_FALSE(reports[0].run.failure.has_value());
    ASSERT_TRUE(reports[1].run.failure.has_value());
    EXPECT_EQ(reports[1].run.rank, 1);
    EXPECT_EQ(reports[1].run.failure->kind, "rank_died");
    EXPECT_EQ(reports[1].run.failure->message,
              "rank 1 died (killed by signal 9 (Killed)) before it reported; its actions are not "
              "recorded");
    ASSERT_TRUE(reports[2].run.failure.has_value());
    EXPECT_EQ(reports[2].run.failure->kind, "lost");
    EXPECT_EQ(reports[2].run.failure->message,
              "rank 2 sent no report within 3000 ms: it died or hangs");
}

TEST(RankReport, ARankThatExitedWithoutAReportEndedRatherThanDied) {
    run_record::PipelineRunOptions options;
    RankReport alive;
    alive.run.rank = 0;
    const std::vector<RankReport> reports = reports_from_payloads(
        {rank_report_to_json(alive).dump(), ""}, options, {"", "exited with code 2"});
    ASSERT_TRUE(reports[1].run.failure.has_value());
    EXPECT_EQ(reports[1].run.failure->kind, "rank_died");
    EXPECT_EQ(reports[1].run.failure->message,
              "rank 1 ended (exited with code 2) before it reported; its actions are not "
              "recorded");
}

TEST(RankReport, ARankZeroThatDiedWhileRecordingFailsTheRunItsReportStillHolds) {
    run_record::PipelineRunOptions options;
    RankReport zero;
    zero.run.rank = 0;
    zero.run.timeline = {{0, 0, 50, -1}};
    RankReport one;
    one.run.rank = 1;
    const std::vector<RankReport> reports =
        reports_from_payloads({rank_report_to_json(zero).dump(), rank_report_to_json(one).dump()},
                              options, {"killed by signal 9 (Killed)", ""});
    ASSERT_TRUE(reports[0].run.failure.has_value());
    EXPECT_EQ(reports[0].run.failure->kind, "rank_died");
    EXPECT_EQ(reports[0].run.failure->message,
              "rank 0 died (killed by signal 9 (Killed)) after its step, while it recorded the "
              "run; the launcher recorded it from the ranks' reports");
    EXPECT_EQ(reports[0].run.timeline.size(), 1u);  // what it measured is kept
    EXPECT_FALSE(reports[1].run.failure.has_value());
}

// A failed step measured no offsets: ranks reading rank 0's host clock are placed on it from
// where each one's zero lay there; a rank of another boot keeps its own clock.
TEST(RankReport, AFailedRunsRanksOnRankZerosHostClockArePlacedOnIt) {
    run_record::PipelineRunOptions options;
    const auto rank = [](int index, std::string clock_id, std::int64_t zero, std::int64_t skew) {
        RankReport report;
        report.run.rank = index;
        report.run.timeline = {{0, 100, 200, -1}};
        report.run.step_starts_ns = {0};
        report.run.memory = {{150, 64}};
        report.run.host_zero = run_record::HostZero{std::move(clock_id), zero, skew};
        report.run.failure =
            run_record::RunFailure{index, 0, 0, "", "timeout", "", "", "x", 300, std::int64_t{100}};
        return report;
    };
    const run_record::PipelineRunResult result =
        merge_reports({rank(0, "boot a", 1'000'000, 0), rank(1, "boot a", 1'500'000, 5'000'000),
                       rank(2, "boot b", 9'000'000, 0)},
                      options);
    ASSERT_TRUE(result.ranks[0].clock.has_value());
    EXPECT_EQ(result.ranks[0].clock->offset_ns, 0);
    EXPECT_EQ(result.ranks[0].timeline[0].start_ns, 100);
    // Rank 1's zero lay 500 us after rank 0's; its clock fault put it 5 ms ahead.
    ASSERT_TRUE(result.ranks[1].clock.has_value());
    EXPECT_EQ(result.ranks[1].clock->offset_ns, -5'000'000);
    EXPECT_EQ(result.ranks[1].clock->uncertainty_ns, 0);
    EXPECT_EQ(result.ranks[1].timeline[0].start_ns, 500'100);
    EXPECT_EQ(result.ranks[1].timeline[0].end_ns, 500'200);
    EXPECT_EQ(result.ranks[1].step_starts_ns[0], 500'000);
    EXPECT_EQ(result.ranks[1].memory[0].time_ns, 500'150);
    EXPECT_EQ(result.ranks[1].failure->time_ns, 500'300);
    EXPECT_EQ(result.ranks[1].failure->started_ns, 500'100);
    EXPECT_FALSE(result.ranks[2].clock.has_value());
    EXPECT_EQ(result.ranks[2].timeline[0].start_ns, 100);
}

// A finished run's processes of rank 0's boot are placed by the host clock too: their offset
// estimates (here 2 us off, as a loaded machine's can be by milliseconds) are replaced by the
// exact placement. A rank whose clock fault puts it off, and a rank of another boot, keep theirs.
TEST(RankReport, AFinishedRunsRanksOnRankZerosHostClockArePlacedOnItExactly) {
    run_record::PipelineRunOptions options;
    const auto rank = [](int index, std::string clock_id, std::int64_t zero, std::int64_t skew,
                         run_record::ClockOffset estimate, std::int64_t applied_shift) {
        RankReport report;
        report.run.rank = index;
        report.run.timeline = {{0, 100 + applied_shift, 200 + applied_shift, -1}};
        report.run.step_starts_ns = {applied_shift};
        report.run.memory = {{150 + applied_shift, 64}};
        report.run.host_zero = run_record::HostZero{std::move(clock_id), zero, skew};
        report.run.clock = estimate;
        return report;
    };
    // What each rank applied: its zero on its clock, plus its estimate, minus rank 0's zero.
    const run_record::PipelineRunResult result = merge_reports(
        {rank(0, "boot a", 1'000'000, 0, {0, 0}, 0),
         rank(1, "boot a", 1'500'000, 0, {2'000, 3'000}, 1'500'000 + 2'000 - 1'000'000),
         rank(2, "boot a", 1'200'000, 5'000'000, {-4'990'000, 40'000},
              1'200'000 + 5'000'000 - 4'990'000 - 1'000'000),
         rank(3, "boot b", 9'000'000, 0, {-7'000'000, 50'000}, 2'000'000)},
        options);
    EXPECT_EQ(result.ranks[0].timeline[0].start_ns, 100);
    ASSERT_TRUE(result.ranks[1].clock.has_value());
    EXPECT_EQ(result.ranks[1].clock->offset_ns, 0);
    EXPECT_EQ(result.ranks[1].clock->uncertainty_ns, 0);
    EXPECT_EQ(result.ranks[1].timeline[0].start_ns, 500'100);
    EXPECT_EQ(result.ranks[1].timeline[0].end_ns, 500'200);
    EXPECT_EQ(result.ranks[1].step_starts_ns[0], 500'000);
    EXPECT_EQ(result.ranks[1].memory[0].time_ns, 500'150);
    EXPECT_EQ(result.ranks[2].clock->offset_ns, -4'990'000);
    EXPECT_EQ(result.ranks[2].clock->uncertainty_ns, 40'000);
    EXPECT_EQ(result.ranks[2].timeline[0].start_ns, 210'100);
    EXPECT_EQ(result.ranks[3].clock->offset_ns, -7'000'000);
    EXPECT_EQ(result.ranks[3].timeline[0].start_ns, 2'000'100);
}

TEST(RankReport, MergeTakesTheLossFromTheLastStageAndTheLargestErrors) {
    run_record::PipelineRunOptions options;
    options.check_reference = true;
    options.check_accuracy = true;
    RankReport first;
    first.run.rank = 0;
    first.run.timeline = {{0, 0, 50, -1}};
    first.output_max_error = 0.001;
    first.gradient_max_error = 0.002;
    first.accuracy = {{1, 0, 0.5, 0.5, true, false}, {0, 1, 0, 0, false, false}};
    RankReport last;
    last.run.rank = 1;
    last.run.timeline = {{0, 10, 80, -1}};
    last.holds_last_stage = true;
    last.loss = 1.25;
    last.reference_loss = 1.0;
    last.gradient_max_error = 0.003;
    last.accuracy = {{0, 0, 0.75, 0.75, true, false}};

    const run_record::PipelineRunResult result = merge_reports({first, last}, options);
    EXPECT_TRUE(result.completed);
    EXPECT_EQ(result.device, "cpu");
    EXPECT_EQ(result.step_time_ns, 80);
    EXPECT_EQ(result.loss, 1.25);
    EXPECT_EQ(result.reference.reference_loss, 1.0);
    EXPECT_EQ(result.reference.loss_error, 0.25);
    EXPECT_EQ(result.reference.output_max_error, 0.001);
    EXPECT_EQ(result.reference.gradient_max_error, 0.003);
    EXPECT_TRUE(result.reference.outputs_match);
    ASSERT_EQ(result.accuracy.stages.size(), 3u);
    EXPECT_EQ(result.accuracy.stages[0].stage, 0);
    EXPECT_EQ(result.accuracy.stages[0].microbatch, 0);
    EXPECT_EQ(result.accuracy.stages[1].microbatch, 1);
    EXPECT_EQ(result.accuracy.stages[2].stage, 1);
    ASSERT_TRUE(result.accuracy.first_divergence.has_value());
    EXPECT_EQ(result.accuracy.first_divergence->stage, 0);
    EXPECT_EQ(result.accuracy.first_divergence->max_abs_error, 0.75);

    // Two recorded steps: rank 0 began them at 0 and 100 (the run's clock); each step's time
    // runs to its last end on any rank (50 and 70), and the step time is their median (the
    // upper middle of two).
    first.run.timeline = {{0, 0, 50, -1, 0}, {0, 100, 160, -1, 1}};
    first.run.step_starts_ns = {0, 100};
    last.run.timeline = {{0, 10, 40, -1, 0}, {0, 110, 170, -1, 1}};
    last.run.step_starts_ns = {5, 104};
    const run_record::PipelineRunResult two = merge_reports({first, last}, options);
    EXPECT_EQ(two.step_starts_ns, (std::vector<std::int64_t>{0, 100}));
    EXPECT_EQ(two.step_times_ns, (std::vector<std::int64_t>{50, 70}));
    EXPECT_EQ(two.step_time_ns, 70);

    last.run.failure = run_record::RunFailure{};
    const run_record::PipelineRunResult failed = merge_reports({first, last}, options);
    EXPECT_FALSE(failed.completed);
    EXPECT_FALSE(failed.reference.outputs_match);
    EXPECT_FALSE(failed.reference.gradients_match);
}

}  // namespace
}  // namespace pipelens::runtime
