// Building blocks shared by the op strategies, as upstream's _ops/utils.py has them: the cost
// row of one input (one column per strategy of its producer), the expansion of one mesh dim's
// choices to the whole mesh (cartesian product, mesh dim 0 slowest, unshardable inputs
// dropped), and broadcasting placements from an op's common shape to one input's shape.
#pragma once

#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "engine/sharding/op_schema.hpp"

namespace pipelens::sharding {

// A tensor as an op's input sees it in eager mode: one strategy, its current spec.
OpStrategy strategy_of(const DTensorSpec& spec);
const DTensorSpec& spec_of(const OpStrategy& strategy);  // the first strategy's output

// Moving each of `producer`'s strategies' outputs to `target`.
std::vector<double> redistribute_costs(const OpStrategy& producer, const DTensorSpec& target);

// A spec on `mesh` with `placements` and the tensor metadata of `like`.
DTensorSpec spec_like(const DTensorSpec& like, std::vector<Placement> placements);

// One mesh dim's placement for every position: outputs first, then the tensor inputs. An empty
// optional is a position without a tensor (an output an op does not produce).
using MeshDimChoice = std::vector<std::optional<Placement>>;

// Steps `pick`, one choice index per mesh dim (mesh dim 0 the most significant digit, each
// below `choices`), to the next combination; false once every one was visited, `pick` then
// back at all zeros.
bool next_combination(std::vector<std::size_t>& pick, std::size_t choices);

// Every combination of `choices` over the mesh dims (mesh dim 0 varying slowest); positions
// [0, input_index) are outputs (with `output_metas`), the rest the `inputs` in order. A
// combination is dropped when an input spec is not shardable for its shape.
OpStrategy expand_to_full_mesh(const DeviceMesh& mesh, const std::vector<OpStrategy>& inputs,
                               const std::vector<MeshDimChoice>& choices,
                               const std::vector<std::optional<TensorMeta>>& output_metas,
                               int input_index = 1);

// For each dim of `common` the dim of `input` it broadcasts from, -1 when broadcast (missing
// or size 1 against a larger size).
std::vector<int> broadcast_dims_map(const std::vector<std::int64_t>& common,
                                    const std::vector<std::int64_t>& input);
// Placements of the common-shaped result expressed for an input: a Shard of a broadcast dim
// becomes Replicate; Partial stays (or becomes Replicate when asked).
std::vector<Placement> placements_after_broadcast(const std::vector<Placement>& placements,
                                                  const std::vector<std::int64_t>& common,
                                                  const std::vector<int>& dims_map,
                                                  bool partial_to_replicate = false);

std::vector<std::int64_t> broadcast_shapes(const std::vector<std::vector<std::int64_t>>& shapes);

// An op's argument that is not what the op takes ("[one]" where dims go, "8x16" in a shape, a
// transpose of one dim): bad input, never a sharding failure.
class MalformedArgumentError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// One integer argument as printed ("-1"); MalformedArgumentError naming `op` for anything else.
std::int64_t integer_argument(std::string_view text, std::string_view op);

// A list of integers as printed, "[1, -1]" -> {1, -1}, or a single integer "2" -> {2} (dims,
// shapes); MalformedArgumentError naming `op` when an element is not an integer.
std::vector<std::int64_t> integers_in(std::string_view text, std::string_view op);

// A contiguous tensor of `shape`; ImpossibleShapeError when its count or strides overflow int64.
TensorMeta meta_of_shape(std::vector<std::int64_t> shape, std::string dtype);

}  // namespace pipelens::sharding
