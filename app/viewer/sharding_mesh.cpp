// The Sharding panel's model (sharding_mesh.hpp). The mesh text is read by the engine's own
// reader of what its printer wrote, so a named or unnamed mesh of any number of dims reads the
// same way the shard and plan commands record it.
#include "app/viewer/sharding_mesh.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/sharding/device_mesh.hpp"
#include "engine/sharding/dtensor_spec.hpp"
#include "engine/sharding/op_text.hpp"
#include "engine/sharding/placement.hpp"
#include "engine/sharding/sharding_propagation.hpp"
#include "engine/sharding/sharding_visualize.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::viewer {
namespace {

// The shard a device at `coordinate` holds: its coordinates along the sharding dims as one
// number (replicated or partial dims repeat it).
int shard_at(const sharding::DeviceMesh& mesh, const std::vector<sharding::Placement>& placements,
             const std::vector<int>& coordinate) {
    int shard = 0;
    for (int dim = 0; dim < mesh.ndim(); ++dim)
        if (placements[dim].is_shard())
            shard = shard * mesh.size(dim) + coordinate[dim];
    return shard;
}

std::string text_or_empty(const nlohmann::json& value) {
    return value.is_string() ? value.get<std::string>() : std::string();
}

// What one device holds: per tensor dim, its runs of indices.
using Held = std::vector<std::vector<sharding::IndexRun>>;

// "4-5", "4", "0-1,4-5"; "none" when it holds no index of the dim.
std::string runs_text(const std::vector<sharding::IndexRun>& runs) {
    std::vector<std::string> parts;
    for (const sharding::IndexRun& run : runs)
        parts.push_back(run.end - run.begin == 1 ? fmt::format("{}", run.begin)
                                                 : fmt::format("{}-{}", run.begin, run.end - 1));
    return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ","));
}

// The lines naming what a device holds of each split dim (MeshDevice::held).
std::vector<std::string> held_lines(const Held& held, const std::vector<bool>& split) {
    std::vector<std::string> lines;
    for (std::size_t dim = 0; dim < held.size(); ++dim) {
        if (!split[dim])
            continue;
        const std::string name = held.size() == 1   ? ""
                                 : held.size() == 2 ? (dim == 0 ? "r" : "c")
                                                    : fmt::format("{}:", dim);
        lines.push_back(name + runs_text(held[dim]));
    }
    return lines.empty() ? std::vector<std::string>{"all"} : lines;
}

// Numbers each device's shard by where its block lies in the tensor, and says what it holds,
// from engine/sharding's held_indices; false (the grid untouched) where the engine cannot say.
bool number_by_position(const sharding::DeviceMesh& mesh,
                        const std::vector<sharding::Placement>& placements,
                        const std::vector<std::int64_t>& shape, MeshGrid& grid) {
    const sharding::DTensorSpec spec{mesh, placements, sharding::meta_of_shape(shape, "f32")};
    if (!sharding::is_shardable(shape, spec))
        return false;
    std::vector<Held> held(grid.devices.size(), Held(shape.size()));
    std::vector<bool> split(shape.size(), false);
    try {
        for (std::size_t device = 0; device < grid.devices.size(); ++device)
            for (std::size_t dim = 0; dim < shape.size(); ++dim) {
                held[device][dim] = sharding::held_indices(spec, grid.devices[device].coordinate,
                                                           static_cast<int>(dim));
                split[dim] = split[dim] ||
                             held[device][dim] != std::vector<sharding::IndexRun>{{0, shape[dim]}};
            }
    } catch (const std::invalid_argument&) {
        return false;  // too scattered to describe
    }
    std::vector<Held> blocks = held;  // in position order: first indices along dim 0, 1, ...
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    grid.held.clear();
    for (std::size_t device = 0; device < grid.devices.size(); ++device) {
        grid.devices[device].shard = static_cast<int>(
            std::lower_bound(blocks.begin(), blocks.end(), held[device]) - blocks.begin());
        grid.held.push_back(held_lines(held[device], split));
    }
    grid.by_position = true;
    grid.blocks = static_cast<int>(blocks.size());
    return true;
}

// The recorded op as a call `parse_op_call` reads, its tensors replicated (only their shapes
// are wanted): "aten.mm.default(Spec(f32[8, 4](S(0))), 2) on DeviceMesh(...)" ->
// "aten.mm.default(f32[8, 4], 2)".
std::string call_of(std::string_view op_text) {
    const std::size_t on = op_text.rfind(" on DeviceMesh(");
    if (on != std::string_view::npos)
        op_text = op_text.substr(0, on);
    std::string call;
    constexpr std::string_view kSpec = "Spec(";
    while (!op_text.empty()) {
        const std::size_t spec = op_text.find(kSpec);
        if (spec == std::string_view::npos)
            break;
        call += op_text.substr(0, spec);
        const std::size_t shape_end = op_text.find(']', spec);
        if (shape_end == std::string_view::npos)
            throw std::invalid_argument("a Spec without a shape");
        call += op_text.substr(spec + kSpec.size(), shape_end + 1 - spec - kSpec.size());
        int depth = 1;  // skip the placements to the Spec's own closing bracket
        std::size_t at = shape_end + 1;
        for (; at < op_text.size() && depth > 0; ++at)
            depth += op_text[at] == '(' ? 1 : op_text[at] == ')' ? -1 : 0;
        op_text = op_text.substr(at);
    }
    return call + std::string(op_text);
}

}  // namespace

DecisionShapes decision_shapes(const std::string& op_text, const std::string& mesh_text) {
    DecisionShapes shapes;
    try {
        const sharding::DeviceMesh mesh = sharding::parse_printed_device_mesh(mesh_text);
        const sharding::OpSchema schema = sharding::parse_op_call(call_of(op_text), mesh);
        for (const sharding::DTensorSpec& input : schema.tensor_arguments())
            shapes.inputs.emplace_back(input.tensor.shape);
        const sharding::ShardingDecision decision = sharding::propagate(schema);
        const sharding::OpSpec& any = decision.strategy.strategies.at(0);
        if (!any.tuple_output && !any.outputs.empty() && any.outputs[0])
            shapes.output = any.outputs[0]->tensor.shape;
    } catch (const std::exception&) {
        // What was read before the failure stands; the rest is unknown.
    }
    return shapes;
}

std::optional<MeshGrid> mesh_grid(const std::string& mesh_text, const std::string& placements_text,
                                  const std::optional<std::vector<std::int64_t>>& shape) {
    sharding::DeviceMesh mesh;
    std::vector<sharding::Placement> placements;
    try {
        mesh = sharding::parse_printed_device_mesh(mesh_text);
        placements = sharding::parse_placements(placements_text);
    } catch (const std::invalid_argument&) {
        return std::nullopt;  // not a mesh, or a tuple output: no single tensor to draw
    }
    if (placements.size() != mesh.shape.size())
        return std::nullopt;
    MeshGrid grid;
    grid.columns = mesh.shape.back();
    grid.rows = mesh.size() / grid.columns;
    for (int device = 0; device < mesh.size(); ++device) {
        MeshDevice cell{device, device / grid.columns, device % grid.columns,
                        mesh.coordinate_of(device), 0};
        cell.shard = shard_at(mesh, placements, cell.coordinate);
        grid.blocks = std::max(grid.blocks, cell.shard + 1);
        grid.devices.push_back(std::move(cell));
    }
    if (shape)
        number_by_position(mesh, placements, *shape, grid);
    return grid;
}

std::string held_text(const MeshGrid& grid, int device) {
    if (device < 0 || static_cast<std::size_t>(device) >= grid.held.size())
        return "";
    return fmt::format("{}", fmt::join(grid.held[static_cast<std::size_t>(device)], " "));
}

float mesh_cell_width(const MeshGrid& grid) {
    std::size_t widest = 0;
    for (const MeshDevice& device : grid.devices)
        widest = std::max(
            {widest, held_text(grid, device.device).size(), std::to_string(device.device).size()});
    return std::max(kMeshCellHeight, 11.0f + 7.0f * static_cast<float>(widest));
}

std::optional<StrategyTensors> chosen_strategy_tensors(const nlohmann::json& strategies,
                                                       int chosen) {
    if (!strategies.is_array() || chosen < 0 || chosen >= static_cast<int>(strategies.size()) ||
        !strategies[chosen].is_object())
        return std::nullopt;
    const nlohmann::json& row = strategies[chosen];
    StrategyTensors tensors;
    tensors.output = text_or_empty(row.value("output_spec", nlohmann::json()));
    const nlohmann::json inputs = row.value("input_specs", nlohmann::json::array());
    if (inputs.is_array())
        for (const nlohmann::json& input : inputs)
            tensors.inputs.push_back(text_or_empty(input));
    return tensors;
}

}  // namespace pipelens::viewer
