// Spec arithmetic, upstream's shardability rule, and spec text both ways.
#include "engine/sharding/dtensor_spec.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/tensor/dtype_names.hpp"
#include "engine/text/printable.hpp"
#include "engine/text/shortened.hpp"

namespace pipelens::sharding {

int DTensorSpec::num_shards() const {
    int shards = 1;
    for (int dim = 0; dim < static_cast<int>(placements.size()); ++dim)
        if (placements[dim].is_shard())
            shards *= mesh.size(dim);
    return shards;
}

int DTensorSpec::shards_of_dim(int tensor_dim) const {
    int shards = 1;
    for (int dim = 0; dim < static_cast<int>(placements.size()); ++dim)
        if (placements[dim].is_shard(tensor_dim))
            shards *= mesh.size(dim);
    return shards;
}

bool DTensorSpec::is_replicated() const {
    for (const Placement& placement : placements)
        if (!placement.is_replicate())
            return false;
    return true;
}

bool DTensorSpec::has_partial() const {
    for (const Placement& placement : placements)
        if (placement.is_partial())
            return true;
    return false;
}

bool DTensorSpec::has_strided_shard() const {
    for (const Placement& placement : placements)
        if (placement.kind == PlacementKind::strided_shard)
            return true;
    return false;
}

std::string to_string(const DTensorSpec& spec) {
    // Mesh dims sharding each tensor dim, in order: a dim sharded more than once is indexed,
    // unless strided shards encode the order (upstream then prints no index at all).
    const bool strided = spec.has_strided_shard();
    std::map<int, std::vector<int>> shard_order;
    for (int dim = 0; dim < static_cast<int>(spec.placements.size()); ++dim)
        if (spec.placements[dim].is_shard() && !strided)
            shard_order[spec.placements[dim].dim].push_back(dim);
    std::string placements;
    for (int dim = 0; dim < static_cast<int>(spec.placements.size()); ++dim) {
        const Placement& placement = spec.placements[dim];
        placements += to_string(placement);
        if (placement.is_shard() && shard_order[placement.dim].size() > 1) {
            const auto& order = shard_order[placement.dim];
            placements +=
                fmt::format("[{}]", std::find(order.begin(), order.end(), dim) - order.begin());
        }
    }
    return fmt::format("Spec({}({}))", pipelens::to_string(spec.tensor), placements);
}

std::string why_unshardable(const std::vector<std::int64_t>& shape, const DTensorSpec& spec) {
    std::map<int, std::int64_t> shards;
    std::string strided_shortfall;  // upstream's extra rule, reported after the plain one
    for (int dim = 0; dim < static_cast<int>(spec.placements.size()); ++dim) {
        const Placement& placement = spec.placements[dim];
        if (!placement.is_shard())
            continue;
        if (placement.dim < 0 || placement.dim >= static_cast<int>(shape.size()))
            return fmt::format("has no dim {}", placement.dim);
        std::int64_t& count = shards.try_emplace(placement.dim, 1).first->second;
        count *= spec.mesh.size(dim);
        // A _S(d, f) at its mesh dim needs f times the shards of d so far. At most 2^20
        // devices times a split factor below 2^31: the product fits.
        if (placement.kind != PlacementKind::strided_shard || !strided_shortfall.empty())
            continue;
        const std::int64_t needed = count * placement.split_factor;
        if (needed > 1 && shape[placement.dim] < needed)
            strided_shortfall = fmt::format(
                "dim {} has {} elements; {} on mesh dim {} needs at least {} ({} shards x split "
                "factor {})",
                placement.dim, shape[placement.dim], to_string(placement), dim, needed, count,
                placement.split_factor);
    }
    for (const auto& [dim, count] : shards)
        if (count > 1 && shape[dim] < count)
            return fmt::format("dim {} has {} elements for {} shards", dim, shape[dim], count);
    return strided_shortfall;
}

bool is_shardable(const std::vector<std::int64_t>& shape, const DTensorSpec& spec) {
    return why_unshardable(shape, spec).empty();
}

std::optional<std::int64_t> checked_element_count(const std::vector<std::int64_t>& shape) {
    std::int64_t count = 1;
    std::int64_t extent = 1;  // what the outermost stride multiplies up to
    for (std::int64_t size : shape)
        if (__builtin_mul_overflow(count, size, &count) ||
            __builtin_mul_overflow(extent, std::max<std::int64_t>(size, 1), &extent))
            return std::nullopt;
    return count;
}

DTensorSpec parse_tensor_spec(std::string_view text, const DeviceMesh& mesh) {
    const auto fail = [&](const std::string& why) {
        return std::invalid_argument(fmt::format(
            "tensor '{}': {} (expected DTYPE[D0,D1,...](PLACEMENTS), e.g. f32[1024,512](S(1)))",
            text, why));
    };
    const std::size_t open = text.find('[');
    const std::size_t close = text.find(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
        throw fail("no [shape]");
    DTensorSpec spec;
    spec.mesh = mesh;
    spec.tensor.dtype = std::string(text.substr(0, open));
    if (spec.tensor.dtype.empty())
        throw fail("no dtype");
    if (!dtype_item_bytes(spec.tensor.dtype))
        throw fail(fmt::format("unknown dtype '{}'; PyTorch's short names are {}",
                               shown_text(spec.tensor.dtype, 40), known_dtype_names()));
    std::string_view dims = text.substr(open + 1, close - open - 1);
    while (!dims.empty()) {
        while (!dims.empty() && (dims.front() == ' ' || dims.front() == ','))
            dims.remove_prefix(1);
        if (dims.empty())
            break;
        std::int64_t size = 0;
        const auto [end, error] = std::from_chars(dims.data(), dims.data() + dims.size(), size);
        if (error != std::errc() || size < 0)
            throw fail("a shape entry is not a size");
        spec.tensor.shape.push_back(size);
        dims.remove_prefix(static_cast<std::size_t>(end - dims.data()));
    }
    // Costs are in bytes, so the byte count must fit too.
    TensorMeta one_element;
    one_element.shape = {1};
    one_element.dtype = spec.tensor.dtype;
    const std::optional<std::int64_t> elements = checked_element_count(spec.tensor.shape);
    std::int64_t bytes = 0;
    if (!elements || __builtin_mul_overflow(*elements, one_element.byte_count(), &bytes))
        throw fail(fmt::format("shape [{}] holds more elements or bytes than int64 can count",
                               fmt::join(spec.tensor.shape, ", ")));
    spec.tensor.stride = contiguous_stride(spec.tensor.shape);
    std::string_view rest = text.substr(close + 1);
    if (rest.empty()) {
        spec.placements.assign(mesh.ndim(), Placement::replicate());
        return spec;
    }
    if (rest.front() != '(' || rest.back() != ')')
        throw fail("placements go in parentheses after the shape");
    spec.placements = parse_placements(rest.substr(1, rest.size() - 2));
    if (static_cast<int>(spec.placements.size()) != mesh.ndim())
        throw fail(fmt::format("{} placement{} for a {}-dimensional mesh", spec.placements.size(),
                               spec.placements.size() == 1 ? "" : "s", mesh.ndim()));
    for (const Placement& placement : spec.placements)
        if (placement.is_shard() &&
            (placement.dim < 0 || placement.dim >= static_cast<int>(spec.tensor.shape.size())))
            throw fail(
                fmt::format("{} shards a dim the tensor does not have", to_string(placement)));
    return spec;
}

}  // namespace pipelens::sharding
