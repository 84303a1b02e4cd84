// What ZeroBubbleAuto searches with, taken from an experiment: the median over its stages of the
// F, I and W times (the authors' runtime orders with one time per kind, the median of its
// stages'), the slowest boundary transfer (latency + activation bytes / bandwidth), and the
// memory limit (schedule.max_activations, default p). Other kinds are left untouched.
#pragma once

#include "engine/experiment/experiment.hpp"

namespace pipelens::sim {

// Sets experiment.shape.zero_bubble when the experiment generates a ZeroBubbleAuto schedule.
// Throws ExperimentError, naming the experiment and the split, when the transformer's layers
// split unevenly over the stages (a declared uneven split the one order cannot honour).
void resolve_zero_bubble_inputs(Experiment& experiment);

}  // namespace pipelens::sim
