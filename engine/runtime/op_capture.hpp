// The ops a list of layers runs, captured with LibTorch's RecordFunction callbacks while it
// runs once. Only top-level ops count (aten::linear, not the aten::addmm it calls): what a
// stage's code asks for, like the call_function nodes of upstream's FX graphs. Used by
// `explain` and by the stage backends that act on a stage's ReLUs.
#pragma once

#include <string>
#include <vector>

#include "engine/runtime/model_library.hpp"

namespace pipelens::runtime {

// Runs `layers` on `inputs` and returns the top-level ops in call order.
std::vector<std::string> capture_ops(const std::vector<ModelLayer>& layers,
                                     const TensorList& inputs);

}  // namespace pipelens::runtime
