// Calibration from a profile (`run --profile`): per-layer costs add up to stages by the rules of
// sim/layer_costs.hpp for any split, the stage overhead and the loss are what the layers leave
// unexplained, the link is a least-squares latency + bytes / bandwidth, and fits that make no
// sense are refused with the quantity named.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/experiment/experiment_toml.hpp"
#include "sim/calibration.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/layer_costs.hpp"
#include "sim/profile_calibration.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::sim {
namespace {

traces::ProfileRecord figure(int rank, int stage, int layer, const std::string& quantity,
                             std::int64_t median) {
    traces::ProfileRecord row;
    row.rank = rank;
    row.stage = stage;
    row.layer = layer;
    row.layer_name = layer >= 0 ? "layers." + std::to_string(layer) : "";
    row.quantity = quantity;
    row.median = row.low = row.high = median;
    row.samples = 10;
    return row;
}

traces::ProfileRecord link(std::int64_t bytes, std::int64_t one_way_ns) {
    traces::ProfileRecord row = figure(0, -1, -1, "link", one_way_ns);
    row.peer = 1;
    row.bytes = bytes;
    return row;
}

// Four layers (F 100, I 60, W 50, B 90 ns each; 1000 bytes held), two stages on two ranks.
// Stage 0 measures F 210 (10 of overhead), no I (its inputs are data), W = B = 190 (10 over
// its layers' B). Stage 1 (last) adds the loss and keeps its 256-byte output past backward.
std::vector<traces::ProfileRecord> two_stage_profile() {
    std::vector<traces::ProfileRecord> rows;
    for (int layer = 0; layer < 4; ++layer) {
        const int stage = layer / 2;
        rows.push_back(figure(stage, stage, layer, "F", 100));
        rows.push_back(figure(stage, stage, layer, "I", layer == 0 ? 0 : 60));
        rows.push_back(figure(stage, stage, layer, "W", 50));
        rows.push_back(figure(stage, stage, layer, "B", 90));
        rows.push_back(figure(stage, stage, layer, "held_bytes", 1000));
        rows.push_back(figure(stage, stage, layer, "output_bytes", 256));
        rows.push_back(figure(stage, stage, layer, "gradient_bytes", 4000));
        rows.push_back(figure(stage, stage, layer, "backward_peak_bytes", 300 + layer));
    }
    const auto stage_rows = [&](int stage, std::int64_t f, std::int64_t i, std::int64_t w,
                                std::int64_t b, std::int64_t overlap, std::int64_t held,
                                std::int64_t kept) {
        rows.push_back(figure(stage, stage, -1, "F", f));
        rows.push_back(figure(stage, stage, -1, "I", i));
        rows.push_back(figure(stage, stage, -1, "W", w));
        rows.push_back(figure(stage, stage, -1, "B", b));
        rows.push_back(figure(stage, stage, -1, "OVERLAP_F_B", overlap));
        rows.push_back(figure(stage, stage, -1, "held_bytes", held));
        rows.push_back(figure(stage, stage, -1, "kept_bytes", kept));
    };
    stage_rows(0, 210, 0, 190, 190, 400, 2000, 0);      // layers: F 200, B 180 (W runs all of it)
    stage_rows(1, 240, 130, 110, 190, 430, 2500, 256);  // keeps its output past the backward
    rows.push_back(link(1000, 11'000));
    rows.push_back(link(4000, 12'500));
    rows.push_back(link(16000, 18'500));
    return rows;
}

// A one-rank run (every stage on one rank) times no transfer: its calibration still stands, with
// a link that costs nothing and a note saying why.
TEST(ProfileCalibration, AProfileWithoutTransfersLeavesTheLinkFree) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    std::erase_if(profile, [](const traces::ProfileRecord& row) { return row.quantity == "link"; });
    const ProfileCalibration fitted = calibrate_from_profile(profile, 1);
    EXPECT_EQ(fitted.link.latency_ns, 0);
    EXPECT_EQ(fitted.link.bytes_per_ns, 0.0);
    EXPECT_EQ(fitted.link_sizes, 0);
    EXPECT_EQ(fitted.link_fit_note,
              "the profile timed no transfer between ranks (a one-rank run): the link is left free "
              "(no latency, no bandwidth limit); calibrate a run with more ranks to predict "
              "transfers");
    EXPECT_EQ(fitted.layers.names, calibrate_from_profile(two_stage_profile(), 1).layers.names);
}

TEST(ProfileCalibration, StageOverheadAndLossAreWhatTheLayersLeave) {
    const ProfileCalibration fitted = calibrate_from_profile(two_stage_profile(), 1);
    const LayerCosts& layers = fitted.layers;
    EXPECT_EQ(layers.names,
              (std::vector<std::string>{"layers.0", "layers.1", "layers.2", "layers.3"}));
    // Stage 0: F 210 - 200, B 190 - 180; no stage gives I or W (stage 0's W is its B by rule).
    EXPECT_EQ(layers.stage_overhead.forward_ns, 10);
    EXPECT_EQ(layers.stage_overhead.input_ns, 0);
    EXPECT_EQ(layers.stage_overhead.weight_ns, 0);
    EXPECT_EQ(layers.stage_overhead.backward_ns, 10);
    // Stage 1: F 240 - 200 - 10, I 130 - 120, W 110 - 100, B 190 - 180 - 10, held 2500-2000.
    EXPECT_EQ(layers.loss.forward_ns, 30);
    EXPECT_EQ(layers.loss.input_ns, 10);
    EXPECT_EQ(layers.loss.weight_ns, 10);
    EXPECT_EQ(layers.loss.backward_ns, 0);
    EXPECT_EQ(layers.loss.held_bytes, 500);
    EXPECT_EQ(layers.loss.kept_bytes, 0);  // the kept 256 are the model's output: a rule
    EXPECT_EQ(layers.stage_overhead.kept_bytes, 0);
    // OVERLAP_F_B: stage 0 (210 + 190 - 400) / 190 = 0, stage 1 (240 + 190 - 430) / 190 = 0.
    EXPECT_EQ(fitted.overlap_efficiency, 0.0);
    // The least-squares line through (1000, 11000), (4000, 12500), (16000, 18500): slope 0.5
    // ns per byte (2 GB/s), intercept 14000 - 0.5 * 7000.
    EXPECT_EQ(fitted.link_sizes, 3);
    EXPECT_EQ(fitted.link.bytes_per_ns, 2.0);
    EXPECT_EQ(fitted.link.latency_ns, 10'500);
}

// A profile that timed F, B and the overlap back to back gives the saving itself; it is pooled
// over the stages (saved / shorter part, summed), not the larger of two stages' shares.
TEST(ProfileCalibration, OverlapEfficiencyPoolsThePairedSavings) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    // Stage 0 saves 38 of min(210, 190), stage 1 -19 of min(240, 190): (38 - 19) / 380.
    profile.push_back(figure(0, 0, -1, "OVERLAP_F_B_saved", 38));
    profile.push_back(figure(1, 1, -1, "OVERLAP_F_B_saved", -19));
    EXPECT_DOUBLE_EQ(calibrate_from_profile(profile, 1).overlap_efficiency, 19.0 / 380);
    // Without the paired figures, the medians' difference: stage 0 saves 210 + 190 - 300,
    // stage 1 240 + 190 - 430; (100 + 0) / 380.
    std::vector<traces::ProfileRecord> older = two_stage_profile();
    for (traces::ProfileRecord& row : older)
        if (row.stage == 0 && row.layer == -1 && row.quantity == "OVERLAP_F_B")
            row.median = 300;
    EXPECT_DOUBLE_EQ(calibrate_from_profile(older, 1).overlap_efficiency, 100.0 / 380);
    // A saving that is negative overall is no overlap, not a negative one.
    profile.push_back(figure(1, 1, -1, "OVERLAP_F_B_saved", -100));
    profile.erase(profile.end() - 2);
    EXPECT_EQ(calibrate_from_profile(profile, 1).overlap_efficiency, 0.0);
}

// Repeats of one configuration: every figure the median over the profiles that have it (the
// middle of three, the upper middle of two), samples added up, the first profile's order kept.
TEST(ProfileCalibration, SeveralProfilesGiveEachFiguresMedian) {
    const auto scaled = [](std::int64_t factor, std::int64_t offset) {
        std::vector<traces::ProfileRecord> profile = two_stage_profile();
        for (traces::ProfileRecord& row : profile) {
            row.median = row.median * factor + offset;
            row.low = row.median - 1;
            row.high = row.median + 1;
        }
        return profile;
    };
    std::vector<traces::ProfileRecord> slow = scaled(5, 10);  // one slow moment
    slow.push_back(figure(0, 0, -1, "OVERLAP_F_B_saved", 7));
    const std::vector<traces::ProfileRecord> combined =
        median_profile({scaled(1, 0), slow, scaled(1, 2)});
    const std::vector<traces::ProfileRecord> first = two_stage_profile();
    ASSERT_EQ(combined.size(), first.size() + 1);
    for (std::size_t index = 0; index < first.size(); ++index) {
        EXPECT_EQ(combined[index].quantity, first[index].quantity);
        EXPECT_EQ(combined[index].layer, first[index].layer);
        EXPECT_EQ(combined[index].median, first[index].median + 2) << first[index].quantity;
        EXPECT_EQ(combined[index].low, first[index].median + 1);
        EXPECT_EQ(combined[index].samples, 3 * first[index].samples);
    }
    EXPECT_EQ(combined.back().quantity, "OVERLAP_F_B_saved");  // only one profile had it
    EXPECT_EQ(combined.back().median, 7);
    EXPECT_EQ(median_profile({first, scaled(3, 0)})[0].median, 3 * first[0].median);
    EXPECT_TRUE(median_profile({}).empty());
}

TEST(ProfileCalibration, ALossTimedAloneIsTakenAsMeasured) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    // Figures whose sums never exceed their stage's: no stage-wrapper cost to take off.
    for (const auto& [quantity, value] :
         std::vector<std::pair<std::string, std::int64_t>>{{"F", 5},
                                                           {"I", 9},
                                                           {"W", 1},
                                                           {"B", 0},
                                                           {"held_bytes", 64},
                                                           {"kept_bytes", 0},
                                                           {"input_kept_bytes", 8}})
        profile.push_back(figure(1, 1, -2, quantity, value));
    const LayerCosts layers = calibrate_from_profile(profile, 1).layers;
    EXPECT_EQ(layers.loss.input_kept_bytes, 8);
    // The last stage's I leaves the loss's share for its W; a lone stage's I computes nothing.
    EXPECT_EQ(stages_from_layers(layers, {}, 2)[1].input_kept_bytes, 8);
    EXPECT_EQ(stages_from_layers(layers, {}, 1)[0].input_kept_bytes, 0);
    EXPECT_EQ(layers.loss.forward_ns, 5);
    EXPECT_EQ(layers.loss.input_ns, 9);
    EXPECT_EQ(layers.loss.weight_ns, 1);
    EXPECT_EQ(layers.loss.backward_ns, 0);
    EXPECT_EQ(layers.loss.held_bytes, 64);
    EXPECT_EQ(layers.stage_overhead.forward_ns, 10);  // stage 0 still gives the overhead
    EXPECT_EQ(layers.names.size(), 4u);               // the loss is no model layer
}

// Each layer timed as a stage of its own pays the stage's fixed cost (here 20 ns of F) that a
// stage of several layers pays once: the sums of layers exceed their stages by (n - 1) x 20.
// The calibration takes 20 off every layer and finds it again as the per-stage overhead, so a
// split into four one-layer stages costs 100 + 20 per stage, not 120 + 20.
TEST(ProfileCalibration, TheStageWrapperCostIsCountedOncePerStage) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    for (traces::ProfileRecord& row : profile) {
        if (row.quantity != "F" || row.stage < 0)
            continue;
        if (row.layer >= 0)
            row.median = row.low = row.high = 120;  // 100 of work, 20 of wrapper
        else
            row.median = row.low = row.high = 200 + 20 + (row.stage == 1 ? 30 : 0);  // + loss
    }
    const LayerCosts layers = calibrate_from_profile(profile, 1).layers;
    EXPECT_EQ(layers.forward_ns, (std::vector<std::int64_t>{100, 100, 100, 100}));
    EXPECT_EQ(layers.stage_overhead.forward_ns, 20);
    EXPECT_EQ(layers.loss.forward_ns, 30);
    const std::vector<LayerStage> four = stages_from_layers(layers, {}, 4);
    EXPECT_EQ(four[1].cost.forward_ns, 120);
    EXPECT_EQ(four[3].cost.forward_ns, 150);
}

// One figure of a profile: its stage, layer (-1: the whole stage), quantity and median.
struct ExpectedMedian {
    int stage;
    int layer;
    const char* quantity;
    std::int64_t median;
};

// Each expected figure is in `profile` once, with its median.
void expect_medians(const std::vector<traces::ProfileRecord>& profile,
                    const std::vector<ExpectedMedian>& expected) {
    for (const ExpectedMedian& figure : expected) {
        int found = 0;
        for (const traces::ProfileRecord& row : profile)
            if (row.stage == figure.stage && row.layer == figure.layer &&
                row.quantity == figure.quantity) {
                EXPECT_EQ(row.median, figure.median)
                    << figure.quantity << " of stage " << figure.stage << " layer " << figure.layer;
                ++found;
            }
        EXPECT_EQ(found, 1) << figure.quantity << " of stage " << figure.stage << " layer "
                            << figure.layer;
    }
}

// The step measured stage 0's F at 880 and backward at 1800 where the profile's layers add up to
// 200 and 180 (taken at a faster moment): every F figure of the stage is scaled by 4.4, every
// backward figure by 10, and the whole stage's F and B become the step's.
TEST(ProfileCalibration, TheProfileIsScaledToTheStepsOwnTimes) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    const std::vector<StageScale> scales = anchor_profile_to_run(profile, {{880, 1800}, {0, 0}});
    ASSERT_EQ(scales.size(), 2u);
    EXPECT_DOUBLE_EQ(scales[0].forward, 880.0 / 200);
    EXPECT_DOUBLE_EQ(scales[0].backward, 1800.0 / 180);
    EXPECT_DOUBLE_EQ(scales[1].forward, 1.0);  // the step ran nothing to compare with
    expect_medians(profile,
                   {{0, 1, "F", 440}, {0, 1, "W", 500}, {0, -1, "B", 1800}, {1, 2, "F", 100}});
}

// A zero-bubble step split stage 1's backward: its I (mean 240) and W (150) are what the
// stage's items' I (60 + 60) and W (50 + 50) are scaled to, each by its own factor, and the
// whole stage's I and W become the step's; its B items keep the backward's factor (I + W against
// the items' B, 180). Stage 0's I computes nothing in a run, so its figures all keep the
// backward's factor, whatever its I and W took.
TEST(ProfileCalibration, ASplitBackwardScalesItsIAndWToTheStepsOwn) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    const std::vector<StageScale> scales =
        anchor_profile_to_run(profile, {{880, 1800, 5, 1795}, {500, 390, 240, 150}});
    ASSERT_EQ(scales.size(), 2u);
    EXPECT_DOUBLE_EQ(scales[0].input, scales[0].backward);
    EXPECT_DOUBLE_EQ(scales[0].weight, scales[0].backward);
    EXPECT_DOUBLE_EQ(scales[1].backward, 390.0 / 180);
    EXPECT_DOUBLE_EQ(scales[1].input, 2.0);
    EXPECT_DOUBLE_EQ(scales[1].weight, 1.5);
    expect_medians(profile, {{1, 2, "I", 120},
                             {1, 3, "W", 75},
                             {1, 2, "B", 195},
                             {1, -1, "I", 240},
                             {1, -1, "W", 150},
                             {1, -1, "B", 390},
                             {0, 1, "I", 600}});  // 60 x 1800 / 180
}

TEST(ProfileCalibration, AnotherSplitReDerivesEveryStage) {
    const LayerCosts layers = calibrate_from_profile(two_stage_profile(), 1).layers;
    // Four stages of one layer each: the first has no I and W = its B; the last has the loss.
    const std::vector<LayerStage> stages = stages_from_layers(layers, {}, 4);
    ASSERT_EQ(stages.size(), 4u);
    EXPECT_EQ(stages[0].cost.forward_ns, 110);
    EXPECT_EQ(stages[0].cost.input_ns, 0);
    EXPECT_EQ(stages[0].cost.weight_ns, 100);
    EXPECT_EQ(stages[0].cost.backward_ns(), 100);
    EXPECT_EQ(stages[1].cost.input_ns, 60);
    EXPECT_EQ(stages[1].cost.weight_ns, 50);  // no stage past the first gave a W overhead
    EXPECT_EQ(stages[3].cost.forward_ns, 140);
    EXPECT_EQ(stages[3].cost.input_ns, 70);
    // Held: its layer, the loss, and the input it received (stage 2's output).
    EXPECT_EQ(stages[3].held_bytes, 1000 + 500 + 256);
    EXPECT_EQ(stages[3].kept_bytes, 256);
    EXPECT_EQ(stages[0].held_bytes, 1000);
    EXPECT_EQ(stages[0].kept_bytes, 0);
    EXPECT_EQ(stages[3].output_bytes, 0);
    EXPECT_EQ(stages[2].output_bytes, 256);
    EXPECT_EQ(stages[2].gradient_bytes, 4000);
    EXPECT_EQ(stages[2].backward_peak_bytes, 302);
    // A split point moves layers: stage 0 = layers 0-2, stage 1 = layer 3.
    const std::vector<LayerStage> uneven = stages_from_layers(layers, {"layers.3"}, 2);
    EXPECT_EQ(uneven[0].cost.forward_ns, 310);
    EXPECT_EQ(uneven[0].gradient_bytes, 12000);
    EXPECT_THROW(stages_from_layers(layers, {}, 5), ExperimentError);
}

// What an I leaves for its W, per layer (here 512 + the layer's index), is summed over a
// stage's layers; the first stage's I computes nothing and leaves only the gradient it was
// given (its output's size). A profile from before it was measured leaves it out everywhere.
TEST(ProfileCalibration, WhatAnInputBackwardLeavesIsSummedOverTheStagesLayers) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    for (int layer = 0; layer < 4; ++layer)
        profile.push_back(figure(layer / 2, layer / 2, layer, "input_kept_bytes", 512 + layer));
    const LayerCosts layers = calibrate_from_profile(profile, 1).layers;
    EXPECT_EQ(layers.input_kept_bytes, (std::vector<std::int64_t>{512, 513, 514, 515}));
    const std::vector<LayerStage> two = stages_from_layers(layers, {}, 2);
    EXPECT_EQ(two[0].input_kept_bytes, 256);  // layer 1's output, handed to stage 1
    EXPECT_EQ(two[1].input_kept_bytes, 514 + 515);
    Experiment experiment = plain_experiment();
    experiment.model.layers = 4;
    experiment.layers = layers;
    EXPECT_EQ(cost_model_for(experiment, 2).input_kept_bytes,
              (std::vector<std::int64_t>{256, 514 + 515}));
    const Experiment read_back = parse_experiment_toml(experiment_to_toml(experiment), "file");
    ASSERT_TRUE(read_back.layers.has_value());
    EXPECT_EQ(read_back.layers->input_kept_bytes, layers.input_kept_bytes);
    const LayerCosts older = calibrate_from_profile(two_stage_profile(), 1).layers;
    EXPECT_TRUE(older.input_kept_bytes.empty());
    EXPECT_EQ(stages_from_layers(older, {}, 2)[1].input_kept_bytes, 0);
}

TEST(ProfileCalibration, LinkFitsAreHeldToALink) {
    EXPECT_EQ(fit_link({{1000, 2000}, {3000, 3000}}, 1).latency_ns, 1500);
    EXPECT_EQ(fit_link({{1000, 2000}, {3000, 3000}}, 1).bytes_per_ns, 2.0);
    const auto message = [](const std::vector<std::pair<std::int64_t, std::int64_t>>& points) {
        try {
            fit_link(points, 7);
        } catch (const std::invalid_argument& error) {
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message({{1000, 2000}, {1000, 2100}}),
              "run 7: a link model needs one-way times of at least two message sizes, and the "
              "profile has only 1000 bytes: profile a run with more than one rank (`run "
              "--profile`)");
    EXPECT_EQ(message({}),
              "run 7: a link model needs one-way times of at least two message sizes, and the "
              "profile has none: profile a run with more than one rank (`run --profile`)");
    // The free fit starts at -4000 ns: the line through the origin instead, 10.5e6 / 5e6 =
    // 2.1 ns per byte.
    std::string note;
    const LinkSpec steep = fit_link({{1000, 500}, {2000, 5000}}, 7, &note);
    EXPECT_EQ(steep.latency_ns, 0);
    EXPECT_DOUBLE_EQ(steep.bytes_per_ns, 1 / 2.1);
    EXPECT_EQ(note,
              "the line through the one-way times (1000 B in 500 ns, 2000 B in 5000 ns) starts "
              "below zero: the link is the line through the origin, no latency");
    // Times that fall with the size (seen on a real CPU run: 1 KiB in 56.4 us, 64 KiB in
    // 47.2 us): the mean time, no bandwidth limit.
    const LinkSpec flat = fit_link({{1000, 5000}, {2000, 4000}}, 7, &note);
    EXPECT_EQ(flat.latency_ns, 4500);
    EXPECT_EQ(flat.bytes_per_ns, 0.0);
    EXPECT_EQ(note,
              "the one-way times do not grow with the message size (1000 B in 5000 ns, 2000 B "
              "in 4000 ns): the link is their mean, with no bandwidth limit");
    fit_link({{1000, 2000}, {3000, 3000}}, 1, &note);
    EXPECT_EQ(note, "");
}

// Records into the trace at `path` its run 1: a finished real 1F1B run (pp=2, m=4) of
// `recorded`'s model with `profile` for its layers.
void record_profiled_run(const std::filesystem::path& path,
                         const std::vector<traces::ProfileRecord>& profile,
                         Experiment recorded = plain_experiment()) {
    recorded.shape = {ScheduleKind::one_f_one_b, 2, 1, 4};
    traces::RunRecord run;
    run.kind = traces::RunKind::real;
    run.schedule = "1F1B";
    run.pp = 2;
    run.m = 4;
    run.config = experiment_to_toml(recorded);
    traces::TraceWriter writer(path);
    const auto id = writer.begin_run(run);
    for (const traces::ProfileRecord& row : profile)
        writer.add_profile(id, row);
    writer.finish_run(id, 1000, 0);
}

TEST(ProfileCalibration, CalibratedFileSimulatesAnyStageCountAndReadsBack) {
    const auto path = pipelens::testing::fresh_trace("profile_calibration");
    Experiment recorded = plain_experiment();
    recorded.model.hidden = 96;
    record_profiled_run(path, two_stage_profile(), recorded);
    const Calibration calibration = calibrate_from_trace(traces::TraceReader(path), 1);
    EXPECT_TRUE(calibration.from_profile);
    Experiment experiment = calibration.experiment;
    EXPECT_EQ(experiment.model.hidden, 96);  // the run's own model, not defaults
    EXPECT_EQ(experiment.model.layers, 4);
    validate_experiment(experiment);
    const Experiment read_back = parse_experiment_toml(experiment_to_toml(experiment), "file");
    ASSERT_TRUE(read_back.layers.has_value());
    EXPECT_EQ(read_back.layers->forward_ns, experiment.layers->forward_ns);
    EXPECT_EQ(read_back.layers->loss.held_bytes, 500);
    EXPECT_EQ(read_back.intra_host.latency_ns, experiment.intra_host.latency_ns);
    // Simulated on another stage count: pp=2 v=2 has four stages.
    experiment.shape = {ScheduleKind::interleaved_1f1b, 2, 2, 4};
    validate_experiment(experiment);
    const CostModel costs = cost_model_for(experiment, 4);
    ASSERT_EQ(costs.stages.size(), 4u);
    EXPECT_EQ(costs.stages[3].forward_ns, 140);
    EXPECT_EQ(costs.held_activation_bytes, (std::vector<std::int64_t>{1000, 1256, 1256, 1756}));
    EXPECT_EQ(costs.kept_bytes, (std::vector<std::int64_t>{0, 0, 0, 256}));
    EXPECT_EQ(costs.gradient_bytes, (std::vector<std::int64_t>{4000, 4000, 4000, 4000}));
}

// A profiled real 1F1B run (pp=2, m=4) with `profile`, calibrated; the figures refused, if any.
std::vector<std::string> refused_figures(const std::vector<traces::ProfileRecord>& profile,
                                         const std::string& name) {
    const auto path = pipelens::testing::fresh_trace(name);
    record_profiled_run(path, profile);
    std::vector<std::string> figures;
    try {
        calibrate_from_trace(traces::TraceReader(path), 1);
    } catch (const ImpossibleCalibration& refused) {
        figures = refused.figures();
        EXPECT_TRUE(refused.from_profile());  // a busy machine is then the usual cause
    }
    std::filesystem::remove(path);
    return figures;
}

// Sets one figure of `stage` (of its layer `layer`, or the whole stage: kProfileWholeStage).
void set_figure(std::vector<traces::ProfileRecord>& profile, int stage, int layer,
                const std::string& quantity, std::int64_t median, std::int64_t low,
                std::int64_t high) {
    for (traces::ProfileRecord& row : profile)
        if (row.stage == stage && row.layer == layer && row.quantity == quantity) {
            row.median = median;
            row.low = low;
            row.high = high;
        }
}

// W is a part of the full backward B: a fit whose W is above B is refused, naming the stage and
// both figures, whatever in-sample error it would have reached.
TEST(ProfileCalibration, AWeightGradientAboveTheWholeBackwardIsRefused) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    EXPECT_TRUE(refused_figures(profile, "w_within_b").empty());
    for (int layer : {2, 3})
        set_figure(profile, 1, layer, "W", 150, 150, 150);
    set_figure(profile, 1, traces::kProfileWholeStage, "W", 310, 310, 310);
    EXPECT_EQ(
        refused_figures(profile, "w_above_b"),
        (std::vector<std::string>{
            "run 1: stage 1 W is 310 ns, above its whole backward B 190 ns (the spreads of W "
            "and B allow up to 190 ns): W is a part of B and cannot take longer than all of it"}));
    // Had stage 1's B spread to 400 ns at its 90th percentile, 310 ns would be within it.
    set_figure(profile, 1, traces::kProfileWholeStage, "B", 190, 180, 400);
    EXPECT_EQ(refused_figures(profile, "w_within_spread"), (std::vector<std::string>{}));
}

// Layers of one shape on one stage do the same work at the same moment: one F far above its
// peer's is refused unless the two figures' own spreads explain the factor.
TEST(ProfileCalibration, ALayerFOffItsSameShapedPeersIsRefusedUnlessTheSpreadExplainsIt) {
    std::vector<traces::ProfileRecord> profile = two_stage_profile();
    set_figure(profile, 1, 3, "F", 450, 450, 450);
    EXPECT_EQ(refused_figures(profile, "layer_off"),
              (std::vector<std::string>{
                  "run 1: stage 1 layer 3 (layers.3) F is 450 ns, 4.5x the F of its 1 "
                  "same-shaped peer on the stage (100 ns); their 10-90 % ranges explain at most "
                  "2.0x: a slowed or mismeasured layer, profile the run again"}));
    // A 10-90 % range of 100..400 ns spans 4x: the same 3x is what it can show.
    set_figure(profile, 1, 3, "F", 300, 100, 400);
    EXPECT_EQ(refused_figures(profile, "layer_noisy"), (std::vector<std::string>{}));
}

}  // namespace
}  // namespace pipelens::sim
