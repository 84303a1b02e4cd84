// Shared strategy machinery; see strategy_utils.hpp.
#include "engine/sharding/strategy_utils.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/sharding/redistribute_cost.hpp"

namespace pipelens::sharding {

OpStrategy strategy_of(const DTensorSpec& spec) {
    OpSpec only;
    only.outputs = {spec};
    OpStrategy strategy;
    strategy.strategies.push_back(std::move(only));
    return strategy;
}

const DTensorSpec& spec_of(const OpStrategy& strategy) {
    return strategy.strategies.at(0).output();
}

std::vector<double> redistribute_costs(const OpStrategy& producer, const DTensorSpec& target) {
    std::vector<double> costs;
    for (const OpSpec& spec : producer.strategies)
        costs.push_back(redistribute_cost(spec.output(), target));
    return costs;
}

DTensorSpec spec_like(const DTensorSpec& like, std::vector<Placement> placements) {
    return DTensorSpec{like.mesh, std::move(placements), like.tensor};
}

bool next_combination(std::vector<std::size_t>& pick, std::size_t choices) {
    for (std::size_t dim = pick.size(); dim-- > 0;) {
        if (++pick[dim] < choices)
            return true;
        pick[dim] = 0;
    }
    return false;
}

OpStrategy expand_to_full_mesh(const DeviceMesh& mesh, const std::vector<OpStrategy>& inputs,
                               const std::vector<MeshDimChoice>& choices,
                               const std::vector<std::optional<TensorMeta>>& output_metas,
                               int input_index) {
    OpStrategy result;
    if (choices.empty())
        return result;
    const std::size_t positions = choices.front().size();
    std::vector<std::size_t> pick(mesh.ndim(), 0);  // mixed radix, mesh dim 0 most significant
    do {
        OpSpec spec;
        bool shardable = true;
        for (std::size_t position = 0; position < positions; ++position) {
            if (!choices[pick.empty() ? 0 : pick[0]][position]) {
                if (static_cast<int>(position) < input_index)
                    spec.outputs.push_back(std::nullopt);
                continue;
            }
            std::vector<Placement> placements;
            for (int dim = 0; dim < mesh.ndim(); ++dim)
                placements.push_back(*choices[pick[dim]][position]);
            if (static_cast<int>(position) < input_index) {
                const auto& meta = output_metas.at(position);
                spec.outputs.push_back(DTensorSpec{mesh, placements, meta.value_or(TensorMeta{})});
                continue;
            }
            const std::size_t input = spec.inputs.size();
            const DTensorSpec& current = spec_of(inputs.at(input));
            DTensorSpec target{mesh, placements, current.tensor};
            shardable = shardable && is_shardable(current.tensor.shape, target);
            spec.redistribute_cost.push_back(redistribute_costs(inputs[input], target));
            spec.inputs.push_back(std::move(target));
        }
        spec.tuple_output = input_index > 1;
        (shardable ? result.strategies : result.rejected).push_back(std::move(spec));
    } while (next_combination(pick, choices.size()));
    return result;
}

std::vector<int> broadcast_dims_map(const std::vector<std::int64_t>& common,
                                    const std::vector<std::int64_t>& input) {
    std::vector<int> map(common.size(), -1);
    const int common_ndim = static_cast<int>(common.size());
    const int input_ndim = static_cast<int>(input.size());
    for (int offset = 1; offset <= input_ndim && offset <= common_ndim; ++offset)
        if (input[input_ndim - offset] == common[common_ndim - offset])
            map[common_ndim - offset] = input_ndim - offset;
    return map;
}

std::vector<Placement> placements_after_broadcast(const std::vector<Placement>& placements,
                                                  const std::vector<std::int64_t>& common,
                                                  const std::vector<int>& dims_map,
                                                  bool partial_to_replicate) {
    std::vector<Placement> mapped;
    for (const Placement& placement : placements) {
        if (placement.is_partial()) {
            mapped.push_back(partial_to_replicate ? Placement::replicate() : placement);
        } else if (placement.is_shard()) {
            const int dim =
                placement.dim < 0 ? placement.dim + static_cast<int>(common.size()) : placement.dim;
            const int input_dim = dims_map.at(dim);
            if (input_dim < 0) {
                mapped.push_back(Placement::replicate());
            } else {
                Placement shard = placement;
                shard.dim = input_dim;
                mapped.push_back(shard);
            }
        } else {
            mapped.push_back(placement);
        }
    }
    return mapped;
}

namespace {

// "[8, 8] and [7, 8]", "[3, 5], [4] and [1]".
std::string shapes_text(const std::vector<std::vector<std::int64_t>>& shapes) {
    std::string text;
    for (std::size_t index = 0; index < shapes.size(); ++index) {
        if (index > 0)
            text += index + 1 == shapes.size() ? " and " : ", ";
        text += fmt::format("[{}]", fmt::join(shapes[index], ", "));
    }
    return text;
}

}  // namespace

std::vector<std::int64_t> broadcast_shapes(const std::vector<std::vector<std::int64_t>>& shapes) {
    std::size_t ndim = 0;
    for (const auto& shape : shapes)
        ndim = std::max(ndim, shape.size());
    std::vector<std::int64_t> common(ndim, 1);
    for (const auto& shape : shapes)
        for (std::size_t offset = 1; offset <= shape.size(); ++offset) {
            std::int64_t& target = common[ndim - offset];
            const std::int64_t size = shape[shape.size() - offset];
            if (target == 1)
                target = size;
            else if (size != 1 && size != target)
                throw std::invalid_argument(fmt::format(
                    "shapes {} do not broadcast: dimension {} from the right is {} in one and {} "
                    "in another (sizes must match or be 1)",
                    shapes_text(shapes), offset, target, size));
        }
    return common;
}

namespace {

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    return text;
}

}  // namespace

std::int64_t integer_argument(std::string_view text, std::string_view op) {
    const std::string_view token = trimmed(text);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (token.empty() || error != std::errc() || end != token.data() + token.size())
        throw MalformedArgumentError(
            fmt::format("{}: '{}' is not an integer{}", op, token,
                        error == std::errc::result_out_of_range ? " that int64 holds" : ""));
    return value;
}

std::vector<std::int64_t> integers_in(std::string_view text, std::string_view op) {
    std::string_view list = trimmed(text);
    if (list.size() >= 2 && ((list.front() == '[' && list.back() == ']') ||
                             (list.front() == '(' && list.back() == ')'))) {
        list = trimmed(list.substr(1, list.size() - 2));
        if (list.empty())
            return {};
    }
    std::vector<std::int64_t> values;
    for (;;) {
        const std::size_t comma = list.find(',');
        values.push_back(integer_argument(list.substr(0, comma), op));
        if (comma == std::string_view::npos)
            return values;
        list.remove_prefix(comma + 1);
    }
}

TensorMeta meta_of_shape(std::vector<std::int64_t> shape, std::string dtype) {
    // An output's shape combines its inputs' (an mm of [a, 0] and [0, c] is [a, c]), so it can be
    // too large where each input was not.
    if (!checked_element_count(shape))
        throw ImpossibleShapeError(
            fmt::format("the output shape [{}] holds more elements than int64 can count",
                        fmt::join(shape, ", ")));
    TensorMeta meta;
    meta.stride = contiguous_stride(shape);
    meta.shape = std::move(shape);
    meta.dtype = std::move(dtype);
    return meta;
}

}  // namespace pipelens::sharding
