// Stage costs from costs measured per model layer (Experiment::layers): the one place that says
// how layers add up to a stage, used by the cost model (any pp, v or split) and by calibration
// (which fits the per-stage overhead and the loss as what the sum leaves unexplained).
//
// Rules: F, I, W and B of a stage are the sums over its layers, plus the stage overhead; the
// first stage's inputs are data that need no gradient, so its I is empty and its W runs the
// whole backward (the sum of its layers' B); the last stage adds the loss. Memory: held bytes
// and weight-gradient bytes add up, a stage past the first also holds the inputs it received
// (the previous stage's output) until its backward, a backward's temporaries are those of its
// largest layer, and a stage sends what its last layer outputs; the last stage keeps the
// model's output (its last layer's) until the step ends. No result is negative.
#pragma once

#include <string>
#include <vector>

#include "engine/experiment/experiment.hpp"
#include "engine/stage_plan/stage_split.hpp"
#include "sim/cost_model.hpp"

namespace pipelens::sim {

struct LayerStage {
    StageCost cost;
    std::int64_t held_bytes = 0;  // received inputs included, past the first stage
    std::int64_t kept_bytes = 0;  // of held, what outlives the backward (to the step's end)
    std::int64_t output_bytes = 0;
    std::int64_t gradient_bytes = 0;
    std::int64_t backward_peak_bytes = 0;
    std::int64_t input_kept_bytes = 0;  // what an I leaves held until its W
};

// The stage holding `layers`, without overhead or loss.
LayerStage sum_of_layers(const LayerCosts& costs, const runtime::StageLayers& layers,
                         bool first_stage);

// The times of one stage holding `layers`, overhead included, and the loss when it is the last:
// what stages_from_layers gives that stage, without building the whole split.
StageCost stage_cost_of(const LayerCosts& costs, const runtime::StageLayers& layers,
                        bool first_stage, bool last_stage);

// Every stage of a `stage_count`-stage split (`split_points` as in [model]), overhead and loss
// included. Throws ExperimentError naming layers/split_points when the split does not fit.
std::vector<LayerStage> stages_from_layers(const LayerCosts& costs,
                                           const std::vector<std::string>& split_points,
                                           int stage_count);

}  // namespace pipelens::sim
