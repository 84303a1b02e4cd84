// sum and mean (aten.sum.default and aten.mean.default over every dim, aten.sum.dim_IntList and
// aten.mean.dim over the listed ones, all of them for an empty list as torch.sum): a dim sharded
// and reduced leaves each device a partial result — Partial(sum) for sum, Partial(avg) for
// mean — other shards follow their dim to its new index. When the reduction is not linear in
// the input's layout (a mean over an unevenly sharded dim, a Partial of another kind) the
// input is first replicated on the reduced dims, as upstream's common_reduction_strategy does.
#include <algorithm>

#include <fmt/format.h>

#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

std::vector<int> parse_dims(const std::string& text, int ndim, const std::string& op) {
    std::vector<int> dims;
    for (const std::int64_t dim : integers_in(text, op)) {
        if (dim < -ndim || dim >= ndim)
            throw MalformedArgumentError(
                fmt::format("{}: dim {} is out of range for {} dims", op, dim, ndim));
        const int wrapped = static_cast<int>(dim < 0 ? dim + ndim : dim);
        if (std::find(dims.begin(), dims.end(), wrapped) != dims.end())
            throw MalformedArgumentError(
                fmt::format("{}: dim {} appears more than once in {}", op, wrapped, text));
        dims.push_back(wrapped);
    }
    return dims;
}

bool is_true(const std::string& text) {
    return text == "True" || text == "true" || text == "1";
}

}  // namespace

OpStrategy reduction_strategy(const OpCall& call) {
    const DTensorSpec& input = call.input(0);
    const int ndim = static_cast<int>(input.tensor.shape.size());
    const std::vector<std::string> values = call.values();
    // The .default overloads take (self, dtype): no dims to read.
    const bool listed = !call.schema.op.ends_with(".default") && !values.empty();
    std::vector<int> dims =
        listed ? parse_dims(values[0], ndim, call.schema.op) : std::vector<int>{};
    if (dims.empty())
        for (int dim = 0; dim < ndim; ++dim)
            dims.push_back(dim);
    const bool keep_dim = listed && values.size() > 1 && is_true(values[1]);
    const std::string reduce_op = call.schema.op.starts_with("aten.mean") ? "avg" : "sum";
    const auto reduced = [&](int dim) {
        return std::find(dims.begin(), dims.end(), dim) != dims.end();
    };
    std::vector<int> new_index(ndim, -1);
    std::vector<std::int64_t> output_shape;
    for (int dim = 0, next = 0; dim < ndim; ++dim) {
        if (reduced(dim) && !keep_dim)
            continue;
        new_index[dim] = next++;
        output_shape.push_back(reduced(dim) ? 1 : input.tensor.shape[dim]);
    }
    OpStrategy result;
    bool linear = true;  // once not linear, stays so for later producer strategies (upstream)
    for (const OpSpec& producer : call.inputs[0].strategies) {
        const DTensorSpec& source = producer.output();
        if (reduce_op == "avg")
            for (int dim : dims)
                if (source.shards_of_dim(dim) > 1 &&
                    source.tensor.shape[dim] % source.shards_of_dim(dim) != 0)
                    linear = false;
        for (const Placement& placement : source.placements)
            if (placement.is_partial() && placement.reduce_op != reduce_op)
                linear = false;
        std::vector<Placement> wanted = source.placements;
        if (!linear)
            for (Placement& placement : wanted)
                if (placement.is_partial() || (placement.is_shard() && reduced(placement.dim)))
                    placement = Placement::replicate();
        std::vector<Placement> out;
        for (const Placement& placement : wanted) {
            if (placement.is_shard() && reduced(placement.dim)) {
                out.push_back(Placement::partial(reduce_op));
            } else if (placement.is_shard()) {
                Placement shard = placement;
                shard.dim = new_index[placement.dim];
                out.push_back(shard);
            } else {
                out.push_back(placement);
            }
        }
        OpSpec spec;
        spec.outputs = {
            DTensorSpec{call.mesh, out, meta_of_shape(output_shape, input.tensor.dtype)}};
        DTensorSpec target = spec_like(input, wanted);
        spec.redistribute_cost.push_back(redistribute_costs(call.inputs[0], target));
        spec.inputs.push_back(std::move(target));
        result.strategies.push_back(std::move(spec));
    }
    return result;
}

}  // namespace pipelens::sharding
