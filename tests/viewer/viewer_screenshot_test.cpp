// pipelens-view as a person sees it: the real binary in a real (Xvfb) window renders a trace
// to a PNG, and the pixels where a known action, bubble and send/recv arrow must be are checked
// against the model and layout the viewer draws with; so are the panels: the mesh coloured by
// shard, the chosen strategy, the fields an event changed, an error's moment (a file that is no
// trace: viewer_refusal_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>

#include "app/viewer/sharding_mesh.hpp"
#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "engine/run_record/sharding_record.hpp"
#include "engine/schedule/action.hpp"
#include "engine/sharding/op_text.hpp"
#include "engine/sharding/sharding_propagation.hpp"
#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/viewer/screenshot_support.hpp"
#include "traces/root_cause.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

namespace pipelens::viewer {
namespace {

TEST(ViewerScreenshot, ActionsBubblesAndArrowsAreWhereTheModelPutsThem) {
    const fs::path trace = testing::fresh_trace("viewer_shot");
    ASSERT_EQ(testing::run_pipelens("simulate --pp 4 --m 8 --out " + trace.string()).exit_code, 0);
    const fs::path png = screenshot_path("timeline");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                         " --size 1280x800 --frames 3 --select 1RECV_F0"),
              0);
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);
    ASSERT_EQ(image.height, 800);

    const traces::TraceReader reader(trace);
    const TimelineModel model = TimelineModel::load(reader, reader.latest_run_id());
    const TimelineGeometry geometry = fitted_geometry(1280, model.end_ns());
    // Every compute action of rank 2, in the kind's colour (bottom rows: below its label).
    for (const TimelineAction& action : model.ranks()[2].compute.actions) {
        const float x = (geometry.x(action.start_ns) + geometry.x(action.end_ns)) / 2;
        const float y = geometry.lane_top(2, false) + kLaneHeight - 1.5f;
        EXPECT_TRUE(near(image.at(x, y), kActionColours[action.kind]))
            << model.label(action) << " at " << x << "," << y << " is " << text(image.at(x, y));
    }
    // Rank 3's warm-up bubble: its fill and its hatching, and no action colour.
    const Bubble& warmup = model.ranks()[3].bubbles.front();
    EXPECT_EQ(model.describe(model.ranks()[3], warmup), "warm-up");
    bool fill = false, hatch = false;
    for (float x = geometry.x(warmup.start_ns) + 2; x < geometry.x(warmup.end_ns) - 2; x += 1) {
        const Rgb pixel = image.at(x, geometry.lane_top(3, false) + kLaneHeight / 2);
        fill |= near(pixel, kBubbleFills[static_cast<int>(BubbleCause::warm_up)]);
        hatch |= near(pixel, kBubbleHatches[static_cast<int>(BubbleCause::warm_up)], 40);
    }
    EXPECT_TRUE(fill);
    EXPECT_TRUE(hatch);
    // The selected receive's arrow: from 0SEND_F0 on rank 0 to 1RECV_F0 on rank 1; its middle
    // lies in the gap between the two ranks, where only the arrow is drawn.
    const auto receive = model.find("1RECV_F0");
    ASSERT_TRUE(receive);
    const auto ends = model.pair_ends(model.action(*receive).pair_id);
    ASSERT_TRUE(ends);
    const float from_x = geometry.x(model.action(*ends->send).start_ns);
    const float from_y = geometry.lane_top(0, true) + kLaneHeight / 2;
    const float to_x = geometry.x(model.action(*ends->receive).end_ns);
    const float to_y = geometry.lane_top(1, true) + kLaneHeight / 2;
    const float gap_y = geometry.lane_top(1, false) - kRankGap / 2;
    const float gap_x = from_x + (to_x - from_x) * (gap_y - from_y) / (to_y - from_y);
    const Rgb arrow = image.at(gap_x, gap_y);
    EXPECT_GT(arrow.r + arrow.g + arrow.b, 3 * 180) << text(arrow);
    const Rgb beside = image.at(gap_x + 40, gap_y);
    EXPECT_TRUE(near(beside, kBackground, 6)) << text(beside);
    fs::remove(png);
}

// 1F1B pp=4 m=8 with the last stage twice as slow: the critical path (a white strip over the
// top of each of its actions) runs through microbatch 0's forwards, every action of the last
// stage and microbatch 7's backwards; actions off it keep their kind's colour at the top. The
// colour key is at the sidebar's foot.
TEST(ViewerScreenshot, TheCriticalPathIsHighlightedOnItsKnownChain) {
    const fs::path trace = testing::fresh_trace("viewer_critical");
    ASSERT_EQ(testing::run_pipelens("simulate --schedule 1F1B --pp 4 --m 8 --f 1,1,1,2 "
                                    "--b 2,2,2,4 --out " +
                                    trace.string())
                  .exit_code,
              0);
    const fs::path png = screenshot_path("critical");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --size 1280x800"), 0);
    const Image image = load_png(png);
    const traces::TraceReader reader(trace);
    const TimelineModel model = TimelineModel::load(reader, reader.latest_run_id());
    const TimelineGeometry geometry = fitted_geometry(1280, model.end_ns());
    std::set<std::string> on_path = {"0F0", "1F0", "2F0", "2B7", "1B7", "0B7"};
    for (int microbatch = 0; microbatch < 8; ++microbatch)
        for (const char* kind : {"F", "B"})
            on_path.insert(std::string("3").append(kind).append(std::to_string(microbatch)));
    int checked = 0;
    for (const RankTimeline& rank : model.ranks())
        for (const TimelineAction& action : rank.compute.actions) {
            const std::string label(model.label(action));
            const float x = (geometry.x(action.start_ns) + geometry.x(action.end_ns)) / 2;
            const Rgb top = image.at(x, geometry.lane_top(rank.rank, false) + 1);
            EXPECT_EQ(action.on_critical_path, on_path.count(label) == 1) << label;
            if (on_path.count(label) == 1)
                EXPECT_TRUE(near(top, kCriticalPath)) << label << " top is " << text(top);
            else
                EXPECT_TRUE(near(top, kActionColours[action.kind])) << label << " is " << text(top);
            ++checked;
        }
    EXPECT_EQ(checked, 4 * 16);
    for (int index = 0; index < kLegendSize; ++index) {
        const Point swatch = legend_swatch(index, 800);
        const Rgb pixel = image.at(swatch.x + kLegendSwatch / 2, swatch.y + kLegendSwatch / 2);
        EXPECT_TRUE(near(pixel, kLegend[index].colour))
            << kLegend[index].name << " " << text(pixel);
    }
    fs::remove(png);
}

// Zoomed out on 1F1B pp=2 m=400 (F 1 us, B 3 us) every action is narrower than the merge
// threshold: blocks merge, and a block that starts with an F but holds three times as much B
// is drawn in B's colour, ending where its last action ends.
TEST(ViewerScreenshot, MergedBlocksTakeTheirDominantKindsColour) {
    const fs::path trace = testing::fresh_trace("viewer_merged");
    ASSERT_EQ(testing::run_pipelens("simulate --schedule 1F1B --pp 2 --m 400 --f 1 --b 3 --out " +
                                    trace.string())
                  .exit_code,
              0);
    const fs::path png = screenshot_path("merged");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                         " --size 1280x800 --no-critical-path"),
              0);
    const Image image = load_png(png);
    const traces::TraceReader reader(trace);
    const TimelineModel model = TimelineModel::load(reader, reader.latest_run_id());
    const TimelineGeometry geometry = fitted_geometry(1280, model.end_ns());
    std::vector<DrawBlock> blocks;
    const Lane& lane = model.ranks()[0].compute;
    TimelineModel::visible_blocks(
        lane, geometry.view_start, geometry.view_end,
        static_cast<std::int64_t>(kMergeBelowPixels / geometry.pixels_per_ns()), blocks);
    int checked = 0;
    for (const DrawBlock& block : blocks) {
        if (block.count < 2 ||
            lane.actions[block.first].kind != static_cast<std::uint8_t>(ActionKind::forward))
            continue;
        ASSERT_EQ(block.kind, static_cast<std::uint8_t>(ActionKind::full_backward));
        EXPECT_EQ(block.end_ns, lane.actions[block.first + block.count - 1].end_ns);
        const float x = std::floor(geometry.x(block.start_ns)) + 1;
        if (geometry.x(block.end_ns) - x < 2)
            continue;
        const Rgb pixel = image.at(x, geometry.lane_top(0, false) + kLaneHeight - 2);
        EXPECT_TRUE(near(pixel, kActionColours[block.kind], 6)) << text(pixel);
        ++checked;
    }
    EXPECT_GT(checked, 20);
    fs::remove(png);
}

// 1,024 ranks in a 1600x1000 window: rows shrink to fit (less than a pixel each, pooled), every
// rank's row is drawn, and rank 700's one gap shows in its pixel row although the other ranks
// pooled with it are busy there.
// Pixels near `colour` inside [left, right) x [top, bottom).
int count_near(const Image& image, Rgb colour, float left, float top, float right, float bottom) {
    int count = 0;
    for (float y = top; y < bottom; y += 1)
        for (float x = left; x < right; x += 1)
            count += near(image.at(x, y), colour) ? 1 : 0;
    return count;
}

// The bottom panel's rectangle in a 1280x800 window.
constexpr float kPanelLeft = kSidebarWidth, kPanelTop = 800 - kPanelHeight;
// A sharding-only run's panels take the timeline's room.
constexpr float kShardingPanelTop = kShardingOnlyPanelsTop;

// The mesh grid of the Sharding panel: its top-left device is the first pixel (row by row) in
// shard 0's colour; device (row, column) sits kMeshCellHeight px per row and `column_step` per
// column from it (the cell's width: mesh_cell_width of the grid drawn).
void expect_mesh(const Image& image, int rows, int columns,
                 const std::function<int(int, int)>& shard_of,
                 float column_step = kMeshCellHeight) {
    std::optional<std::pair<float, float>> origin;
    for (float y = kShardingPanelTop; y < 800 && !origin; y += 1)
        for (float x = kPanelLeft; x < 1280 && !origin; x += 1)
            if (near(image.at(x, y), kShardColours[0]))
                origin = {{x, y}};
    ASSERT_TRUE(origin) << "no device in shard 0's colour";
    for (int row = 0; row < rows; ++row)
        for (int column = 0; column < columns; ++column) {
            const float x = origin->first + column * column_step + 2,
                        y = origin->second + row * kMeshCellHeight + 2;
            const Rgb want = kShardColours[shard_of(row, column)];
            EXPECT_TRUE(near(image.at(x, y), want))
                << "device (" << row << ", " << column << ") at " << x << "," << y << " is "
                << text(image.at(x, y)) << ", not shard " << shard_of(row, column);
        }
}

// The grid the panel draws for decision 0 of the trace's latest run and `tensor` (output,
// input0, ...), its shapes as the panel finds them.
std::optional<MeshGrid> drawn_grid(const fs::path& trace, const std::string& tensor) {
    const traces::TraceReader reader(trace);
    const traces::ShardingRecord decision = reader.sharding(reader.latest_run_id()).at(0);
    const DecisionShapes shapes = decision_shapes(decision.op, decision.mesh);
    const std::optional<StrategyTensors> chosen =
        chosen_strategy_tensors(nlohmann::json::parse(decision.strategies), decision.chosen);
    if (!chosen)
        return std::nullopt;
    if (tensor == "output")
        return mesh_grid(decision.mesh, chosen->output, shapes.output);
    const auto input = static_cast<std::size_t>(tensor.back() - '0');
    if (input >= chosen->inputs.size() || input >= shapes.inputs.size())
        return std::nullopt;
    return mesh_grid(decision.mesh, chosen->inputs[input], shapes.inputs[input]);
}

TEST(ViewerScreenshot, ShardingPanelColoursEachDeviceByTheShardItHolds) {
    const fs::path trace = testing::fresh_trace("viewer_sharding");
    ASSERT_EQ(testing::run_pipelens("shard --block mlp --mesh dp=2,tp=4 --out " + trace.string())
                  .exit_code,
              0);
    // Decision 0 chose (S(0)R, RS(1)) -> S(0)S(1): the output has eight shards, one per device;
    // input 0 is split by rows of the mesh, input 1 by its columns.
    const std::vector<traces::ShardingRecord> decisions = traces::TraceReader(trace).sharding(1);
    ASSERT_FALSE(decisions.empty());
    ASSERT_NE(decisions[0].strategies.find("\"strategy\":\"(S(0)R, RS(1)) -> S(0)S(1)\""),
              std::string::npos);
    const struct {
        std::string tensor;
        std::function<int(int, int)> shard_of;
    } cases[] = {{"output", [](int row, int column) { return row * 4 + column; }},
                 {"input0", [](int row, int) { return row; }},
                 {"input1", [](int, int column) { return column; }}};
    for (const auto& tensor : cases) {
        SCOPED_TRACE(tensor.tensor);
        const std::optional<MeshGrid> grid = drawn_grid(trace, tensor.tensor);
        ASSERT_TRUE(grid && grid->by_position);
        const fs::path png = screenshot_path("sharding");
        ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                             " --size 1280x800 --tensor " + tensor.tensor),
                  0);
        const Image image = load_png(png);
        expect_mesh(image, 2, 4, tensor.shard_of, mesh_cell_width(*grid));
        // The chosen strategy's row of the table, scrolled into view and highlighted.
        EXPECT_GT(count_near(image, kChosenStrategy, kPanelLeft, kShardingPanelTop, 1280, 800),
                  1000);
        fs::remove(png);
    }
}

// A mesh of three dims draws every device, its leading dims' rows stacked: dp=2,tp=2,pp=2 is
// four rows of two. Decision 0 chose (S(0)RR, RS(1)R) -> S(0)S(1)R: the output's shard is the
// row, input 0's the dp half, input 1's the tp row within it.
TEST(ViewerScreenshot, AThreeDimMeshShowsEveryDevice) {
    const fs::path trace = testing::fresh_trace("viewer_sharding_3d");
    ASSERT_EQ(
        testing::run_pipelens("shard --block mlp --mesh dp=2,tp=2,pp=2 --out " + trace.string())
            .exit_code,
        0);
    const struct {
        std::string tensor;
        std::function<int(int, int)> shard_of;
    } cases[] = {{"output", [](int row, int) { return row; }},
                 {"input0", [](int row, int) { return row / 2; }},
                 {"input1", [](int row, int) { return row % 2; }}};
    for (const auto& tensor : cases) {
        SCOPED_TRACE(tensor.tensor);
        const std::optional<MeshGrid> grid = drawn_grid(trace, tensor.tensor);
        ASSERT_TRUE(grid && grid->by_position);
        const fs::path png = screenshot_path("sharding_3d");
        ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                             " --size 1280x800 --tensor " + tensor.tensor),
                  0);
        expect_mesh(load_png(png), 4, 2, tensor.shard_of, mesh_cell_width(*grid));
        fs::remove(png);
    }
}

// An unnamed mesh, recorded as the shard command records a mesh ("DeviceMesh((4,), ...)"), is
// drawn like a named one: the mm's output split over its four devices.
TEST(ViewerScreenshot, AnUnnamedMeshIsDrawn) {
    const fs::path trace = testing::fresh_trace("viewer_sharding_unnamed");
    {
        sharding::DeviceMesh four;
        four.shape = {4};
        traces::TraceWriter writer(trace);
        run_record::record_sharding_run(
            writer, four,
            {sharding::propagate(
                sharding::parse_op_call("aten.mm(f32[1024,512](S(0)), f32[512,256](R))", four))},
            "{}");
    }
    const fs::path png = screenshot_path("sharding_unnamed");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                         " --size 1280x800 --panel sharding"),
              0);
    const std::optional<MeshGrid> grid = drawn_grid(trace, "output");
    ASSERT_TRUE(grid && grid->by_position);
    expect_mesh(
        load_png(png), 1, 4, [](int, int column) { return column; }, mesh_cell_width(*grid));
    fs::remove(png);
}

// One relu on dp=2,tp=2 recorded as the shard command records it, its tensor laid out as
// `placements` (f32[8, 8]).
fs::path recorded_relu(const std::string& name, const std::string& placements) {
    const fs::path trace = testing::fresh_trace(name);
    const sharding::DeviceMesh mesh = sharding::parse_device_mesh("dp=2,tp=2");
    traces::TraceWriter writer(trace);
    run_record::record_sharding_run(writer, mesh,
                                    {sharding::propagate(sharding::parse_op_call(
                                        "aten.relu(f32[8,8](" + placements + "))", mesh))},
                                    "{}");
    return trace;
}

// A strided _S(0, 2)S(0) puts rows 4-5, the third block, on device 1 (dp 0, tp 1), where
// S(0)S(0) puts rows 2-3 there: each device is coloured by its block's place in the tensor, so
// the two read apart (by mesh coordinate they were coloured alike). The strategy table's
// strategy column starts near its left edge, not a third of the way in, with room for the
// whole strategy.
TEST(ViewerScreenshot, AStridedLayoutIsColouredByWhereEachBlockLies) {
    const struct {
        std::string placements;
        std::vector<int> blocks;  // by device
    } cases[] = {{"_S(0, 2)S(0)", {0, 2, 1, 3}}, {"S(0)S(0)", {0, 1, 2, 3}}};
    for (const auto& layout : cases) {
        SCOPED_TRACE(layout.placements);
        const fs::path trace = recorded_relu("viewer_sharding_strided", layout.placements);
        const std::optional<MeshGrid> grid = drawn_grid(trace, "output");
        ASSERT_TRUE(grid && grid->by_position);
        const fs::path png = screenshot_path("sharding_strided");
        ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                             " --size 1280x800 --panel sharding"),
                  0);
        const Image image = load_png(png);
        expect_mesh(
            image, 2, 2,
            [&](int row, int column) {
                return layout.blocks[static_cast<std::size_t>(row * 2 + column)];
            },
            mesh_cell_width(*grid));
        // The chosen row: the strategy's text (not the highlight) begins within 60 px of the
        // row's left, right after the index column.
        std::optional<std::pair<float, float>> row;
        for (float y = kShardingPanelTop; y < 800 && !row; y += 1)
            for (float x = kPanelLeft; x < 1280 && !row; x += 1)
                if (near(image.at(x, y), kChosenStrategy))
                    row = {{x, y}};
        ASSERT_TRUE(row);
        int text_pixels = 0;
        for (float y = row->second; y < row->second + 12; y += 1)
            for (float x = row->first + 25; x < row->first + 60; x += 1)
                text_pixels += near(image.at(x, y), kChosenStrategy, 30) ? 0 : 1;
        EXPECT_GT(text_pixels, 10) << "no strategy text near the row's left";
        fs::remove(png);
        fs::remove(trace);
    }
}

TEST(ViewerScreenshot, EventsPanelReplaysToTheChosenEventAndMarksWhatItChanged) {
    const fs::path trace = testing::fresh_trace("viewer_events");
    ASSERT_EQ(testing::run_pipelens("shard --block mlp --mesh dp=2,tp=4 --out " + trace.string())
                  .exit_code,
              0);
    const fs::path before = screenshot_path("events_none");
    const fs::path after = screenshot_path("events_chosen");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + before.string() +
                         " --size 1280x800 --panel events"),
              0);
    std::string errors;
    ASSERT_EQ(run_viewer(
                  trace.string() + " --screenshot " + after.string() + " --size 1280x800 --event 2",
                  &errors),
              0);
    EXPECT_EQ(errors, "");
    // Event 2 is the second decide_sharding: the replayed state's heading and the field it
    // changed (sharding[1]) are drawn in the changed-field colour; with no event chosen, none.
    const float middle = kPanelLeft + (1280 - kPanelLeft) / 2;
    // (A sharding-only run: its panels take the timeline's room.)
    EXPECT_EQ(count_near(load_png(before), kChangedField, kPanelLeft, kShardingPanelTop, 1280, 800),
              0);
    const Image chosen = load_png(after);
    EXPECT_GT(count_near(chosen, kChangedField, middle, kShardingPanelTop, 1280, 800), 200);
    EXPECT_EQ(count_near(chosen, kChangedField, kPanelLeft, kShardingPanelTop, middle - 20, 800),
              0);
    // A sharding decision has no moment on a run's clock: nothing is marked above the panels.
    EXPECT_EQ(count_near(chosen, kChangedField, kPanelLeft, 0, 1280, kShardingPanelTop), 0);
    fs::remove(before);
    fs::remove(after);
}

TEST(ViewerScreenshot, AnEventOfARealRunIsMarkedBeforeTheStep) {
    if (!PIPELENS_HAS_RUNTIME)
        GTEST_SKIP() << "built without LibTorch: no real run to record";
    const fs::path trace = testing::fresh_trace("viewer_event_moment");
    ASSERT_EQ(
        testing::run_pipelens("run --pp 2 --m 4 --no-reference --out " + trace.string()).exit_code,
        0);
    const std::vector<traces::EventRecord> events = traces::TraceReader(trace).events(1);
    ASSERT_GT(events.size(), 7u);
    ASSERT_EQ(events[7].name, "set_stage_meta");
    ASSERT_TRUE(events[7].time_ns);
    ASSERT_LT(*events[7].time_ns, 0);  // set-up, before the step's time zero
    const fs::path png = screenshot_path("event_moment");
    ASSERT_EQ(
        run_viewer(trace.string() + " --screenshot " + png.string() + " --size 1280x800 --event 7"),
        0);
    const Image image = load_png(png);
    // The view starts at the step's time zero, so the event is named at its left edge: a bar
    // down the whole timeline and the text beside it, both in the changed-field colour.
    const float left = kSidebarWidth + kGutterWidth;
    const float timeline_bottom = 800 - kPanelHeight - kMemoryHeight;
    for (float y = kLanesTop + 1; y < timeline_bottom - 1; y += 10)
        EXPECT_TRUE(near(image.at(left + 1, y), kChangedField)) << "no bar at y " << y;
    EXPECT_GT(
        count_near(image, kChangedField, left + 6, timeline_bottom - 20, 1280, timeline_bottom),
        100);
    fs::remove(png);
}

// A failed run opens on its root cause: the badge says FAILED, the shape mismatch (not the
// "stopped" it caused on the other ranks) is the first error and is chosen, its moment is marked
// through every rank's lanes, and the failing rank carries the failure bar. Choosing a
// consequence instead moves the marker to that error's moment.
TEST(ViewerScreenshot, AFailedRunOpensOnItsRootCause) {
    if (!PIPELENS_HAS_RUNTIME)
        GTEST_SKIP() << "built without LibTorch: no real run to fail";
    const fs::path trace = testing::fresh_trace("viewer_errors");
    // Stage 1 flattens its output: rank 1 records a shape mismatch at 1F0, the others stop.
    ASSERT_EQ(testing::run_pipelens("run --pp 3 --m 4 --fault stage1=flatten --no-reference "
                                    "--out " +
                                    trace.string())
                  .exit_code,
              1);
    const traces::TraceReader reader(trace);
    const std::vector<traces::ErrorRecord> ordered = traces::root_cause_first(reader.errors(1));
    ASSERT_GE(ordered.size(), 2u);
    ASSERT_EQ(ordered.front().kind, "shape_mismatch");
    ASSERT_EQ(ordered.front().rank, 1);
    ASSERT_TRUE(ordered.front().time_ns);
    const fs::path opened = screenshot_path("errors_opened");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + opened.string() + " --size 1280x800"),
              0);
    const Image image = load_png(opened);
    EXPECT_TRUE(near(image.at(kBadgeLeft + 2, kBadgeTop + kBadgeHeight / 2), kStatusFailed))
        << text(image.at(kBadgeLeft + 2, kBadgeTop + kBadgeHeight / 2));
    // The marker: a vertical line at the error's time through every rank's lanes. The failing
    // action never ended, so the fitted view reaches at least to the root cause (other ranks
    // may still have run actions after it, until they were told to stop); it starts at 0 or
    // at the first RECV posted before it.
    const TimelineModel model = TimelineModel::load(reader, 1);
    const TimelineGeometry geometry = fitted_geometry(
        1280, TimeSpan{model.start_ns(), std::max(model.end_ns(), *ordered.front().time_ns)});
    const auto marked_near = [&](const Image& picture, std::int64_t time, float y) {
        int found = 0;
        for (float dx = -2; dx <= 2; dx += 1)
            found += near(picture.at(geometry.x(time) + dx, y), kErrorMarker) ? 1 : 0;
        return found;
    };
    for (float y : {geometry.lane_top(0, false) + 9, geometry.lane_top(2, true) + 9})
        EXPECT_GE(marked_near(image, *ordered.front().time_ns, y), 1) << "no marker at y " << y;
    // The interrupted action, 1F0, never ended: it is drawn in flight from when it started to
    // the failure, in F's colour.
    ASSERT_TRUE(ordered.front().started_ns);
    EXPECT_EQ(ordered.front().action, "1F0");
    EXPECT_LE(*ordered.front().started_ns, *ordered.front().time_ns);
    // Along a row near the lane's bottom, inside its outline: where the span is wide enough for
    // its "1F0 (in flight)" label, the label's descenders cross that row, so most of the row is
    // F's colour, not every pixel of it.
    const float in_flight_left = geometry.x(*ordered.front().started_ns);
    const float in_flight_right = geometry.x(*ordered.front().time_ns);
    if (in_flight_right - in_flight_left > 12) {
        const float row = geometry.lane_top(1, false) + kLaneHeight - 4;
        int inside = 0;
        int coloured = 0;
        for (float x = in_flight_left + 4; x <= in_flight_right - 5; x += 1, ++inside)
            coloured += near(image.at(x, row), kActionColours[0]) ? 1 : 0;
        EXPECT_GE(coloured * 4, inside * 3)
            << coloured << " of " << inside << " pixels in F's colour";
    }
    // The failure bar on rank 1 is three pixels wide and reaches into the gap above its lanes.
    EXPECT_GE(marked_near(image, *ordered.front().time_ns, geometry.lane_top(1, false) - 1), 2);
    EXPECT_EQ(marked_near(image, *ordered.front().time_ns, geometry.lane_top(0, false) - 1), 0);

    // A send whose receive never ran (rank 1 failed first) has no second end; its arrow points
    // a short way toward rank 1, marked in the failure colour, instead of at another action.
    std::optional<ActionLocation> unpaired;
    for (std::size_t index = 0; index < model.ranks()[0].communication.actions.size(); ++index) {
        const TimelineAction& action = model.ranks()[0].communication.actions[index];
        const auto ends = model.pair_ends(action.pair_id);
        if (ends && ends->send && !ends->receive && !unpaired) {
            EXPECT_EQ(ends->receive_rank, 1);
            unpaired = ActionLocation{0, true, index};
        }
    }
    ASSERT_TRUE(unpaired) << "rank 0 recorded no send that rank 1 never received";
    const float send_x = geometry.x(model.action(*unpaired).start_ns);
    const float loose_y = geometry.lane_top(0, true) + kLaneHeight / 2 + kRankHeight * 0.45f;
    const float failure_x = geometry.x(*ordered.front().time_ns);
    int dangling = 0;
    for (float x = send_x + 10; x < send_x + 110; x += 1)
        for (float y = loose_y - 8; y < loose_y + 8; y += 1)
            if (std::abs(x - failure_x) > 4)
                dangling += near(image.at(x, y), kErrorMarker, 40) ? 1 : 0;
    EXPECT_GT(dangling, 5) << "no dangling arrow near " << send_x << "," << loose_y;

    // Choosing a consequence with a moment of its own moves the marker there.
    const auto consequence =
        std::find_if(ordered.begin() + 1, ordered.end(), [&](const traces::ErrorRecord& error) {
            return error.time_ns &&
                   geometry.x(*error.time_ns) - geometry.x(*ordered.front().time_ns) > 10;
        });
    if (consequence != ordered.end()) {
        const fs::path chosen = screenshot_path("errors_chosen");
        ASSERT_EQ(
            run_viewer(trace.string() + " --screenshot " + chosen.string() +
                       " --size 1280x800 --error " + std::to_string(consequence - ordered.begin())),
            0);
        TimelineGeometry moved = geometry;
        if (*consequence->time_ns > moved.view_end) {  // brought into view, at the same zoom
            const std::int64_t span = moved.view_end - moved.view_start;
            moved.view_start = *consequence->time_ns - span / 2;
            moved.view_end = moved.view_start + span;
        }
        const Image picture = load_png(chosen);
        int found = 0;
        for (float dx = -2; dx <= 2; dx += 1)
            found +=
                near(picture.at(moved.x(*consequence->time_ns) + dx, moved.lane_top(0, false) + 9),
                     kErrorMarker)
                    ? 1
                    : 0;
        EXPECT_GE(found, 1);
        fs::remove(chosen);
    }
    fs::remove(opened);
}

// An option the viewer cannot take is one line naming it and exit 2 (not the command-line
// library's own codes, 105 or 109), and no PNG: a negative --event or --error once read as "none
// asked for", --frames 0 as one frame, and an input the decision lacks drew its output instead.
TEST(ViewerScreenshot, AnOptionThatCannotWorkIsAUsageErrorNotAScreenshot) {
    const fs::path simulated = testing::fresh_trace("viewer_bad_option");
    ASSERT_EQ(testing::run_pipelens("simulate --pp 2 --m 4 --out " + simulated.string()).exit_code,
              0);
    const fs::path sharded = testing::fresh_trace("viewer_bad_tensor");
    ASSERT_EQ(testing::run_pipelens("shard --block mlp --mesh dp=2,tp=4 --out " + sharded.string())
                  .exit_code,
              0);
    const fs::path png = screenshot_path("bad_option");
    const struct {
        std::string arguments, named;
    } cases[] = {
        {simulated.string() + " --event -1", "--event: '-1' is not an index (give 0 or more)"},
        {simulated.string() + " --error -1", "--error: '-1' is not an index (give 0 or more)"},
        {simulated.string() + " --frames 0", "--frames"},
        {simulated.string() + " --frames many", "--frames"},
        {simulated.string() + " --no-such-flag", "--no-such-flag"},
        {simulated.string() + " --event", "--event"},
        {simulated.string() + " --tensor input0", "--tensor input0: the run has no sharding"},
        {sharded.string() + " --tensor input2",
         "--tensor input2: decision #0 (aten.mm.default) has 2 inputs"},
    };
    for (const auto& bad : cases) {
        SCOPED_TRACE(bad.arguments);
        std::string errors;
        EXPECT_EQ(run_viewer(bad.arguments + " --screenshot " + png.string() + " --size 800x600",
                             &errors),
                  2);
        EXPECT_EQ(errors.rfind("pipelens-view: ", 0), 0u) << errors;
        EXPECT_NE(errors.find(bad.named), std::string::npos) << errors;
        EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 1) << errors;
        EXPECT_FALSE(fs::exists(png));
    }
}

// Every file under `directory`, relative, sorted (none when there is no such directory).
std::vector<std::string> files_under(const fs::path& directory) {
    std::vector<std::string> files;
    if (fs::exists(directory))
        for (const auto& entry : fs::recursive_directory_iterator(directory))
            files.push_back(fs::relative(entry.path(), directory).string());
    std::sort(files.begin(), files.end());
    return files;
}

TEST(ViewerScreenshot, AScreenshotRunLeavesTheConfigDirectoriesUntouched) {
    const fs::path trace = testing::fresh_trace("viewer_config");
    ASSERT_EQ(testing::run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    const fs::path root = test_config_directory() / "untouched";
    fs::remove_all(root);
    // A user's list as it was before the run, in each place the viewer could keep it.
    const std::vector<fs::path> directories{root / "override", root / "xdg" / "pipelens",
                                            root / "home" / ".config" / "pipelens"};
    for (const fs::path& directory : directories) {
        fs::create_directories(directory);
        std::ofstream(directory / "recent_files") << "/data/earlier.db\n";
    }
    const std::string home = " HOME=" + (root / "home").string();
    const fs::path png = screenshot_path("config");
    for (const std::string& environment :
         {"PIPELENS_CONFIG_DIR=" + directories[0].string() +
              " XDG_CONFIG_HOME=" + (root / "xdg").string() + home,
          "PIPELENS_CONFIG_DIR= XDG_CONFIG_HOME=" + (root / "xdg").string() + home,
          "PIPELENS_CONFIG_DIR= XDG_CONFIG_HOME=" + home}) {
        EXPECT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --size 640x480",
                             nullptr, environment),
                  0);
        EXPECT_TRUE(fs::exists(png)) << environment;
        fs::remove(png);
    }
    for (const fs::path& directory : directories) {
        EXPECT_EQ(files_under(directory), std::vector<std::string>{"recent_files"}) << directory;
        EXPECT_EQ(testing::read_file(directory / "recent_files"), "/data/earlier.db\n")
            << directory;
    }
    fs::remove_all(root);
}

TEST(ViewerScreenshot, PipelensViewStartsTheViewer) {
    const fs::path trace = testing::fresh_trace("viewer_via_cli");
    ASSERT_EQ(testing::run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    const fs::path png = screenshot_path("cli");
    const std::string command =
        "xvfb-run -a env PIPELENS_CONFIG_DIR=" + test_config_directory().string() +
        " " PIPELENS_BINARY " view " + trace.string() + " --screenshot " + png.string() +
        " --size 640x480";
    EXPECT_EQ(std::system(command.c_str()), 0);
    const Image image = load_png(png);
    EXPECT_EQ(image.width, 640);
    fs::remove(png);
}

}  // namespace
}  // namespace pipelens::viewer
