// Strategies of a one- or two-input einsum, upstream's gen_einsum_strategies: the equation's
// dims sorted alphabetically and sorted into batch (in every input and the output),
// contracting (not in the output), lhs-only and rhs-only; one mesh dim's choices are
// all-Replicate, then one per batch dim (everything sharded on it), per contracting dim
// (inputs sharded on it, output Partial(sum)), per lhs-only and rhs-only dim, and with
// `linearity` everything Partial; the mesh gets every combination (mesh dim 0 slowest).
// Specs carry no tensor metadata and no costs; the ops that use this add both, and
// `pipelens shard --einsum` lists them as they are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/sharding/op_schema.hpp"

namespace pipelens::sharding {

struct EinsumDims {
    std::vector<std::string> inputs;  // "mk", "kn"
    std::string output;               // "mn"
    std::string batch, contracting, lhs_only, rhs_only;
};

// std::invalid_argument naming the equation for more than two inputs, not exactly one output,
// a dim that is not a letter, a letter twice in one operand (a diagonal) or an output dim in no
// input.
EinsumDims parse_einsum(const std::string& equation);

// Strategies grow as choices^mesh dims: a long equation on a 5-dim mesh would be hundreds of
// millions, so more than this many is refused (std::invalid_argument) before any is built.
inline constexpr std::int64_t kMaxEinsumStrategies = 100000;

std::vector<OpSpec> einsum_strategies(const std::string& equation, const DeviceMesh& mesh,
                                      bool linearity = false);

}  // namespace pipelens::sharding
