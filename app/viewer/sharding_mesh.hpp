// What the Sharding panel draws, without any GUI: a decision's mesh as a grid of devices, each
// numbered by the shard of a tensor it holds, and the tensors of the chosen strategy that can be
// drawn on it.
//
// Invariants: the grid holds every device of the mesh once, row-major (device == row * columns
// + column): the last mesh dim runs across, the others down, so a 1-D mesh is one row and a
// mesh of three or more dims stacks its leading dims' rows. Devices hold the same shard exactly
// when their coordinates agree along every mesh dim that shards the tensor.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipelens::viewer {

struct MeshDevice {
    int device = 0;
    int row = 0, column = 0;
    std::vector<int> coordinate;  // one index per mesh dim
    int shard = 0;  // numbered over the sharding dims, outermost slowest; 0 when none shard
};

struct MeshGrid {
    int rows = 0, columns = 0;
    std::vector<MeshDevice> devices;  // by device
};

// The grid of `mesh_text` (a trace's printed DeviceMesh) for a tensor laid out as
// `placements_text` ("S(0)R"); nullopt when the mesh is not a printed mesh, the placements are
// not one tensor's (a tuple output), or they are not one per mesh dim.
std::optional<MeshGrid> mesh_grid(const std::string& mesh_text, const std::string& placements_text);

// The placements of a strategy's tensors (a row of a decision's strategies JSON): its output
// and each input; "" for one the row does not give as text.
struct StrategyTensors {
    std::string output;
    std::vector<std::string> inputs;
};

// The chosen row of `strategies` (a decision's parsed strategies JSON); nullopt when there is no
// such row or it is damaged (not an object).
std::optional<StrategyTensors> chosen_strategy_tensors(const nlohmann::json& strategies,
                                                       int chosen);

}  // namespace pipelens::viewer
