// What the Sharding panel draws, without any GUI: a decision's mesh as a grid of devices, each
// numbered by the block of a tensor it holds, and the tensors of the chosen strategy that can be
// drawn on it.
//
// Where the tensor's shape is known (decision_shapes: the inputs' from the recorded op, the
// output's as the engine propagates it), what each device holds is engine/sharding's own
// answer (held_indices, as `pipelens shard --show` prints it), so a strided _S(0, 2)S(0) or an
// uneven split reads right: the block is numbered by its position in the tensor, and each device
// says which indices it holds. Without the shape, the block is numbered by the device's
// coordinates along the sharding mesh dims, which is its position only for plain, even shards.
//
// Invariants: the grid holds every device of the mesh once, row-major (device == row * columns
// + column): the last mesh dim runs across, the others down, so a 1-D mesh is one row and a
// mesh of three or more dims stacks its leading dims' rows. Devices have the same shard number
// exactly when they hold the same indices of the tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipelens::viewer {

struct MeshDevice {
    int device = 0;
    int row = 0, column = 0;
    std::vector<int> coordinate;  // one index per mesh dim
    // The block it holds: with the shape, numbered by the block's place in the tensor (its
    // first index along dim 0, then dim 1, ...); without, over the sharding dims' coordinates,
    // outermost slowest. 0 when nothing is split.
    int shard = 0;
};

struct MeshGrid {
    int rows = 0, columns = 0;
    std::vector<MeshDevice> devices;  // by device
    bool by_position = false;         // the shape was known: shards numbered by position
    int blocks = 1;                   // distinct shards
    // By device, with the shape: what it holds of each split tensor dim, a line each: "r4-5"
    // (rows), "c0-3" (columns; dims of a tensor of more than two as "2:0-3"), "0-1,4-5" for a
    // 1-D tensor; "all" when nothing is split. Empty without the shape.
    std::vector<std::vector<std::string>> held;
};

// The grid of `mesh_text` (a trace's printed DeviceMesh) for a tensor laid out as
// `placements_text` ("S(0)R") of shape `shape` when known; nullopt when the mesh is not a
// printed mesh, the placements are not one tensor's (a tuple output), or they are not one per
// mesh dim. A shape the placements cannot shard is drawn as without one.
std::optional<MeshGrid> mesh_grid(const std::string& mesh_text, const std::string& placements_text,
                                  const std::optional<std::vector<std::int64_t>>& shape = {});

// A device's cell in the panel, which is also the step from one device to the next: 34 px
// square, wider for the line of what the device holds (`held` joined by spaces, under the
// device's number), at ProggyClean's 7 px a character.
inline constexpr float kMeshCellHeight = 34;
float mesh_cell_width(const MeshGrid& grid);
// Device `device`'s second line: its `held` joined by spaces ("r4-5 c0-7"); "" without.
std::string held_text(const MeshGrid& grid, int device);

// The shapes of a recorded decision's tensors: each tensor input's, read from the recorded op
// ("aten.mm.default(Spec(f32[8, 4](S(0))), ...) on DeviceMesh(...)"), and the output's, as the
// engine propagates that op; nullopt for one that cannot be told (a tuple output, an op the
// engine no longer shards).
struct DecisionShapes {
    std::optional<std::vector<std::int64_t>> output;
    std::vector<std::optional<std::vector<std::int64_t>>> inputs;
};
DecisionShapes decision_shapes(const std::string& op_text, const std::string& mesh_text);

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
