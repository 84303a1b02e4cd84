// view/reshape and transpose. A reshape is cut into groups of input dims that become groups
// of output dims (same element count). A sharded dim keeps its sharding only where the data
// each device holds stays contiguous: the first dim of a merged group, if its size divides by
// the devices sharding it; the first piece of a split, if that piece's size does. "The devices
// sharding it" are all the mesh dims that shard that tensor dim together (S(0)S(0) on a 2x2
// mesh: 4), taken outermost first, so (24,) -> (6, 4) keeps mesh dim 0 (6 / 2) but not mesh
// dim 1 (6 / 4). Elsewhere the input must be replicated on that mesh dim first — reshape asks
// for it, view refuses (upstream's strict view), naming the dim. Transpose swaps the sharded
// dims.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

// Sizes are checked before they are multiplied: an overflowing product could wrap around to
// the input's element count and pass as a valid view.
std::vector<std::int64_t> parse_shape(const std::string& text, std::int64_t elements,
                                      const std::string& op) {
    std::vector<std::int64_t> shape = integers_in(text, op);
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
    if (inferred != shape.end() && *known == 0)
        throw ImpossibleShapeError(fmt::format(
            "{}: shape {} leaves -1 ambiguous: its other sizes hold 0 elements, so any size fits",
            op, text));
    if (inferred != shape.end())
        *inferred = elements / *known;
    // Counts and strides fit now: the inferred size is at most the input's count over the
    // others' (and with a 0 among them it stays -1).
    const std::int64_t total = *checked_element_count(shape);
    if (total != elements)
        throw MalformedArgumentError(
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

// What a reshape does to one input dim's sharding: the output dim it moves to (-1: none, the
// dim vanishes or is not the first of a merged group) and the sizes the devices sharding it
// must divide.
struct DimFate {
    int target = -1;
    bool vanishes = false;               // a size-1 dim the new shape drops
    std::optional<std::int64_t> merged;  // the dim's size, when it is merged with others
    std::optional<std::int64_t> piece;   // the first piece's size, when it is split
};

std::vector<DimFate> dim_fates(const std::vector<std::int64_t>& from,
                               const std::vector<std::int64_t>& to) {
    std::vector<DimFate> fates(from.size());
    for (const DimGroup& group : view_groups(from, to)) {
        if (group.outputs.empty())
            for (int dim : group.inputs)
                fates[dim].vanishes = true;
        if (group.inputs.empty() || group.outputs.empty())
            continue;
        DimFate& fate = fates[group.inputs.front()];
        fate.target = group.outputs.front();
        if (group.inputs.size() > 1)
            fate.merged = from[group.inputs.front()];
        if (group.outputs.size() > 1)
            fate.piece = to[group.outputs.front()];
    }
    return fates;
}

// Why the dim cannot stay sharded over `devices` devices ("" when it can).
std::string why_not_kept(const DimFate& fate, std::int64_t devices) {
    if (fate.vanishes)
        return "(the new shape drops it)";
    if (fate.target < 0)
        return "(only the first of merged dims can stay sharded)";
    if (fate.merged && *fate.merged % devices != 0)
        return fmt::format("(merged, its size {} does not divide by {})", *fate.merged, devices);
    if (fate.piece && *fate.piece % devices != 0)
        return fmt::format("(split, its first piece {} does not divide by {})", *fate.piece,
                           devices);
    return "";
}

std::string mesh_dims_text(const std::vector<int>& dims) {
    if (dims.size() == 1)
        return fmt::format("mesh dim {}", dims[0]);
    const std::vector<int> head(dims.begin(), dims.end() - 1);
    return fmt::format("mesh dims {} and {}", fmt::join(head, ", "), dims.back());
}

struct ViewPlacements {
    std::vector<Placement> wanted;  // of the input
    std::vector<Placement> out;
};

// The input and output placements for one producer layout; a strict view throws where a
// reshape would replicate.
ViewPlacements view_placements(const OpCall& call, const std::vector<Placement>& source,
                               const std::vector<DimFate>& fates,
                               const std::vector<std::int64_t>& to, bool strict) {
    const std::vector<std::int64_t>& from = call.input(0).tensor.shape;
    ViewPlacements result{source, source};
    std::vector<std::vector<int>> kept(from.size());  // mesh dims still sharding each dim
    std::vector<std::int64_t> devices(from.size(), 1);
    for (int mesh_dim = 0; mesh_dim < call.mesh.ndim(); ++mesh_dim) {
        const Placement& placement = source[mesh_dim];
        if (!placement.is_shard())
            continue;
        const int dim = placement.dim;
        const std::int64_t together = devices[dim] * call.mesh.size(mesh_dim);
        const std::string why = why_not_kept(fates[dim], together);
        if (why.empty()) {
            devices[dim] = together;
            kept[dim].push_back(mesh_dim);
            result.out[mesh_dim].dim = fates[dim].target;
            continue;
        }
        if (strict) {
            std::vector<int> mesh_dims = kept[dim];
            mesh_dims.push_back(mesh_dim);
            throw std::invalid_argument(fmt::format(
                "tensor dim {} (size {}) is sharded on {} ({} devices) and cannot stay "
                "sharded as shape [{}] {}; reshape it (which replicates it first) or "
                "redistribute before the view",
                dim, from[dim], mesh_dims_text(mesh_dims), together, fmt::join(to, ", "), why));
        }
        result.wanted[mesh_dim] = result.out[mesh_dim] = Placement::replicate();
    }
    return result;
}

}  // namespace

OpStrategy view_strategy(const OpCall& call) {
    const DTensorSpec& input = call.input(0);
    const bool strict = call.schema.op.starts_with("aten.view");
    const std::vector<std::string> values = call.values();
    if (values.empty())
        throw MalformedArgumentError(
            fmt::format("{}: needs the new shape, e.g. [128]", call.schema.op));
    const std::vector<std::int64_t> to =
        parse_shape(values[0], input.tensor.element_count(), call.schema.op);
    const std::vector<DimFate> fates = dim_fates(input.tensor.shape, to);
    OpStrategy result;
    for (const OpSpec& producer : call.inputs[0].strategies) {
        const ViewPlacements placements =
            view_placements(call, producer.output().placements, fates, to, strict);
        OpSpec spec;
        spec.outputs = {
            DTensorSpec{call.mesh, placements.out, meta_of_shape(to, input.tensor.dtype)}};
        DTensorSpec target = spec_like(input, placements.wanted);
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
    const std::string& op = call.schema.op;
    // t() swaps the two dims of a matrix and returns a vector or a scalar as it is (torch
    // refuses more dims); transpose(dim0, dim1) names both.
    const bool matrix_transpose = op.starts_with("aten.t.");
    if (matrix_transpose ? !values.empty() : values.size() != 2)
        throw MalformedArgumentError(
            fmt::format("{}: takes {}, not {} argument{}", op,
                        matrix_transpose ? "no argument after the tensor" : "two dims",
                        values.size(), values.size() == 1 ? "" : "s"));
    if (matrix_transpose && ndim > 2)
        throw MalformedArgumentError(
            fmt::format("{}: expects a tensor of at most 2 dims, not {}", op, ndim));
    std::int64_t first = matrix_transpose ? 0 : integer_argument(values[0], op);
    std::int64_t second =
        matrix_transpose ? std::min(1, ndim - 1) : integer_argument(values[1], op);
    if (matrix_transpose && ndim == 0)
        second = 0;
    const std::int64_t rank = std::max(ndim, 1);  // a scalar takes dim 0 or -1, as torch lets it
    first = first < 0 ? first + rank : first;
    second = second < 0 ? second + rank : second;
    if (first < 0 || second < 0 || first >= rank || second >= rank)
        throw MalformedArgumentError(
            fmt::format("{}: dims {} and {} for a tensor of {} dims", op, first, second, ndim));
    std::vector<std::int64_t> shape = input.tensor.shape;
    if (first != second)
        std::swap(shape[first], shape[second]);
    OpStrategy result;
    for (const OpSpec& producer : call.inputs[0].strategies) {
        std::vector<Placement> out = producer.output().placements;
        for (Placement& placement : out)
            if (placement.is_shard(static_cast<int>(first)))
                placement.dim = static_cast<int>(second);
            else if (placement.is_shard(static_cast<int>(second)))
                placement.dim = static_cast<int>(first);
        OpSpec spec;
        spec.outputs = {DTensorSpec{call.mesh, out, meta_of_shape(shape, input.tensor.dtype)}};
        spec.inputs.push_back(producer.output());
        spec.redistribute_cost.push_back(redistribute_costs(call.inputs[0], producer.output()));
        result.strategies.push_back(std::move(spec));
    }
    return result;
}

}  // namespace pipelens::sharding
