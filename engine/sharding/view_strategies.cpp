// view/reshape and transpose. A reshape is cut into groups of input dims that become groups
// of output dims (same element count). A sharded dim keeps its sharding only where the data
// each device holds stays contiguous: the first dim of a merged group, if its size divides by
// the devices sharding it; the first piece of a split, if that piece's size does. Elsewhere
// the input must be replicated first — reshape asks for it, view refuses (upstream's strict
// view), naming the dim. Transpose swaps the sharded dims.
#include <algorithm>

#include <fmt/format.h>

#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

// Sizes are checked before they are multiplied: an overflowing product could wrap around to
// the input's element count and pass as a valid view.
std::vector<std::int64_t> parse_shape(const std::string& text, std::int64_t elements,
                                      const std::string& op) {
    std::vector<std::int64_t> shape = integers_in(text);
    if (std::count(shape.begin(), shape.end(), -1) > 1 ||
        std::any_of(shape.begin(), shape.end(), [](std::int64_t size) { return size < -1; }))
        throw ImpossibleShapeError(fmt::format(
            "{}: shape {} has a negative size (only one -1, for an inferred dim, is allowed)", op,
            text));
    const auto inferred = std::find(shape.begin(), shape.end(), -1);
    std::vector<std::int64_t> known_sizes = shape;
    std::erase(known_sizes, -1);
    const std::optional<std::int64_t> known = checked_element_count(known_sizes);
    if (!known)
        throw ImpossibleShapeError(
            fmt::format("{}: shape {} holds more elements than int64 can count (the input has {})",
                        op, text, elements));
    if (inferred != shape.end() && *known > 0)
        *inferred = elements / *known;
    const std::int64_t total = *checked_element_count(shape);
    if (total != elements)
        throw std::invalid_argument(
            fmt::format("{}: shape {} does not hold {} elements", op, text, elements));
    return shape;
}

struct DimGroup {
    std::vector<int> inputs;
    std::vector<int> outputs;
};

// With a size 0 the products no longer tell the groups apart (found by fuzzing: [0,4] viewed
// as [0] ran past the end of the new shape), so what one side has left, other than size-1 dims,
// once the other is used up joins the last group.
std::vector<DimGroup> view_groups(const std::vector<std::int64_t>& from,
                                  const std::vector<std::int64_t>& to) {
    std::vector<DimGroup> groups;
    std::size_t in = 0, out = 0;
    const auto take_rest = [&](DimGroup& group) {
        for (; in < from.size(); ++in)
            group.inputs.push_back(static_cast<int>(in));
        for (; out < to.size(); ++out)
            group.outputs.push_back(static_cast<int>(out));
    };
    while (in < from.size() || out < to.size()) {
        DimGroup group;
        if (in < from.size() && from[in] == 1 && (out >= to.size() || to[out] != 1)) {
            groups.push_back({{static_cast<int>(in++)}, {}});
            continue;
        }
        if (out < to.size() && to[out] == 1 && (in >= from.size() || from[in] != 1)) {
            groups.push_back({{}, {static_cast<int>(out++)}});
            continue;
        }
        if (in >= from.size() || out >= to.size()) {
            take_rest(groups.empty() ? groups.emplace_back() : groups.back());
            break;
        }
        std::int64_t in_size = from[in], out_size = to[out];
        group.inputs.push_back(static_cast<int>(in++));
        group.outputs.push_back(static_cast<int>(out++));
        while (in_size != out_size) {
            if (in >= from.size() || out >= to.size()) {
                take_rest(group);
                break;
            }
            if (in_size < out_size) {
                in_size *= from[in];
                group.inputs.push_back(static_cast<int>(in++));
            } else {
                out_size *= to[out];
                group.outputs.push_back(static_cast<int>(out++));
            }
        }
        groups.push_back(group);
    }
    return groups;
}

}  // namespace

OpStrategy view_strategy(const OpCall& call) {
    const DTensorSpec& input = call.input(0);
    const bool strict = call.schema.op.starts_with("aten.view");
    const std::vector<std::string> values = call.values();
    if (values.empty())
        throw std::invalid_argument(
            fmt::format("{}: needs the new shape, e.g. [128]", call.schema.op));
    const std::vector<std::int64_t>& from = input.tensor.shape;
    const std::vector<std::int64_t> to =
        parse_shape(values[0], input.tensor.element_count(), call.schema.op);
    // Per input dim: where its sharding goes (-1: nowhere) and which mesh dims may keep it.
    std::vector<int> target_dim(from.size(), -1);
    std::vector<std::vector<bool>> keeps(from.size(), std::vector<bool>(call.mesh.ndim(), false));
    for (const DimGroup& group : view_groups(from, to)) {
        if (group.inputs.empty() || group.outputs.empty())
            continue;
        const int first = group.inputs.front();
        target_dim[first] = group.outputs.front();
        for (int mesh_dim = 0; mesh_dim < call.mesh.ndim(); ++mesh_dim) {
            const int devices = call.mesh.size(mesh_dim);
            const bool merges = group.inputs.size() > 1;
            const bool splits = group.outputs.size() > 1;
            keeps[first][mesh_dim] = (!merges || from[first] % devices == 0) &&
                                     (!splits || to[group.outputs.front()] % devices == 0);
        }
    }
    OpStrategy result;
    for (const OpSpec& producer : call.inputs[0].strategies) {
        const DTensorSpec& source = producer.output();
        std::vector<Placement> wanted = source.placements, out = source.placements;
        for (int mesh_dim = 0; mesh_dim < call.mesh.ndim(); ++mesh_dim) {
            const Placement& placement = source.placements[mesh_dim];
            if (!placement.is_shard())
                continue;
            if (!keeps[placement.dim][mesh_dim]) {
                if (strict)
                    throw std::invalid_argument(fmt::format(
                        "{}: tensor dim {} (size {}) is sharded on mesh dim {} ({} devices) and "
                        "cannot stay sharded as shape [{}]; reshape it (which replicates it "
                        "first) or redistribute before the view",
                        to_string(call.schema), placement.dim, from[placement.dim], mesh_dim,
                        call.mesh.size(mesh_dim), fmt::join(to, ", ")));
                wanted[mesh_dim] = out[mesh_dim] = Placement::replicate();
                continue;
            }
            out[mesh_dim].dim = target_dim[placement.dim];
        }
        OpSpec spec;
        spec.outputs = {DTensorSpec{call.mesh, out, meta_of_shape(to, input.tensor.dtype)}};
        DTensorSpec target = spec_like(input, wanted);
        spec.redistribute_cost.push_back(redistribute_costs(call.inputs[0], target));
        spec.inputs.push_back(std::move(target));
        result.strategies.push_back(std::move(spec));
    }
    return result;
}

OpStrategy transpose_strategy(const OpCall& call) {
    const DTensorSpec& input = call.input(0);
    const int ndim = static_cast<int>(input.tensor.shape.size());
    const std::vector<std::string> values = call.values();
    int first = 0, second = 1;
    if (values.size() >= 2) {
        first = std::stoi(values[0]);
        second = std::stoi(values[1]);
    }
    first = first < 0 ? first + ndim : first;
    second = second < 0 ? second + ndim : second;
    if (first < 0 || second < 0 || first >= ndim || second >= ndim)
        throw std::invalid_argument(fmt::format("{}: dims {} and {} for a tensor of {} dims",
                                                call.schema.op, first, second, ndim));
    std::vector<std::int64_t> shape = input.tensor.shape;
    std::swap(shape[first], shape[second]);
    OpStrategy result;
    for (const OpSpec& producer : call.inputs[0].strategies) {
        std::vector<Placement> out = producer.output().placements;
        for (Placement& placement : out)
            if (placement.is_shard(first))
                placement.dim = second;
            else if (placement.is_shard(second))
                placement.dim = first;
        OpSpec spec;
        spec.outputs = {DTensorSpec{call.mesh, out, meta_of_shape(shape, input.tensor.dtype)}};
        spec.inputs.push_back(producer.output());
        spec.redistribute_cost.push_back(redistribute_costs(call.inputs[0], producer.output()));
        result.strategies.push_back(std::move(spec));
    }
    return result;
}

}  // namespace pipelens::sharding
