// The workbench journeys in the real pipelens-view under Xvfb, driven by its input script
// (--script) through the same calls the widgets make, and checked at the pixels the layout says:
// a bundled example opened from the start screen, pp changed from 4 to 8 giving 8 rows, and
// 1F1B pinned against ZBVZeroBubble drawn one above the other, each ending at its own step.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>

#include "app/viewer/compare_layout.hpp"
#include "app/viewer/memory_plot.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "engine/run_record/sharding_record.hpp"
#include "engine/sharding/op_text.hpp"
#include "engine/sharding/sharding_propagation.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/viewer/screenshot_support.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::viewer {
namespace {

// The default example with one F, I, W and held size for every stage, so pp can change alone.
constexpr const char* kUniformExample =
    "example default\nset f 1ms\nset i 1ms\nset w 1ms\nset held_activation_bytes 1GiB\n"
    "wait-idle\n";

fs::path write_script(const std::string& name, const std::string& text) {
    const fs::path path = testing::process_temp_path("view_script_" + name + ".txt");
    std::ofstream(path) << text;
    return path;
}

// Whether anything but the background is drawn along row `y` of the lanes.
bool drawn_along(const Image& image, float y, float from, float to) {
    for (float x = from; x < to; x += 1)
        if (!near(image.at(x, y), kBackground))
            return true;
    return false;
}

// The ranks whose compute lanes hold something, counted from rank 0 until one is empty.
int rows_drawn(const Image& image) {
    int rows = 0;
    const float y0 = kLanesTop + kLaneHeight / 2;
    while (drawn_along(image, y0 + rows * kRankHeight, kSidebarWidth + kGutterWidth + 2,
                       image.width - kRightMargin - 2))
        ++rows;
    return rows;
}

TEST(WorkbenchScreenshot, TheStartScreenOffersTheExamples) {
    const fs::path png = screenshot_path("start");
    const fs::path script = write_script("start", "screenshot " + png.string() + "\n");
    ASSERT_EQ(run_viewer("--script " + script.string()), 0);
    const Image image = load_png(png);
    // A button in ImGui's default colour over the window: where the examples are listed.
    bool button = false;
    for (float y = 20; y < 140 && !button; y += 1)
        for (float x = kSidebarWidth + 20; x < kSidebarWidth + 120 && !button; x += 1)
            button = near(image.at(x, y), {41, 74, 117}, 8);
    EXPECT_TRUE(button);
    fs::remove(script);
}

// The areas draw no background of their own (plain_areas): the window is cleared to each one's
// colour where the layout puts it, OpenGL's bottom-up rows turned the right way.
TEST(WorkbenchScreenshot, EachAreaIsClearedToItsOwnGround) {
    const fs::path png = screenshot_path("grounds");
    const fs::path script = write_script("grounds", "screenshot " + png.string() + "\n");
    ASSERT_EQ(run_viewer("--script " + script.string()), 0);
    const Image image = load_png(png);
    ASSERT_GT(image.height, kPanelHeight + kMemoryHeight + 100);
    const auto height = static_cast<float>(image.height);
    const float panels_top = height - kPanelHeight;
    for (const float y : {height / 3, height / 2}) {
        EXPECT_EQ(text(image.at(kSidebarWidth - 2, y)), text(kAreaBackground)) << y;
        EXPECT_EQ(text(image.at(kSidebarWidth + 1, y)), text(kBackground)) << y;
    }
    // The top right of the timeline and the memory plot's area just above the panels.
    EXPECT_EQ(text(image.at(image.width - 4, 2)), text(kBackground));
    EXPECT_EQ(text(image.at(image.width / 2, panels_top - 2)), text(kBackground));
    // The panels' last rows, left of their scrollbar.
    for (const float y : {height - 2, height - 6})
        EXPECT_EQ(text(image.at(image.width / 2, y)), text(kAreaBackground)) << y;
    fs::remove(script);
}

TEST(WorkbenchScreenshot, ChangingPpFromFourToEightRedrawsEightRows) {
    const fs::path four = screenshot_path("pp4"), eight = screenshot_path("pp8");
    const fs::path script =
        write_script("pp", std::string(kUniformExample) + "screenshot " + four.string() +
                               "\nset pp 8\nwait-idle\nscreenshot " + eight.string() + "\n");
    std::string errors;
    ASSERT_EQ(run_viewer("--script " + script.string(), &errors), 0) << errors;
    EXPECT_EQ(rows_drawn(load_png(four)), 4);
    EXPECT_EQ(rows_drawn(load_png(eight)), 8);
    fs::remove(script);
}

TEST(WorkbenchScreenshot, PinnedOneFOneBAndZbvAreDrawnEachEndingAtItsStep) {
    const fs::path png = screenshot_path("compare");
    const fs::path script =
        write_script("compare", std::string(kUniformExample) +
                                    "pin\nset kind ZBVZeroBubble\nwait-idle\npanel compare\n"
                                    "screenshot " +
                                    png.string() + "\n");
    std::string errors;
    ASSERT_EQ(run_viewer("--script " + script.string(), &errors), 0) << errors;
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1600);
    // `pipelens simulate` gives 1F1B 34.917584 ms and ZBVZeroBubble (v=2) 52.558037 ms.
    const int ranks[2] = {4, 4};
    const std::int64_t ends[2] = {34917584, 52558037};
    const CompareGeometry geometry =
        compare_geometry(1600, 900 - kPanelHeight - kMemoryHeight, ranks, ends);
    const auto middle = [&](int half, int rank) {
        return geometry.row_top(half, rank) + geometry.bar_height(half) / 2;
    };
    const float pinned_end = geometry.x(ends[0]), current_end = geometry.x(ends[1]);
    // 1F1B: rank 0's last backward runs up to the step; nothing of it after.
    EXPECT_FALSE(near(image.at(pinned_end - 3, middle(0, 0)), kBackground));
    for (int rank = 0; rank < 4; ++rank)
        EXPECT_FALSE(drawn_along(image, middle(0, rank), pinned_end + 3, geometry.right))
            << "pinned rank " << rank;
    // ZBVZeroBubble goes on past 1F1B's end, to its own.
    EXPECT_TRUE(drawn_along(image, middle(1, 0), pinned_end + 3, pinned_end + 60));
    bool reaches_end = false;
    for (int rank = 0; rank < 4; ++rank)
        reaches_end = reaches_end || !near(image.at(current_end - 3, middle(1, rank)), kBackground);
    EXPECT_TRUE(reaches_end);
    // The current run's memory under them is on their shared axis: high halfway through its
    // step, down to nothing by its end (it was drawn on the pinned run's length, still high at
    // the right edge).
    const float memory_top = 900 - kPanelHeight - kMemoryHeight;
    const MemoryPlotLayout memory = memory_plot_layout(memory_top, memory_top + kMemoryHeight);
    // The highest line in a stretch of columns, as a share of the plot's height (0: none).
    const auto highest = [&](float from, float to) {
        float top = memory.plot_bottom;
        for (float x = from; x < to; x += 1)
            for (float y = memory.plot_top; y < memory.plot_bottom; y += 1)
                if (!near(image.at(x, y), kBackground, 30)) {
                    top = std::min(top, y);
                    break;
                }
        return (memory.plot_bottom - top) / memory.height();
    };
    EXPECT_GT(highest(geometry.x(ends[1] / 2) - 10, geometry.x(ends[1] / 2)), 0.5f);
    EXPECT_LT(highest(current_end - 20, current_end - 3), 0.3f);
    fs::remove(script);
}

TEST(WorkbenchScreenshot, AScriptThatDoesNotParseNamesTheLine) {
    const fs::path script = write_script("bad", "set pp 8\nfly away\n");
    std::string errors;
    EXPECT_EQ(run_viewer("--script " + script.string(), &errors), 2);
    EXPECT_NE(errors.find(":2: unknown command 'fly'"), std::string::npos) << errors;
    // A line that parses but that the workbench refuses stops the script the same way.
    const fs::path refused = write_script("refused", "example default\nset pp abc\n");
    EXPECT_EQ(run_viewer("--script " + refused.string(), &errors), 2);
    EXPECT_NE(errors.find(refused.string() +
                          ": line 2: set: workbench: schedule.pp: expected an integer"),
              std::string::npos)
        << errors;
    fs::remove(script);
    fs::remove(refused);
}

// A run of sharding decisions alone has no timeline and no memory: its panels take their room,
// so the Sharding panel opens with its mesh where the timeline would be, not squeezed into the
// bottom 230 px with its strategy table one row high.
TEST(WorkbenchScreenshot, ARunWithoutATimelineGivesThePanelsItsRoom) {
    const fs::path trace = testing::fresh_trace("workbench_sharding_only");
    {
        const sharding::DeviceMesh mesh = sharding::parse_device_mesh("dp=2,tp=2");
        traces::TraceWriter writer(trace);
        run_record::record_sharding_run(
            writer, mesh,
            {sharding::propagate(sharding::parse_op_call("aten.relu(f32[8,8](S(0)S(1)))", mesh))},
            "{}");
    }
    const fs::path png = screenshot_path("sharding_only_room");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --size 1280x800"), 0);
    const Image image = load_png(png);
    // The mesh's first device, in block 0's colour, lies above where the panels used to start.
    std::optional<float> mesh_top;
    for (float y = kShardingOnlyPanelsTop; y < 800 && !mesh_top; y += 1)
        for (float x = kSidebarWidth; x < 1280 && !mesh_top; x += 1)
            if (near(image.at(x, y), kShardColours[0], 6))
                mesh_top = y;
    ASSERT_TRUE(mesh_top);
    EXPECT_LT(*mesh_top, 800 - kPanelHeight - kMemoryHeight);
    fs::remove(png);
}

}  // namespace
}  // namespace pipelens::viewer
