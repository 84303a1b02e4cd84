// What ZeroBubbleAuto searches with, taken from an experiment: its stages' F, I and W times
// (which must be equal: the authors' scheduler, like their runtime, orders with one time per
// kind), the slowest boundary transfer (latency + activation bytes / bandwidth), and the memory
// limit (schedule.max_activations, default p). Other kinds are left untouched.
#pragma once

#include "engine/experiment/experiment.hpp"

namespace pipelens::sim {

// Sets experiment.shape.zero_bubble when the experiment generates a ZeroBubbleAuto schedule.
// Throws ExperimentError, naming the experiment and the stages, when the stages' times differ.
void resolve_zero_bubble_inputs(Experiment& experiment);

}  // namespace pipelens::sim
