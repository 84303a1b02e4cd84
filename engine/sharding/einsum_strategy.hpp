// Strategies of a one- or two-input einsum, upstream's gen_einsum_strategies: the equation's
// dims sorted alphabetically and sorted into batch (in every input and the output),
// contracting (not in the output), lhs-only and rhs-only; one mesh dim's choices are
// all-Replicate, then one per batch dim (everything sharded on it), per contracting dim
// (inputs sharded on it, output Partial(sum)), per lhs-only and rhs-only dim, and with
// `linearity` everything Partial; the mesh gets every combination (mesh dim 0 slowest).
// Specs carry no tensor metadata and no costs; the ops that use this add both.
#pragma once

#include <string>
#include <vector>

#include "engine/sharding/op_schema.hpp"

namespace pipelens::sharding {

struct EinsumDims {
    std::vector<std::string> inputs;  // "mk", "kn"
    std::string output;               // "mn"
    std::string batch, contracting, lhs_only, rhs_only;
};

// std::invalid_argument for more than two inputs or not exactly one output.
EinsumDims parse_einsum(const std::string& equation);

std::vector<OpSpec> einsum_strategies(const std::string& equation, const DeviceMesh& mesh,
                                      bool linearity = false);

}  // namespace pipelens::sharding
