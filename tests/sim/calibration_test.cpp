// Calibration from a measured run: per-stage medians of F and B (I and W split B in half when
// the schedule has no I/W, and the stages where that was assumed listed), the link from
// transfers whose receiver was waiting, only real runs taken, and refusals for runs that cannot
// be calibrated from and for figures no real run can have.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>

#include "engine/schedule/action.hpp"
#include "sim/calibration.hpp"
#include "sim/calibration_checks.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/thrown_message.hpp"
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

// What `calibrate` refuses with, or "calibrated" when it does not refuse.
std::string error_of(const std::function<void()>& calibrate) {
    return testing::thrown_message<std::invalid_argument>([&] { calibrate(); }, "calibrated");
}

TEST(Calibration, MediansPerStageAndTheWaitingReceiversDelivery) {
    const auto path = fresh_trace("medians");
    {
        traces::TraceWriter writer(path);
        const traces::RunRecord run = real_run("1F1B", 2, 3);
        const auto id = writer.begin_run(run);
        // Stage 0 forwards 100, 120, 900 ns (median 120), backwards 300, 310, 320; stage 1
        // forwards 200, 210, 220 and backwards 400, 410, 420.
        writer.add_action(id, action(0, 0, ActionKind::forward, 0, 0, 0, 100));
        writer.add_action(id, action(0, 1, ActionKind::forward, 0, 1, 100, 220));
        writer.add_action(id, action(0, 2, ActionKind::forward, 0, 2, 220, 1120));
        writer.add_action(id, action(0, 3, ActionKind::send_forward, 0, 0, 1000, 1010, 0));
        writer.add_action(id, action(0, 4, ActionKind::send_forward, 0, 1, 2000, 2010, 1));
        writer.add_action(id, action(0, 5, ActionKind::send_forward, 0, 2, 3000, 3010, 2));
        writer.add_action(id, action(0, 6, ActionKind::full_backward, 0, 0, 5300, 5600));
        writer.add_action(id, action(0, 7, ActionKind::full_backward, 0, 1, 5600, 5910));
        writer.add_action(id, action(0, 8, ActionKind::full_backward, 0, 2, 5910, 6230));
        // Receivers waiting from before their sends give deliveries 50 and 70 (the upper
        // median, 70, is taken); a receive posted after its send (at 3500, for a send at 3000)
        // says nothing about the link and is left out.
        writer.add_action(id, action(1, 0, ActionKind::recv_forward, 1, 0, 900, 1050, 0));
        writer.add_action(id, action(1, 1, ActionKind::forward, 1, 0, 1050, 1250));
        writer.add_action(id, action(1, 2, ActionKind::recv_forward, 1, 1, 1900, 2070, 1));
        writer.add_action(id, action(1, 3, ActionKind::forward, 1, 1, 2070, 2280));
        writer.add_action(id, action(1, 4, ActionKind::recv_forward, 1, 2, 3500, 3600, 2));
        writer.add_action(id, action(1, 5, ActionKind::forward, 1, 2, 3600, 3820));
        writer.add_action(id, action(1, 6, ActionKind::full_backward, 1, 0, 4000, 4400));
        writer.add_action(id, action(1, 7, ActionKind::full_backward, 1, 1, 4400, 4810));
        writer.add_action(id, action(1, 8, ActionKind::full_backward, 1, 2, 4810, 5230));
        for (int pair = 0; pair < 3; ++pair)
            writer.add_pair(id, {pair, 0, 3 + pair, 1, 2 * pair, 0});
        writer.finish_run(id, 6300, 0.5);
    }
    const traces::TraceReader reader(path);
    const Calibration calibration = calibrate_from_trace(reader, 1);
    const Experiment& experiment = calibration.experiment;
    EXPECT_EQ(experiment.shape.kind, ScheduleKind::one_f_one_b);
    EXPECT_EQ(experiment.shape.rank_count, 2);
    EXPECT_EQ(experiment.shape.microbatch_count, 3);
    EXPECT_EQ(experiment.forward_ns, (std::vector<std::int64_t>{120, 210}));
    EXPECT_EQ(experiment.backward_ns, (std::vector<std::int64_t>{310, 410}));
    // Nothing timed I and W apart: they are B's halves, and the calibration says so.
    EXPECT_EQ(experiment.input_ns, (std::vector<std::int64_t>{155, 205}));
    EXPECT_EQ(experiment.weight_ns, (std::vector<std::int64_t>{155, 205}));
    EXPECT_EQ(calibration.assumed_split_stages, (std::vector<int>{0, 1}));
    EXPECT_EQ(experiment.intra_host.latency_ns, 70);
    EXPECT_EQ(calibration.transfer_samples, 2);
    EXPECT_EQ(calibration.measured_step_ns, 6300);
    // The noise: each action over its stage's median of its kind in the step (the costs here
    // are medians), all 12 kept; stage 0's F of 900 against their median of 120 is the most.
    ASSERT_TRUE(experiment.jitter);
    EXPECT_EQ(experiment.jitter->centre, JitterCentre::median);
    ASSERT_EQ(experiment.jitter->quantiles.size(), 12u);
    EXPECT_DOUBLE_EQ(experiment.jitter->quantiles.front(), 100.0 / 120);
    EXPECT_DOUBLE_EQ(experiment.jitter->quantiles.back(), 900.0 / 120);
    EXPECT_DOUBLE_EQ(experiment.jitter->quantiles[5], 1.0);  // 310 of 310 (and 120, 210, 410)
    std::filesystem::remove(path);
}

// Transfers are paired through the run's program, which a record with one stage on two ranks
// (an import's damaged mapping) does not make: its stage costs still calibrate, with no
// delivery measured and the link left at that.
TEST(Calibration, ARunWhoseProgramCannotBeWalkedStillCalibratesWithoutDeliveries) {
    const auto path = fresh_trace("stage_on_two_ranks");
    {
        traces::TraceWriter writer(path);
        const auto id = writer.begin_run(real_run("1F1B", 2, 1));
        writer.add_action(id, action(0, 0, ActionKind::forward, 0, 0, 0, 100));
        writer.add_action(id, action(0, 1, ActionKind::send_forward, 0, 0, 100, 110, 0));
        writer.add_action(id, action(1, 0, ActionKind::recv_forward, 1, 0, 0, 150, 0));
        writer.add_action(id, action(1, 1, ActionKind::forward, 1, 0, 150, 350));
        writer.add_action(id, action(1, 2, ActionKind::full_backward, 1, 0, 350, 750));
        writer.add_action(id, action(1, 3, ActionKind::full_backward, 0, 0, 750, 1050));
        writer.add_action(id, action(0, 2, ActionKind::full_backward, 0, 0, 800, 1100));
        writer.finish_run(id, 1100, 0.5);
    }
    const Calibration calibration = calibrate_from_trace(traces::TraceReader(path), 1);
    EXPECT_EQ(calibration.transfer_samples, 0);
    EXPECT_EQ(calibration.experiment.forward_ns, (std::vector<std::int64_t>{100, 200}));
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
    EXPECT_EQ(error_of([&] { calibrate_from_trace(reader, 1); }),
              "run 1 did not finish; only a complete run can be calibrated from (this trace's: 2; "
              "name one with --run)");
    EXPECT_EQ(error_of([&] { calibrate_from_trace(reader, 2); }),
              "run 2 ran schedule 'my_schedule.csv', which is not a kind pipelens generates");
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
        writer.add_action(id, action(1, 1, ActionKind::forward, 1, 0, 700, 800));
        writer.add_pair(id, {0, 0, 1, 1, 0, 0});
        writer.finish_run(id, 2000, 0.5);
    }
    const traces::TraceReader reader(path);
    EXPECT_EQ(error_of([&] { calibrate_from_trace(reader, 1); }),
              "run 1 recorded no action times; there is nothing to calibrate from");
    EXPECT_EQ(error_of([&] { calibrate_from_trace(reader, 2); }),
              "run 2: the median send/recv delivery is -300 ns, below zero: its ranks' "
              "times are not on one clock (recorded before pipelens measured clock "
              "offsets); no latency is written");
    std::filesystem::remove(path);
}

// A 1F1B run of two stages and one microbatch with every computation timed: F and B on both
// stages (`stage1_forward_ns` for stage 1's F; 0 leaves it out).
traces::RunRecord two_stage_run(traces::TraceWriter& writer, traces::RunRecord run,
                                std::int64_t stage1_forward_ns = 200) {
    const auto id = writer.begin_run(run);
    run.id = id;
    writer.add_action(id, action(0, 0, ActionKind::forward, 0, 0, 0, 100));
    if (stage1_forward_ns > 0)
        writer.add_action(id,
                          action(1, 0, ActionKind::forward, 1, 0, 100, 100 + stage1_forward_ns));
    writer.add_action(id, action(1, 1, ActionKind::full_backward, 1, 0, 400, 800));
    writer.add_action(id, action(0, 1, ActionKind::full_backward, 0, 0, 800, 1100));
    writer.finish_run(id, 1100, 0.5);
    return run;
}

traces::RunRecord simulated_run(const std::string& schedule, int pp, int m) {
    traces::RunRecord run = real_run(schedule, pp, m);
    run.kind = traces::RunKind::simulated;
    return run;
}

// What `calibrate` takes by default is the latest real run, however many simulations were
// recorded after it; a simulation named explicitly is refused, as it measured nothing.
TEST(Calibration, TakesTheLatestRealRunNotALaterSimulation) {
    const auto path = fresh_trace("latest_real");
    {
        traces::TraceWriter writer(path);
        two_stage_run(writer, real_run("1F1B", 2, 1));
        two_stage_run(writer, simulated_run("GPipe", 2, 1));
    }
    const traces::TraceReader reader(path);
    EXPECT_EQ(reader.latest_run_id(), 2);
    EXPECT_EQ(latest_measured_run(reader), 1);
    EXPECT_EQ(error_of([&] { calibrate_from_trace(reader, 2); }),
              "run 2 (sim GPipe pp=2 v=1 m=1) is a simulation, and a simulation measures "
              "nothing: calibrate takes real runs (this trace's: 1)");
    // import --simulate replays any timeline (PyTorch's dumps are unit-step simulations).
    EXPECT_EQ(calibrate_from_trace(reader, 2, {}, Timelines::any).experiment.forward_ns,
              (std::vector<std::int64_t>{100, 200}));
    std::filesystem::remove(path);
}

TEST(Calibration, ATraceOfSimulationsHasNoRunToCalibrateFrom) {
    const auto path = fresh_trace("only_simulations");
    {
        traces::TraceWriter writer(path);
        two_stage_run(writer, simulated_run("GPipe", 2, 1));
        two_stage_run(writer, simulated_run("1F1B", 2, 1));
    }
    const traces::TraceReader reader(path);
    EXPECT_EQ(error_of([&] { latest_measured_run(reader); }),
              "no real run to calibrate from: runs 1 (sim GPipe pp=2 v=1 m=1), 2 (sim 1F1B "
              "pp=2 v=1 m=1) are simulations, and a simulation measures nothing; record a real "
              "run into this trace with `pipelens run ... --out` (with --profile to measure I "
              "and W)");
    EXPECT_EQ(error_of([&] { calibrate_from_trace(reader, 1); }),
              "run 1 (sim GPipe pp=2 v=1 m=1) is a simulation, and a simulation measures "
              "nothing: calibrate takes real runs (this trace has none: record a real run into "
              "this trace with `pipelens run ... --out` (with --profile to measure I and W))");
    std::filesystem::remove(path);
}

// A stage whose F the run never recorded would be simulated as free: refused, naming it.
TEST(Calibration, RefusesAStageWithoutAForward) {
    const auto path = fresh_trace("no_forward");
    {
        traces::TraceWriter writer(path);
        two_stage_run(writer, real_run("1F1B", 2, 1), /*stage1_forward_ns=*/0);
    }
    const traces::TraceReader reader(path);
    try {
        calibrate_from_trace(reader, 1);
        FAIL() << "calibrated";
    } catch (const ImpossibleCalibration& refused) {
        EXPECT_EQ(refused.figures(),
                  (std::vector<std::string>{
                      "run 1: stage 1 F is 0 ns: every computation a run times takes time; the "
                      "run recorded none of this kind for the stage, or the fit took off more "
                      "than was measured"}));
        // Its figures are the run's own actions, not a profile's: no busy cores to blame.
        EXPECT_FALSE(refused.from_profile());
    }
    std::filesystem::remove(path);
}

// A schedule that ran I and W apart measured them: nothing is assumed.
TEST(Calibration, ASplitBackwardIsMeasuredNotAssumed) {
    const auto path = fresh_trace("split_backward");
    {
        traces::TraceWriter writer(path);
        traces::RunRecord run = real_run("ZBVZeroBubble", 1, 1);
        run.v = 2;  // one rank running both stages
        const auto id = writer.begin_run(run);
        writer.add_action(id, action(0, 0, ActionKind::forward, 0, 0, 0, 100));
        writer.add_action(id, action(0, 1, ActionKind::forward, 1, 0, 100, 250));
        writer.add_action(id, action(0, 2, ActionKind::backward_input, 1, 0, 250, 400));
        writer.add_action(id, action(0, 3, ActionKind::backward_weight, 1, 0, 400, 520));
        writer.add_action(id, action(0, 4, ActionKind::backward_input, 0, 0, 520, 560));
        writer.add_action(id, action(0, 5, ActionKind::backward_weight, 0, 0, 560, 700));
        writer.finish_run(id, 700, 0);
    }
    const Calibration calibration = calibrate_from_trace(traces::TraceReader(path), 1);
    EXPECT_EQ(calibration.experiment.input_ns, (std::vector<std::int64_t>{40, 150}));
    EXPECT_EQ(calibration.experiment.weight_ns, (std::vector<std::int64_t>{140, 120}));
    EXPECT_TRUE(calibration.assumed_split_stages.empty());
    std::filesystem::remove(path);
}

// One recorded training step of a one-stage run (GPipe pp=1 m=3) from `base`: forwards of the
// given durations, then backwards of 300 ns, each rank's list at the same indices every step.
void one_stage_step(traces::TraceWriter& writer, std::int64_t run, std::int64_t base,
                    std::vector<std::int64_t> forwards) {
    std::int64_t at = base;
    for (int microbatch = 0; microbatch < 3; ++microbatch) {
        writer.add_action(run, action(0, microbatch, ActionKind::forward, 0, microbatch, at,
                                      at + forwards[static_cast<std::size_t>(microbatch)]));
        at += forwards[static_cast<std::size_t>(microbatch)];
    }
    for (int microbatch = 0; microbatch < 3; ++microbatch, at += 300)
        writer.add_action(
            run, action(0, 3 + microbatch, ActionKind::full_backward, 0, microbatch, at, at + 300));
}

// `run --steps 3` records each action three times: each figure is the median over the steps of
// the step's own median. Forwards of 10/11/12, 13/100/100 and 14/15/100 ns have step medians
// 11, 100 and 15, so 15 (all nine pooled would give 14); with a second run's steps at 16 ns the
// six step medians 11, 15, 16, 16, 16, 100 give 16.
TEST(Calibration, EachFigureIsTheMedianOverTheRecordedSteps) {
    const auto path = fresh_trace("step_medians");
    {
        traces::TraceWriter writer(path);
        for (int repeat = 0; repeat < 2; ++repeat) {
            const auto id = writer.begin_run(real_run("GPipe", 1, 3));
            const std::vector<std::vector<std::int64_t>> forwards =
                repeat == 0 ? std::vector<std::vector<std::int64_t>>{{10, 11, 12},
                                                                     {13, 100, 100},
                                                                     {14, 15, 100}}
                            : std::vector<std::vector<std::int64_t>>(3, {16, 16, 16});
            for (std::size_t step = 0; step < forwards.size(); ++step)
                one_stage_step(writer, id, static_cast<std::int64_t>(step) * 5000, forwards[step]);
            writer.finish_run(id, 1200, 0);
        }
    }
    const traces::TraceReader reader(path);
    const Calibration one = calibrate_from_trace(reader, 1);
    EXPECT_EQ(one.experiment.forward_ns, (std::vector<std::int64_t>{15}));
    EXPECT_EQ(one.experiment.backward_ns, (std::vector<std::int64_t>{300}));
    EXPECT_EQ(calibrate_from_runs(reader, {1, 2}).experiment.forward_ns,
              (std::vector<std::int64_t>{16}));
    std::filesystem::remove(path);
}

// The link's latency over steps: deliveries of 50, 500 and 70 ns in three steps give 70, whether
// each step's pair has its own id (as `run` writes them) or every step repeats one id (traces
// written before pairs were per step).
TEST(Calibration, TheLinkIsTheMedianOverTheStepsOfTheirDeliveries) {
    for (const bool per_step_ids : {true, false}) {
        SCOPED_TRACE(per_step_ids);
        const auto path = fresh_trace("step_deliveries");
        {
            traces::TraceWriter writer(path);
            const auto id = writer.begin_run(real_run("GPipe", 2, 1));
            const std::int64_t deliveries[] = {50, 500, 70};
            for (int step = 0; step < 3; ++step) {
                const std::int64_t base = step * 10000;
                const int pair = per_step_ids ? step : 0;
                writer.add_action(id, action(0, 0, ActionKind::forward, 0, 0, base, base + 100));
                writer.add_action(
                    id, action(0, 1, ActionKind::send_forward, 0, 0, base + 100, base + 110, pair));
                writer.add_action(id, action(1, 0, ActionKind::recv_forward, 1, 0, base,
                                             base + 100 + deliveries[step], pair));
                writer.add_action(id,
                                  action(1, 1, ActionKind::forward, 1, 0, base + 700, base + 800));
                writer.add_action(
                    id, action(1, 2, ActionKind::full_backward, 1, 0, base + 800, base + 900));
                writer.add_action(
                    id, action(0, 2, ActionKind::full_backward, 0, 0, base + 900, base + 1000));
                if (per_step_ids || step == 0)  // else one pair row names every step's copy
                    writer.add_pair(id, {pair, 0, 1, 1, 0, 0});
            }
            writer.finish_run(id, 1000, 0);
        }
        const Calibration calibration = calibrate_from_trace(traces::TraceReader(path), 1);
        EXPECT_EQ(calibration.experiment.intra_host.latency_ns, 70);
        EXPECT_EQ(calibration.transfer_samples, 3);
        std::filesystem::remove(path);
    }
}

// Two ranks side by side for a third of the time either computes: rank 0 over [0, 10) and
// [20, 30), rank 1 over [5, 25); together over [5, 10) and [20, 25), 10 of 30.
TEST(Calibration, TheShareOfComputingSideBySideCountsTimeWithTwoRanksAtWork) {
    EXPECT_DOUBLE_EQ(parallel_compute_share({{{0, 10}, {20, 30}}, {{5, 25}}}), 1.0 / 3);
    EXPECT_DOUBLE_EQ(parallel_compute_share({{{0, 10}}, {{10, 20}}}), 0.0);  // taking turns
    EXPECT_DOUBLE_EQ(parallel_compute_share({{{0, 10}}, {{0, 10}}, {{0, 10}}}), 1.0);
    EXPECT_DOUBLE_EQ(parallel_compute_share({}), 0.0);
    EXPECT_DOUBLE_EQ(parallel_compute_share({{{0, 10}}}), 0.0);
    // A run whose ranks took turns where its simulation has them side by side waited for cores;
    // a schedule that keeps them apart anyway (GPipe with one microbatch) says nothing.
    EXPECT_TRUE((SideBySide{0.0, 0.27}.took_turns()));
    EXPECT_TRUE((SideBySide{0.08, 0.27}.took_turns()));
    EXPECT_FALSE((SideBySide{0.10, 0.27}.took_turns()));
    EXPECT_FALSE((SideBySide{0.0, 0.05}.took_turns()));
}

}  // namespace
}  // namespace pipelens::sim
