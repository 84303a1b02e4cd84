// aten.embedding(weight, indices): per mesh dim all-Replicate; column-wise (weight Shard(1),
// output sharded on its embedding dim); row-wise (weight Shard(0); indices and output a masked
// partial: each device looks up only its rows); then indices sharded on each of their dims.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

// What aten.embedding refuses before any sharding: a weight that is no table of rows, indices
// that are not integers.
void require_table_and_indices(const OpCall& call) {
    const TensorMeta& weight = call.input(0).tensor;
    const TensorMeta& indices = call.input(1).tensor;
    if (weight.shape.size() != 2)
        throw MalformedArgumentError(fmt::format(
            "{}: input 0 (the weight) of shape [{}] has {} dims; it needs 2 (rows, embedding dim)",
            call.schema.op, fmt::join(weight.shape, ", "), weight.shape.size()));
    if (indices.dtype != "i64" && indices.dtype != "i32")
        throw MalformedArgumentError(
            fmt::format("{}: input 1 (the indices) is {}; indices are i64 or i32", call.schema.op,
                        indices.dtype));
}

}  // namespace

OpStrategy embedding_strategy(const OpCall& call) {
    require_table_and_indices(call);
    const DTensorSpec& weight = call.input(0);
    const DTensorSpec& indices = call.input(1);
    const int index_dims = static_cast<int>(indices.tensor.shape.size());
    std::vector<std::int64_t> output_shape = indices.tensor.shape;
    output_shape.push_back(weight.tensor.shape.at(1));
    const Placement masked = Placement::mask_partial(weight.tensor.shape, 0);
    std::vector<MeshDimChoice> choices{
        {Placement::replicate(), Placement::replicate(), Placement::replicate()},
        {Placement::shard(index_dims), Placement::shard(1), Placement::replicate()},
        {masked, Placement::shard(0), masked},
    };
    for (int dim = 0; dim < index_dims; ++dim)
        choices.push_back({Placement::shard(dim), Placement::replicate(), Placement::shard(dim)});
    return expand_to_full_mesh(call.mesh, call.inputs, choices,
                               {meta_of_shape(output_shape, weight.tensor.dtype)});
}

}  // namespace pipelens::sharding
