// How many parameters a built-in model holds, from its name, layer count and hidden size,
// without building it: what `pipelens run` checks against this machine's memory before any
// rank builds a copy. The layers themselves are built by engine/runtime/model_library.cpp; a
// runtime test builds every built-in model and holds its parameter count to this one.
//
// Invariants: exact for the built-in models (mlp, example, kwargs, transformer, tied, empty);
// nullopt for a TorchScript file, whose size is known only once it is loaded; computed in
// floating point, so no size overflows (an estimate for a refusal needs no more precision).
#pragma once

#include <optional>
#include <string>

namespace pipelens::runtime {

std::optional<double> builtin_parameter_count(const std::string& model, int layers, double hidden);

}  // namespace pipelens::runtime
