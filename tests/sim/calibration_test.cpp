// Calibration from a measured run: per-stage medians of F and B (I and W split B in half when
// the schedule has no I/W), the link from transfers whose receiver was waiting, and refusals
// for runs that cannot be calibrated from.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "engine/schedule/action.hpp"
#include "sim/calibration.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::sim {
namespace {

using pipelens::testing::fresh_trace;

traces::ActionRecord action(int rank, int step, ActionKind kind, int stage, int microbatch,
                            std::int64_t start, std::int64_t end, int pair = -1) {
    traces::ActionRecord record;
    record.rank = rank;
    record.step = step;
    record.kind = static_cast<std::uint8_t>(kind);
    record.lane =
        is_communication(kind) ? traces::ActionLane::communication : traces::ActionLane::compute;
    record.stage = stage;
    record.microbatch = microbatch;
    record.label = std::string(kind_text(kind));
    record.start_ns = start;
    record.end_ns = end;
    record.pair_id = pair;
    return record;
}

// A real run's description: its schedule kind, ranks and microbatches.
traces::RunRecord real_run(const std::string& schedule, int pp, int m) {
    traces::RunRecord run;
    run.kind = traces::RunKind::real;
    run.schedule = schedule;
    run.pp = pp;
    run.m = m;
    return run;
}

TEST(Calibration, MediansPerStageAndTheWaitingReceiversDelivery) {
    const auto path = fresh_trace("medians");
    {
        traces::TraceWriter writer(path);
        const traces::RunRecord run = real_run("1F1B", 2, 3);
        const auto id = writer.begin_run(run);
        // Stage 0 forwards 100, 120, 900 ns (median 120); stage 1 backwards 400, 410, 420.
        writer.add_action(id, action(0, 0, ActionKind::forward, 0, 0, 0, 100));
        writer.add_action(id, action(0, 1, ActionKind::forward, 0, 1, 100, 220));
        writer.add_action(id, action(0, 2, ActionKind::forward, 0, 2, 220, 1120));
        writer.add_action(id, action(0, 3, ActionKind::send_forward, 0, 0, 1000, 1010, 0));
        writer.add_action(id, action(0, 4, ActionKind::send_forward, 0, 1, 2000, 2010, 1));
        writer.add_action(id, action(0, 5, ActionKind::send_forward, 0, 2, 3000, 3010, 2));
        // Receivers posted before the sends (waiting) give deliveries 50 and 70 (the upper
        // median, 70, is taken); a receive posted after its send says nothing about the link
        // and is left out.
        writer.add_action(id, action(1, 0, ActionKind::recv_forward, 1, 0, 900, 1050, 0));
        writer.add_action(id, action(1, 1, ActionKind::recv_forward, 1, 1, 1900, 2070, 1));
        writer.add_action(id, action(1, 2, ActionKind::recv_forward, 1, 2, 3500, 3600, 2));
        writer.add_action(id, action(1, 3, ActionKind::full_backward, 1, 0, 4000, 4400));
        writer.add_action(id, action(1, 4, ActionKind::full_backward, 1, 1, 4400, 4810));
        writer.add_action(id, action(1, 5, ActionKind::full_backward, 1, 2, 4810, 5230));
        for (int pair = 0; pair < 3; ++pair)
            writer.add_pair(id, {pair, 0, 3 + pair, 1, pair, 0});
        writer.finish_run(id, 6000, 0.5);
    }
    const traces::TraceReader reader(path);
    const Calibration calibration = calibrate_from_trace(reader, 1);
    const Experiment& experiment = calibration.experiment;
    EXPECT_EQ(experiment.shape.kind, ScheduleKind::one_f_one_b);
    EXPECT_EQ(experiment.shape.rank_count, 2);
    EXPECT_EQ(experiment.shape.microbatch_count, 3);
    EXPECT_EQ(experiment.forward_ns, (std::vector<std::int64_t>{120, 0}));
    EXPECT_EQ(experiment.input_ns, (std::vector<std::int64_t>{0, 205}));
    EXPECT_EQ(experiment.weight_ns, (std::vector<std::int64_t>{0, 205}));
    EXPECT_TRUE(experiment.backward_ns.empty());  // stage 0 has no B here: B = I + W
    EXPECT_EQ(experiment.intra_host.latency_ns, 70);
    EXPECT_EQ(calibration.transfer_samples, 2);
    EXPECT_EQ(calibration.measured_step_ns, 6000);
    std::filesystem::remove(path);
}

TEST(Calibration, RefusesUnfinishedRunsAndForeignSchedules) {
    const auto path = fresh_trace("refusals");
    {
        traces::TraceWriter writer(path);
        const traces::RunRecord run = real_run("my_schedule.csv", 2, 2);
        writer.begin_run(run);  // left unfinished
        const auto finished = writer.begin_run(run);
        writer.finish_run(finished, 100, 0);
    }
    const traces::TraceReader reader(path);
    try {
        calibrate_from_trace(reader, 1);
        FAIL();
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(),
                     "run 1 did not finish; only a complete run can be calibrated from");
    }
    try {
        calibrate_from_trace(reader, 2);
        FAIL();
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(
            error.what(),
            "run 2 ran schedule 'my_schedule.csv', which is not a kind pipelens generates");
    }
    std::filesystem::remove(path);
}

TEST(Calibration, RefusesRunsWithoutTimesOrOnTwoClocks) {
    const auto path = fresh_trace("two_clocks");
    {
        traces::TraceWriter writer(path);
        const traces::RunRecord run = real_run("1F1B", 2, 1);
        const auto empty = writer.begin_run(run);
        writer.finish_run(empty, 100, 0);
        // The receiver waited (posted at 900), yet its data "arrived" 300 ns before the send
        // began: rank 1's zero was not rank 0's, as in runs recorded before schema version 5.
        const auto id = writer.begin_run(run);
        writer.add_action(id, action(0, 0, ActionKind::forward, 0, 0, 0, 100));
        writer.add_action(id, action(0, 1, ActionKind::send_forward, 0, 0, 1000, 1010, 0));
        writer.add_action(id, action(1, 0, ActionKind::recv_forward, 1, 0, 600, 700, 0));
        writer.add_pair(id, {0, 0, 1, 1, 0, 0});
        writer.finish_run(id, 2000, 0.5);
    }
    const traces::TraceReader reader(path);
    try {
        calibrate_from_trace(reader, 1);
        FAIL();
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(),
                     "run 1 recorded no action times; there is nothing to calibrate from");
    }
    try {
        calibrate_from_trace(reader, 2);
        FAIL();
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(),
                     "run 2: the median send/recv delivery is -300 ns, below zero: its ranks' "
                     "times are not on one clock (recorded before pipelens measured clock "
                     "offsets); no latency is written");
    }
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace pipelens::sim
