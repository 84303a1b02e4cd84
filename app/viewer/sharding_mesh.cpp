// The Sharding panel's model (sharding_mesh.hpp). The mesh text is read by the engine's own
// reader of what its printer wrote, so a named or unnamed mesh of any number of dims reads the
// same way the shard and plan commands record it.
#include "app/viewer/sharding_mesh.hpp"

#include <stdexcept>

#include "engine/sharding/device_mesh.hpp"
#include "engine/sharding/placement.hpp"

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

}  // namespace

std::optional<MeshGrid> mesh_grid(const std::string& mesh_text,
                                  const std::string& placements_text) {
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
        grid.devices.push_back(std::move(cell));
    }
    return grid;
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
