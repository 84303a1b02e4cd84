// Each device's block is found from its mesh coordinate: a tensor dim sharded over mesh dims
// m1, m2, ... (outermost first) is cut into chunks as torch.chunk cuts it (ceil-sized, the last
// possibly shorter or empty), and the device takes the chunk its coordinates number.
#include "engine/sharding/sharding_visualize.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace pipelens::sharding {
namespace {

struct Range {
    std::int64_t begin = 0;
    std::int64_t end = 0;  // exclusive
    auto operator<=>(const Range&) const = default;
};

Range range_of(const DTensorSpec& spec, const std::vector<int>& coordinate, int tensor_dim) {
    const std::int64_t size = spec.tensor.shape[tensor_dim];
    std::int64_t chunks = 1, index = 0;
    for (int mesh_dim = 0; mesh_dim < spec.mesh.ndim(); ++mesh_dim)
        if (spec.placements[mesh_dim].is_shard(tensor_dim)) {
            chunks *= spec.mesh.size(mesh_dim);
            index = index * spec.mesh.size(mesh_dim) + coordinate[mesh_dim];
        }
    const std::int64_t chunk = (size + chunks - 1) / chunks;
    return {std::min(size, index * chunk), std::min(size, (index + 1) * chunk)};
}

std::string range_text(const Range& range) {
    if (range.begin >= range.end)
        return "(empty)";
    return fmt::format("{}-{}", range.begin, range.end - 1);
}

}  // namespace

std::string visualize_sharding(const DTensorSpec& spec) {
    const int ndim = static_cast<int>(spec.tensor.shape.size());
    if (ndim < 1 || ndim > 2)
        throw std::invalid_argument(
            fmt::format("--show draws 1-D and 2-D tensors; {} has {} dims", to_string(spec), ndim));
    // A drawing is read by a person: a million devices took minutes and 95 MB of text.
    if (spec.mesh.size() > kLargestDrawnMesh)
        throw std::invalid_argument(fmt::format(
            "a drawing shows at most {} devices; {} has {} (the layout reads the same on "
            "a smaller mesh of the same shape)",
            kLargestDrawnMesh, to_string(spec.mesh), spec.mesh.size()));
    std::map<std::pair<Range, Range>, std::vector<int>> holders;
    std::set<Range> row_set, column_set;
    for (int device = 0; device < spec.mesh.size(); ++device) {
        const std::vector<int> coordinate = spec.mesh.coordinate_of(device);
        const Range row = ndim == 2 ? range_of(spec, coordinate, 0) : Range{0, 1};
        const Range column = range_of(spec, coordinate, ndim - 1);
        holders[{row, column}].push_back(device);
        row_set.insert(row);
        column_set.insert(column);
    }
    const std::vector<Range> rows(row_set.begin(), row_set.end());
    const std::vector<Range> columns(column_set.begin(), column_set.end());
    const std::string device_prefix = spec.mesh.device_type + ":";
    const auto cell = [&](const Range& row, const Range& column) {
        const auto found = holders.find({row, column});
        if (found == holders.end())
            return std::string("-");
        std::vector<std::string> names;
        for (int device : found->second)
            names.push_back(device_prefix + std::to_string(device));
        return fmt::format("{}", fmt::join(names, ", "));
    };
    std::size_t width = 10;
    for (const Range& row : rows)
        for (const Range& column : columns)
            width = std::max(width, cell(row, column).size() + 2);
    std::string text = fmt::format("{} on {}\n", to_string(spec), to_string(spec.mesh));
    text += fmt::format("{:<12}", "");
    for (const Range& column : columns)
        text += fmt::format(
            "{:<{}}", fmt::format("{}{}", ndim == 2 ? "cols " : "", range_text(column)), width);
    text += "\n";
    for (const Range& row : rows) {
        text += fmt::format("{:<12}", ndim == 2 ? fmt::format("rows {}", range_text(row)) : "");
        for (const Range& column : columns)
            text += fmt::format("{:<{}}", cell(row, column), width);
        text += "\n";
    }
    if (spec.has_partial())
        text +=
            "partial: the devices of a cell each hold a partial value of it; a reduction "
            "completes it\n";
    std::string trimmed;  // without the padding at the end of each line
    for (char c : text) {
        if (c == '\n')
            while (!trimmed.empty() && trimmed.back() == ' ')
                trimmed.pop_back();
        trimmed += c;
    }
    return trimmed;
}

}  // namespace pipelens::sharding
