// mm, bmm, addmm, baddbmm: einsum strategies (mk,kn->mn and bmk,bkn->bmn) whose matrix inputs
// can be sharded that way, in generation order, with the bias of addmm/baddbmm following the
// output through broadcasting (a Partial output gives a Partial bias, as upstream).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/sharding/einsum_strategy.hpp"
#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

std::vector<std::int64_t> product_shape(const TensorMeta& left, const TensorMeta& right) {
    std::vector<std::int64_t> shape = left.shape;
    shape.back() = right.shape.back();
    return shape;
}

// Both matrices of the rank the op takes, and shapes that multiply: the left's last dim is the
// right's next to last (and a batched product's batch dims agree), as LibTorch checks them.
void require_ranks(const OpCall& call, std::size_t first, int rank) {
    for (std::size_t index = first; index < first + 2; ++index)
        if (static_cast<int>(call.input(index).tensor.shape.size()) != rank)
            throw MalformedArgumentError(fmt::format("{}: input {} has {} dims; it needs {}",
                                                     call.schema.op, index,
                                                     call.input(index).tensor.shape.size(), rank));
    const std::vector<std::int64_t>& left = call.input(first).tensor.shape;
    const std::vector<std::int64_t>& right = call.input(first + 1).tensor.shape;
    const bool batches_agree = rank == 2 || left.front() == right.front();
    if (left.back() != right[right.size() - 2] || !batches_agree)
        throw MalformedArgumentError(fmt::format(
            "{}: inputs {} and {} of shapes [{}] and [{}] cannot be multiplied", call.schema.op,
            first, first + 1, fmt::join(left, ", "), fmt::join(right, ", ")));
}

// One dtype for every input, as LibTorch's matrix products take them (no type promotion).
void require_one_dtype(const OpCall& call) {
    for (std::size_t index = 1; index < call.inputs.size(); ++index)
        if (call.input(index).tensor.dtype != call.input(0).tensor.dtype)
            throw MalformedArgumentError(fmt::format(
                "{}: inputs 0 and {} are {} and {}; the op takes one dtype (cast one first)",
                call.schema.op, index, call.input(0).tensor.dtype, call.input(index).tensor.dtype));
}

// A bias broadcasts to the product: no more dims, and each of its sizes 1 or the product's.
void require_bias_broadcasts(const OpCall& call, const std::vector<std::int64_t>& product) {
    const std::vector<std::int64_t>& bias = call.input(0).tensor.shape;
    bool broadcasts = bias.size() <= product.size();
    for (std::size_t offset = 1; broadcasts && offset <= bias.size(); ++offset) {
        const std::int64_t size = bias[bias.size() - offset];
        broadcasts = size == 1 || size == product[product.size() - offset];
    }
    if (!broadcasts)
        throw MalformedArgumentError(fmt::format(
            "{}: input 0 (the bias) of shape [{}] does not broadcast to the product's shape [{}]",
            call.schema.op, fmt::join(bias, ", "), fmt::join(product, ", ")));
}

// `first`: the index of the first matrix input (1 when a bias comes before the matrices).
OpStrategy matrix_strategy(const OpCall& call, const std::string& equation, std::size_t first) {
    require_ranks(call, first, equation.find(',') == 2 ? 2 : 3);
    require_one_dtype(call);
    const DTensorSpec& left = call.input(first);
    const DTensorSpec& right = call.input(first + 1);
    const TensorMeta output_meta =
        meta_of_shape(product_shape(left.tensor, right.tensor), left.tensor.dtype);
    if (first == 1)
        require_bias_broadcasts(call, output_meta.shape);
    OpStrategy result;
    for (OpSpec spec : einsum_strategies(equation, call.mesh)) {
        DTensorSpec left_target = spec_like(left, spec.inputs[0].placements);
        DTensorSpec right_target = spec_like(right, spec.inputs[1].placements);
        DTensorSpec output = spec.output();
        if (!is_shardable(left.tensor.shape, left_target) ||
            !is_shardable(right.tensor.shape, right_target)) {
            spec.inputs = {left_target, right_target};
            result.rejected.push_back(std::move(spec));
            continue;
        }
        output.tensor = output_meta;
        OpSpec kept;
        kept.outputs = {output};
        if (first == 1) {
            const DTensorSpec& bias = call.input(0);
            DTensorSpec bias_target =
                spec_like(bias, placements_after_broadcast(
                                    output.placements, output_meta.shape,
                                    broadcast_dims_map(output_meta.shape, bias.tensor.shape)));
            kept.redistribute_cost.push_back(redistribute_costs(call.inputs[0], bias_target));
            kept.inputs.push_back(std::move(bias_target));
        }
        kept.redistribute_cost.push_back(redistribute_costs(call.inputs[first], left_target));
        kept.redistribute_cost.push_back(redistribute_costs(call.inputs[first + 1], right_target));
        kept.inputs.push_back(std::move(left_target));
        kept.inputs.push_back(std::move(right_target));
        result.strategies.push_back(std::move(kept));
    }
    return result;
}

}  // namespace

OpStrategy mm_strategy(const OpCall& call) {
    return matrix_strategy(call, "mk,kn->mn", 0);
}

OpStrategy bmm_strategy(const OpCall& call) {
    return matrix_strategy(call, "bmk,bkn->bmn", 0);
}

OpStrategy addmm_strategy(const OpCall& call) {
    return matrix_strategy(call, "mk,kn->mn", 1);
}

OpStrategy baddbmm_strategy(const OpCall& call) {
    return matrix_strategy(call, "bmk,bkn->bmn", 1);
}

}  // namespace pipelens::sharding
