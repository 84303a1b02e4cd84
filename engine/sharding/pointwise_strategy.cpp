// Pointwise ops follow one input: the one with the most shards (then more dims, then the
// first), its layout carried to the broadcast result; every input is asked for that layout as
// seen through broadcasting (a broadcast dim replicated). A Partial survives only linear ops:
// add/sub keep it on all operands (unless a plain number is added), mul on the followed one
// (the others replicated), div only on the numerator (sum_i x_i / y is (sum_i x_i) / y, but
// x / sum_i y_i is not sum_i x / y_i), so a followed denominator's Partial is all-reduced and
// that mesh dim replicated; any other op replicates it.
//
// On each mesh dim where the inputs as they are match one of the op's partial rules (upstream's
// single-dim rules in _pointwise_ops.py: mul keeps a partial sum on either operand, add keeps a
// P(max) beside a replicated operand, relu and tanh keep P(max) and P(min), ...), that rule
// decides the dim instead: the inputs stay as they are and the output takes the rule's Partial,
// at no cost, as upstream propagates inputs that already match a rule.
#include <algorithm>
#include <tuple>

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

// One mesh dim's partial rule: the output's placement, then each tensor input's.
using PartialRule = std::vector<Placement>;

std::vector<PartialRule> partial_rules(const OpCall& call) {
    const auto p = [](const char* reduce_op) { return Placement::partial(reduce_op); };
    const Placement r = Placement::replicate();
    const std::string& op = call.schema.op;
    if ((op == "aten.add.Tensor" || op == "aten.sub.Tensor") && !adds_a_number(call))
        return {{p("sum"), p("sum"), p("sum")}, {p("avg"), p("avg"), p("avg")},
                {p("avg"), p("avg"), r},        {p("max"), p("max"), r},
                {p("min"), p("min"), r},        {p("avg"), r, p("avg")}};
    if (op == "aten.mul.Tensor")
        return {{p("sum"), p("sum"), r},
                {p("avg"), p("avg"), r},
                {p("sum"), r, p("sum")},
                {p("avg"), r, p("avg")}};
    if (op == "aten.div.Tensor")
        return {{p("sum"), p("sum"), r}, {p("avg"), p("avg"), r}};
    if (op == "aten.relu.default" || op == "aten.tanh.default")  // non-decreasing everywhere
        return {{p("max"), p("max")}, {p("min"), p("min")}};
    return {};
}

// The rule the inputs' placements on `mesh_dim` match as they are, if one does.
const PartialRule* matching_rule(const std::vector<PartialRule>& rules, const OpCall& call,
                                 int mesh_dim) {
    for (const PartialRule& rule : rules) {
        if (rule.size() != call.inputs.size() + 1)
            continue;
        bool matches = true;
        for (std::size_t index = 0; index < call.inputs.size() && matches; ++index)
            matches = call.input(index).placements[mesh_dim] == rule[index + 1];
        if (matches)
            return &rule;
    }
    return nullptr;
}

}  // namespace

OpStrategy pointwise_strategy(const OpCall& call) {
    // On a tie, an input whose Partial the op keeps through it is followed: the others are then
    // asked for that Partial (free from a replicated input) instead of it being all-reduced.
    const auto kept_partial = [&](std::size_t index) {
        const std::vector<Placement>& placements = call.input(index).placements;
        return keeps_partial_of(call, index) &&
               std::any_of(placements.begin(), placements.end(), [](const Placement& placement) {
                   return placement.kind == PlacementKind::partial &&
                          (placement.reduce_op == "sum" || placement.reduce_op == "avg");
               });
    };
    std::size_t followed = 0;
    for (std::size_t index = 1; index < call.inputs.size(); ++index) {
        const DTensorSpec& candidate = call.input(index);
        const DTensorSpec& best = call.input(followed);
        const auto rank = [&](const DTensorSpec& spec, std::size_t at) {
            return std::make_tuple(spec.num_shards(), spec.tensor.shape.size(), kept_partial(at));
        };
        if (rank(candidate, index) > rank(best, followed))
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
    const std::vector<PartialRule> rules = partial_rules(call);
    std::vector<const PartialRule*> matched;
    for (int mesh_dim = 0; mesh_dim < call.mesh.ndim(); ++mesh_dim)
        matched.push_back(matching_rule(rules, call, mesh_dim));
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
        const auto ruled = [&](int mesh_dim) {
            return matched[mesh_dim] && !source.placements[mesh_dim].is_shard();
        };
        for (int mesh_dim = 0; mesh_dim < call.mesh.ndim(); ++mesh_dim)
            if (ruled(mesh_dim))
                placements[mesh_dim] = matched[mesh_dim]->front();
        OpSpec spec;
        spec.outputs = {
            DTensorSpec{call.mesh, placements, meta_of_shape(common, source.tensor.dtype)}};
        for (std::size_t index = 0; index < call.inputs.size(); ++index) {
            const DTensorSpec& input = call.input(index);
            std::vector<Placement> wanted = placements_after_broadcast(
                placements, common, broadcast_dims_map(common, input.tensor.shape),
                linearity == 2 && index != followed);
            for (int mesh_dim = 0; mesh_dim < call.mesh.ndim(); ++mesh_dim)
                if (ruled(mesh_dim))
                    wanted[mesh_dim] = input.placements[mesh_dim];
            DTensorSpec target = spec_like(input, std::move(wanted));
            spec.redistribute_cost.push_back(redistribute_costs(call.inputs[index], target));
            spec.inputs.push_back(std::move(target));
        }
        result.strategies.push_back(std::move(spec));
    }
    return result;
}

}  // namespace pipelens::sharding
