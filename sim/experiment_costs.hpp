// Turns an experiment's description into the simulator's CostModel: explicit per-stage times
// and sizes as given, or derived from a transformer layer description (FLOP counts over the
// device's TFLOP/s, boundary and held activation sizes from the layer shape). Explicitly given
// sizes win over derived ones, so a user can correct one figure without rewriting the rest.
#pragma once

#include <vector>

#include "engine/experiment/experiment.hpp"
#include "sim/cost_model.hpp"

namespace pipelens::sim {

// `experiment` must have passed validate_experiment for a schedule of `stage_count` stages.
CostModel cost_model_for(const Experiment& experiment, int stage_count);

// The model layers each stage holds where the experiment says it in layers: a [transformer]
// (its layers_per_stage, or its layers split evenly) or costs per layer (model.layers split at
// model.split_points, as a real run splits them). Empty where costs are given otherwise.
std::vector<int> layers_per_stage(const Experiment& experiment, int stage_count);

}  // namespace pipelens::sim
