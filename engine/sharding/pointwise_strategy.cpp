// Pointwise ops follow one input: the one with the most shards (then more dims, then the
// first), its layout carried to the broadcast result; every input is asked for that layout as
// seen through broadcasting (a broadcast dim replicated). A Partial survives only linear ops:
// add/sub keep it on all operands (unless a plain number is added), mul on the followed one
// (the others replicated), div only on the numerator (sum_i x_i / y is (sum_i x_i) / y, but
// x / sum_i y_i is not sum_i x / y_i), so a followed denominator's Partial is all-reduced and
// that mesh dim replicated; any other op replicates it.
#include <fmt/format.h>

#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

// -1 not linear, 1 additive, 2 multiplicative (upstream's linearity codes).
int linearity_of(const std::string& op) {
    if (op == "aten.add.Tensor" || op == "aten.sub.Tensor")
        return 1;
    if (op == "aten.mul.Tensor" || op == "aten.div.Tensor")
        return 2;
    return -1;
}

bool adds_a_number(const OpCall& call) {
    return linearity_of(call.schema.op) == 1 && !call.values().empty();
}

// Whether a Partial of input `followed` can pass through the op unreduced (upstream's
// single-dim rules: mul through whichever input is followed, div only through its numerator,
// input 0).
bool keeps_partial_of(const OpCall& call, std::size_t followed) {
    const int linearity = linearity_of(call.schema.op);
    if (linearity < 0 || adds_a_number(call))
        return false;
    return call.schema.op != "aten.div.Tensor" || followed == 0;
}

}  // namespace

OpStrategy pointwise_strategy(const OpCall& call) {
    std::size_t followed = 0;
    for (std::size_t index = 1; index < call.inputs.size(); ++index) {
        const DTensorSpec& candidate = call.input(index);
        const DTensorSpec& best = call.input(followed);
        if (candidate.num_shards() > best.num_shards() ||
            (candidate.num_shards() == best.num_shards() &&
             candidate.tensor.shape.size() > best.tensor.shape.size()))
            followed = index;
    }
    std::vector<std::vector<std::int64_t>> shapes;
    for (std::size_t index = 0; index < call.inputs.size(); ++index)
        shapes.push_back(call.input(index).tensor.shape);
    std::vector<std::int64_t> common;
    try {
        common = broadcast_shapes(shapes);
    } catch (const std::invalid_argument& error) {
        throw MalformedArgumentError(fmt::format("{}: {}", call.schema.op, error.what()));
    }
    const int linearity = linearity_of(call.schema.op);
    OpStrategy result;
    // Partial sums survive a linear op that adds no number (x + 1 of a partial sum is wrong) and
    // does not divide by them.
    const bool keeps_partial = keeps_partial_of(call, followed);
    for (const OpSpec& producer : call.inputs[followed].strategies) {
        const DTensorSpec& source = producer.output();
        const int shift = static_cast<int>(common.size() - source.tensor.shape.size());
        std::vector<Placement> placements;
        for (const Placement& placement : source.placements) {
            if (placement.is_shard()) {
                Placement shard = placement;
                shard.dim += shift;
                placements.push_back(shard);
            } else if (placement.is_partial()) {
                const bool linear =
                    keeps_partial && (placement.reduce_op == "sum" || placement.reduce_op == "avg");
                placements.push_back(linear ? placement : Placement::replicate());
            } else {
                placements.push_back(placement);
            }
        }
        OpSpec spec;
        spec.outputs = {
            DTensorSpec{call.mesh, placements, meta_of_shape(common, source.tensor.dtype)}};
        for (std::size_t index = 0; index < call.inputs.size(); ++index) {
            const DTensorSpec& input = call.input(index);
            DTensorSpec target = spec_like(
                input, placements_after_broadcast(placements, common,
                                                  broadcast_dims_map(common, input.tensor.shape),
                                                  linearity == 2 && index != followed));
            spec.redistribute_cost.push_back(redistribute_costs(call.inputs[index], target));
            spec.inputs.push_back(std::move(target));
        }
        result.strategies.push_back(std::move(spec));
    }
    return result;
}

}  // namespace pipelens::sharding
