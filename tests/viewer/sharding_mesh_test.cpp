// The Sharding panel's model without a window (sharding_mesh.hpp): meshes as the shard and plan
// commands record them (sharding::to_string, run_record::record_sharding_run) laid out as grids,
// every device with its coordinate and the shard of the tensor it holds: an unnamed 1-D mesh of 4,
// the 2-D dp=2,tp=4 mesh the screenshot test draws, a 2x2x2 mesh; and the tensors of a recorded
// decision's chosen strategy.
#include <gtest/gtest.h>

#include <ostream>

#include <nlohmann/json.hpp>

#include "app/viewer/sharding_mesh.hpp"
#include "app/viewer/trace_session.hpp"
#include "engine/run_record/sharding_record.hpp"
#include "engine/sharding/device_mesh.hpp"
#include "engine/sharding/op_text.hpp"
#include "engine/sharding/sharding_blocks.hpp"
#include "engine/sharding/sharding_propagation.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens::viewer {

bool operator==(const MeshDevice& a, const MeshDevice& b) {
    return a.device == b.device && a.row == b.row && a.column == b.column &&
           a.coordinate == b.coordinate && a.shard == b.shard;
}

void PrintTo(const MeshDevice& device, std::ostream* out) {
    *out << "device " << device.device << " at (" << device.row << ", " << device.column
         << ") coordinate (";
    for (int index : device.coordinate)
        *out << index << ",";
    *out << ") shard " << device.shard;
}

namespace {

std::string unnamed_mesh_text(std::vector<int> shape) {
    sharding::DeviceMesh mesh;
    mesh.shape = std::move(shape);
    return sharding::to_string(mesh);
}

TEST(ShardingMesh, AnUnnamedMeshOfFourIsOneRow) {
    const std::string text = unnamed_mesh_text({4});
    ASSERT_EQ(text, "DeviceMesh((4,), 'cuda', stride=(1,))");  // what the recorders write
    const std::optional<MeshGrid> sharded = mesh_grid(text, "S(0)");
    ASSERT_TRUE(sharded);
    EXPECT_EQ(sharded->rows, 1);
    EXPECT_EQ(sharded->columns, 4);
    EXPECT_EQ(sharded->devices, (std::vector<MeshDevice>{
                                    {0, 0, 0, {0}, 0},
                                    {1, 0, 1, {1}, 1},
                                    {2, 0, 2, {2}, 2},
                                    {3, 0, 3, {3}, 3},
                                }));
    const std::optional<MeshGrid> replicated = mesh_grid(text, "R");
    ASSERT_TRUE(replicated);
    ASSERT_EQ(replicated->devices.size(), 4u);
    for (const MeshDevice& device : replicated->devices)
        EXPECT_EQ(device.shard, 0) << device.device;
}

TEST(ShardingMesh, ATwoDimMeshIsItsOwnGrid) {
    const std::string text = sharding::to_string(sharding::parse_device_mesh("dp=2,tp=4"));
    const struct {
        std::string placements;
        std::vector<int> shards;  // by device
    } cases[] = {{"S(0)S(1)", {0, 1, 2, 3, 4, 5, 6, 7}},
                 {"S(0)R", {0, 0, 0, 0, 1, 1, 1, 1}},
                 {"RS(1)", {0, 1, 2, 3, 0, 1, 2, 3}},
                 {"P(sum)S(0)", {0, 1, 2, 3, 0, 1, 2, 3}}};
    for (const auto& tensor : cases) {
        SCOPED_TRACE(tensor.placements);
        const std::optional<MeshGrid> grid = mesh_grid(text, tensor.placements);
        ASSERT_TRUE(grid);
        EXPECT_EQ(grid->rows, 2);
        EXPECT_EQ(grid->columns, 4);
        ASSERT_EQ(grid->devices.size(), 8u);
        for (int device = 0; device < 8; ++device)
            EXPECT_EQ(grid->devices[device], (MeshDevice{device,
                                                         device / 4,
                                                         device % 4,
                                                         {device / 4, device % 4},
                                                         tensor.shards[device]}));
    }
}

// Each of the eight devices once, with all three of its coordinates: the leading dims' rows
// stacked (dp major), pp across.
TEST(ShardingMesh, AThreeDimMeshHasEveryDeviceAtItsCoordinate) {
    const std::string text = sharding::to_string(sharding::parse_device_mesh("dp=2,tp=2,pp=2"));
    ASSERT_EQ(text, "DeviceMesh((dp=2, tp=2, pp=2), 'cuda', stride=(4, 2, 1))");
    const std::optional<MeshGrid> grid = mesh_grid(text, "S(0)S(1)R");
    ASSERT_TRUE(grid);
    EXPECT_EQ(grid->rows, 4);
    EXPECT_EQ(grid->columns, 2);
    EXPECT_EQ(grid->devices, (std::vector<MeshDevice>{
                                 {0, 0, 0, {0, 0, 0}, 0},
                                 {1, 0, 1, {0, 0, 1}, 0},
                                 {2, 1, 0, {0, 1, 0}, 1},
                                 {3, 1, 1, {0, 1, 1}, 1},
                                 {4, 2, 0, {1, 0, 0}, 2},
                                 {5, 2, 1, {1, 0, 1}, 2},
                                 {6, 3, 0, {1, 1, 0}, 3},
                                 {7, 3, 1, {1, 1, 1}, 3},
                             }));
    // Sharded along the innermost dim only: two shards, alternating across each row.
    const std::optional<MeshGrid> inner = mesh_grid(unnamed_mesh_text({2, 2, 2}), "RRS(0)");
    ASSERT_TRUE(inner);
    ASSERT_EQ(inner->devices.size(), 8u);
    for (const MeshDevice& device : inner->devices)
        EXPECT_EQ(device.shard, device.device % 2) << device.device;
}

// Recorded and read back as the shard command and the viewer do: an unnamed mesh of 4 (the
// mm's output split over all four) and the mlp block on dp=2,tp=2,pp=2, whose first decision
// chose (S(0)RR, RS(1)R) -> S(0)S(1)R.
TEST(ShardingMesh, RecordedMeshesReadBackAsGrids) {
    const std::filesystem::path path = testing::fresh_trace("sharding_mesh_recorded");
    sharding::DeviceMesh four;
    four.shape = {4};
    const sharding::DeviceMesh cube = sharding::parse_device_mesh("dp=2,tp=2,pp=2");
    {
        traces::TraceWriter writer(path);
        run_record::record_sharding_run(
            writer, four,
            {sharding::propagate(
                sharding::parse_op_call("aten.mm(f32[1024,512](S(0)), f32[512,256](R))", four))},
            "{}");
        run_record::record_sharding_run(writer, cube, sharding::propagate_block("mlp", cube), "{}");
    }
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path, 1)) << session.error;
    ASSERT_EQ(session.sharding.size(), 1u);
    EXPECT_EQ(session.sharding[0].mesh, "DeviceMesh((4,), 'cuda', stride=(1,))");
    std::optional<StrategyTensors> chosen =
        chosen_strategy_tensors(session.sharding_strategies[0], session.sharding[0].chosen);
    ASSERT_TRUE(chosen);
    EXPECT_EQ(chosen->output, "S(0)");
    std::optional<MeshGrid> grid = mesh_grid(session.sharding[0].mesh, chosen->output);
    ASSERT_TRUE(grid);
    EXPECT_EQ(grid->rows, 1);
    EXPECT_EQ(grid->columns, 4);
    for (const MeshDevice& device : grid->devices)
        EXPECT_EQ(device.shard, device.device);

    ASSERT_TRUE(show_run(session, 2)) << session.error;
    ASSERT_EQ(session.sharding.size(), 3u);
    chosen = chosen_strategy_tensors(session.sharding_strategies[0], session.sharding[0].chosen);
    ASSERT_TRUE(chosen);
    EXPECT_EQ(chosen->output, "S(0)S(1)R");
    EXPECT_EQ(chosen->inputs, (std::vector<std::string>{"S(0)RR", "RS(1)R"}));
    // By row of the grid: the shard of the output, input 0 (the dp half), input 1 (tp).
    const int expected[4][3] = {{0, 0, 0}, {1, 0, 1}, {2, 1, 0}, {3, 1, 1}};
    for (int tensor = 0; tensor < 3; ++tensor) {
        const std::string& placements = tensor == 0 ? chosen->output : chosen->inputs[tensor - 1];
        SCOPED_TRACE(placements);
        grid = mesh_grid(session.sharding[0].mesh, placements);
        ASSERT_TRUE(grid);
        EXPECT_EQ(grid->rows, 4);
        EXPECT_EQ(grid->columns, 2);
        ASSERT_EQ(grid->devices.size(), 8u);
        for (const MeshDevice& device : grid->devices)
            EXPECT_EQ(device.shard, expected[device.row][tensor]) << "device " << device.device;
    }
    std::filesystem::remove(path);
}

std::vector<int> shards_of(const MeshGrid& grid) {
    std::vector<int> shards;
    for (const MeshDevice& device : grid.devices)
        shards.push_back(device.shard);
    return shards;
}

std::vector<std::vector<std::string>> held_of(const MeshGrid& grid) {
    return grid.held;
}

// On dp=2,tp=2, the strided _S(0, 2)S(0) gives device 1 (dp 0, tp 1) rows 4-5 of 8, the third
// block, where S(0)S(0) gives it rows 2-3: as `pipelens shard --show` prints them (the engine's
// held_indices). Numbered by coordinate the two would read the same.
TEST(ShardingMesh, EachDeviceIsNumberedByWhereItsBlockLiesInTheTensor) {
    const std::string text = sharding::to_string(sharding::parse_device_mesh("dp=2,tp=2"));
    const std::vector<std::int64_t> rows8 = {8, 8};
    const std::optional<MeshGrid> strided = mesh_grid(text, "_S(0, 2)S(0)", rows8);
    ASSERT_TRUE(strided);
    EXPECT_TRUE(strided->by_position);
    EXPECT_EQ(strided->blocks, 4);
    EXPECT_EQ(shards_of(*strided), (std::vector<int>{0, 2, 1, 3}));
    EXPECT_EQ(held_of(*strided),
              (std::vector<std::vector<std::string>>{{"r0-1"}, {"r4-5"}, {"r2-3"}, {"r6-7"}}));
    const std::optional<MeshGrid> plain = mesh_grid(text, "S(0)S(0)", rows8);
    ASSERT_TRUE(plain);
    EXPECT_EQ(shards_of(*plain), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(held_of(*plain),
              (std::vector<std::vector<std::string>>{{"r0-1"}, {"r2-3"}, {"r4-5"}, {"r6-7"}}));
    // Uneven: 6 rows are 3 and 3 over dp, each 2 and 1 over tp.
    const std::optional<MeshGrid> uneven = mesh_grid(text, "S(0)S(0)", {{6, 4}});
    ASSERT_TRUE(uneven);
    EXPECT_EQ(held_of(*uneven),
              (std::vector<std::vector<std::string>>{{"r0-1"}, {"r2"}, {"r3-4"}, {"r5"}}));
    // Both dims split; replicated over tp: the dp halves, all of each row.
    const std::optional<MeshGrid> both = mesh_grid(text, "S(0)S(1)", rows8);
    ASSERT_TRUE(both);
    EXPECT_EQ(held_of(*both)[1], (std::vector<std::string>{"r0-3", "c4-7"}));
    EXPECT_EQ(held_text(*both, 1), "r0-3 c4-7");
    EXPECT_EQ(mesh_cell_width(*both), 11 + 7 * 9);
    const std::optional<MeshGrid> halves = mesh_grid(text, "S(0)R", rows8);
    ASSERT_TRUE(halves);
    EXPECT_EQ(shards_of(*halves), (std::vector<int>{0, 0, 1, 1}));
    EXPECT_EQ(mesh_grid(text, "RR", rows8)->held[3], (std::vector<std::string>{"all"}));
    // Without the shape: by coordinate, nothing held said.
    const std::optional<MeshGrid> unknown = mesh_grid(text, "_S(0, 2)S(0)");
    ASSERT_TRUE(unknown);
    EXPECT_FALSE(unknown->by_position);
    EXPECT_TRUE(unknown->held.empty());
    EXPECT_EQ(mesh_cell_width(*unknown), kMeshCellHeight);
}

// A recorded op's tensors: the inputs' shapes read from it, the output's propagated.
TEST(ShardingMesh, ARecordedOpGivesItsTensorsShapes) {
    const std::string mesh = "DeviceMesh((dp=2, tp=2), 'cuda', stride=(2, 1))";
    const DecisionShapes relu =
        decision_shapes("aten.relu.default(Spec(f32[8, 8](_S(0, 2)S(0)))) on " + mesh, mesh);
    EXPECT_EQ(relu.output, (std::optional<std::vector<std::int64_t>>{{8, 8}}));
    ASSERT_EQ(relu.inputs.size(), 1u);
    EXPECT_EQ(relu.inputs[0], (std::optional<std::vector<std::int64_t>>{{8, 8}}));
    const DecisionShapes mm = decision_shapes(
        "aten.mm.default(Spec(f32[1024, 512](S(0)R)), Spec(f32[512, 2048](RS(1)))) on " + mesh,
        mesh);
    EXPECT_EQ(mm.output, (std::optional<std::vector<std::int64_t>>{{1024, 2048}}));
    ASSERT_EQ(mm.inputs.size(), 2u);
    EXPECT_EQ(mm.inputs[1], (std::optional<std::vector<std::int64_t>>{{512, 2048}}));
    const DecisionShapes ordered = decision_shapes(
        "aten.add.Tensor(Spec(f32[6, 4](S(0)[0]S(0)[1])), Spec(f32[6, 4](S(0)[0]S(0)[1]))) on " +
            mesh,
        mesh);
    EXPECT_EQ(ordered.output, (std::optional<std::vector<std::int64_t>>{{6, 4}}));
    EXPECT_FALSE(decision_shapes("not an op", mesh).output);
}

TEST(ShardingMesh, NothingToDrawWithoutOneTensorOnAMesh) {
    const std::string mesh = sharding::to_string(sharding::parse_device_mesh("dp=2,tp=4"));
    EXPECT_FALSE(mesh_grid(mesh, "S(0)"));            // one placement for two mesh dims
    EXPECT_FALSE(mesh_grid(mesh, "(S(0)R, RS(1))"));  // a tuple output
    EXPECT_FALSE(mesh_grid(mesh, ""));
    EXPECT_FALSE(mesh_grid("dp=2,tp=4", "S(0)S(1)"));  // not a printed mesh
}

TEST(ShardingMesh, TheChosenStrategysTensorsOfARecordedDecision) {
    // Decision 0 of the mlp block on dp=2,tp=4 as `pipelens shard --out` records it: the
    // strategies JSON of sharding_record.cpp, which chose (S(0)R, RS(1)) -> S(0)S(1).
    const std::vector<sharding::ShardingDecision> decisions =
        sharding::propagate_block("mlp", sharding::parse_device_mesh("dp=2,tp=4"));
    ASSERT_FALSE(decisions.empty());
    const nlohmann::json strategies =
        nlohmann::json::parse(sharding::strategies_json(decisions[0]));
    const std::optional<StrategyTensors> chosen =
        chosen_strategy_tensors(strategies, static_cast<int>(decisions[0].chosen));
    ASSERT_TRUE(chosen);
    EXPECT_EQ(chosen->output, "S(0)S(1)");
    EXPECT_EQ(chosen->inputs, (std::vector<std::string>{"S(0)R", "RS(1)"}));
}

TEST(ShardingMesh, ADamagedOrMissingChosenRowHasNoTensors) {
    const nlohmann::json strategies = nlohmann::json::parse(
        R"json([{"output_spec": "S(0)", "input_specs": ["S(0)", 7]}, "damaged",
            {"output_spec": ["S(0)", "R"], "input_specs": "S(0)"}])json");
    const std::optional<StrategyTensors> first = chosen_strategy_tensors(strategies, 0);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->output, "S(0)");
    EXPECT_EQ(first->inputs, (std::vector<std::string>{"S(0)", ""}));  // 7 is no placement
    EXPECT_FALSE(chosen_strategy_tensors(strategies, 1));              // not an object
    const std::optional<StrategyTensors> tuple = chosen_strategy_tensors(strategies, 2);
    ASSERT_TRUE(tuple);
    EXPECT_EQ(tuple->output, "");
    EXPECT_TRUE(tuple->inputs.empty());
    EXPECT_FALSE(chosen_strategy_tensors(strategies, 3));
    EXPECT_FALSE(chosen_strategy_tensors(strategies, -1));
    EXPECT_FALSE(chosen_strategy_tensors(nlohmann::json::object(), 0));
}

}  // namespace
}  // namespace pipelens::viewer
