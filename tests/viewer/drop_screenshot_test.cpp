// Files dropped on pipelens-view in a real (Xvfb) window, driven as a person drives it: --drop
// hands the files to the function the window's drop callback calls. The swapped-receive example
// is checked and its wait cycle drawn on its timeline (the cycle's ranks marked in their
// gutter, each stuck action outlined); profiler traces are imported and their run opens; a
// malformed one is a dialog with the importer's message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/viewer/hang_marks.hpp"
#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "tests/viewer/screenshot_support.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {
namespace {

const fs::path kSource = PIPELENS_SOURCE_DIR;

// A folder of its own per test, holding copies of the files to drop: a drop writes its trace
// beside the file it was given.
fs::path drop_folder(const std::string& name) {
    const fs::path folder =
        fs::temp_directory_path() / ("pipelens_drop_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(folder);
    fs::create_directories(folder);
    return folder;
}

fs::path copy_into(const fs::path& folder, const fs::path& file) {
    fs::copy_file(file, folder / file.filename());
    return folder / file.filename();
}

// Whether the run's status badge is drawn in `colour`.
::testing::AssertionResult badge_is(const Image& image, Rgb colour) {
    const auto pixel = image.at(kBadgeLeft + 3, kBadgeTop + kBadgeHeight / 2);
    if (near(pixel, colour, 6))
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the badge is " << text(pixel);
}

TEST(DropScreenshot, TheSwappedReceiveExampleHasItsWaitCycleMarkedOnItsTimeline) {
    const fs::path folder = drop_folder("swapped");
    const fs::path csv = copy_into(folder, kSource / "assets/examples/swapped_recvs.csv");
    const fs::path png = screenshot_path("drop_swapped");
    std::string errors;
    ASSERT_EQ(run_viewer("--drop " + csv.string() + " --screenshot " + png.string() +
                             " --size 1280x800 --frames 3",
                         &errors),
              0)
        << errors;
    EXPECT_EQ(errors, "");
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);

    const traces::TraceReader reader(folder / "swapped_recvs.csv.pipelens.db");
    const TimelineModel model = TimelineModel::load(reader, reader.latest_run_id());
    const TimelineGeometry geometry = fitted_geometry(1280, model.end_ns());
    // Both ranks close the cycle: each has the bar down its gutter, over both its lanes.
    const float bar_x = kCycleBarRight - kCycleBarWidth / 2;
    for (int rank : {0, 1})
        for (bool communication : {false, true}) {
            const float y = geometry.lane_top(rank, communication) + kLaneHeight / 2;
            EXPECT_TRUE(near(image.at(bar_x, y), kWaitCycle))
                << "rank " << rank << " at " << bar_x << "," << y << " is "
                << text(image.at(bar_x, y));
        }
    // Not past the last rank, nor beside the bar.
    const float below = geometry.lane_top(2, false) + kLaneHeight / 2;
    EXPECT_FALSE(near(image.at(bar_x, below), kWaitCycle, 40)) << text(image.at(bar_x, below));
    const float rank0_middle = geometry.lane_top(0, false) + kLaneHeight / 2;
    EXPECT_FALSE(near(image.at(kCycleBarRight + 2, rank0_middle), kWaitCycle, 40));

    // Each stuck receive outlined: the outline's bottom edge lies in the gap under its lane.
    for (const char* stuck : {"0RECV_B1", "1RECV_F3"}) {
        const auto at = model.find(stuck);
        ASSERT_TRUE(at) << stuck;
        const TimelineAction& action = model.action(*at);
        const float x = geometry.x(action.start_ns) + 4;
        const float y = geometry.lane_top(at->rank, true) + kLaneHeight + 2;
        EXPECT_TRUE(near(image.at(x, y), kWaitCycle, 6))
            << stuck << " at " << x << "," << y << " is " << text(image.at(x, y));
    }
    // An action that is not stuck has no outline there.
    const auto free = model.find("0RECV_B0");
    ASSERT_TRUE(free);
    const float free_x = geometry.x(model.action(*free).start_ns) + 4;
    const float free_y = geometry.lane_top(0, true) + kLaneHeight + 2;
    EXPECT_FALSE(near(image.at(free_x, free_y), kWaitCycle, 40)) << text(image.at(free_x, free_y));
    // The badge says the schedule hangs, in the failed colour, not that a run finished.
    EXPECT_TRUE(badge_is(image, kStatusFailed));
    fs::remove_all(folder);
    fs::remove(png);
}

// `pipelens-view FILE.csv` takes the schedule as a drop does: checked, its hang drawn.
TEST(DropScreenshot, AScheduleNamedOnTheCommandLineIsCheckedAsADropIs) {
    const fs::path folder = drop_folder("named_csv");
    const fs::path csv = copy_into(folder, kSource / "assets/examples/swapped_recvs.csv");
    const fs::path png = screenshot_path("named_csv");
    std::string errors;
    ASSERT_EQ(
        run_viewer(csv.string() + " --screenshot " + png.string() + " --size 1280x800 --frames 3",
                   &errors),
        0)
        << errors;
    EXPECT_TRUE(fs::exists(folder / "swapped_recvs.csv.pipelens.db"));
    const Image image = load_png(png);
    EXPECT_TRUE(badge_is(image, kStatusFailed));
    const traces::TraceReader reader(folder / "swapped_recvs.csv.pipelens.db");
    const TimelineModel model = TimelineModel::load(reader, reader.latest_run_id());
    const TimelineGeometry geometry = fitted_geometry(1280, model.end_ns());
    const float y = geometry.lane_top(0, false) + kLaneHeight / 2;
    EXPECT_TRUE(near(image.at(kCycleBarRight - kCycleBarWidth / 2, y), kWaitCycle));
    fs::remove_all(folder);
    fs::remove(png);
}

TEST(DropScreenshot, DroppedProfilerTracesAreImportedAndTheirRunOpens) {
    const fs::path folder = drop_folder("profiler");
    const fs::path rank0 =
        copy_into(folder, kSource / "tests/data/pytorch_profiler/gpipe_rank0.json");
    const fs::path rank1 =
        copy_into(folder, kSource / "tests/data/pytorch_profiler/gpipe_rank1.json");
    const fs::path png = screenshot_path("drop_profiler");
    std::string errors;
    ASSERT_EQ(run_viewer("--drop " + rank0.string() + " " + rank1.string() + " --screenshot " +
                             png.string() + " --size 1280x800 --frames 3",
                         &errors),
              0)
        << errors;
    EXPECT_EQ(errors, "");
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);

    const traces::TraceReader reader(folder / "gpipe_rank0.json.pipelens.db");
    const TimelineModel model = TimelineModel::load(reader, reader.latest_run_id());
    ASSERT_EQ(model.ranks().size(), 2u);
    const TimelineGeometry geometry = fitted_geometry(1280, model.end_ns());
    // Every computation of both ranks in its kind's colour (bottom rows: below its label).
    std::size_t checked = 0;
    for (const RankTimeline& rank : model.ranks())
        for (const TimelineAction& action : rank.compute.actions) {
            const float x = (geometry.x(action.start_ns) + geometry.x(action.end_ns)) / 2;
            const float y = geometry.lane_top(rank.rank, false) + kLaneHeight - 1.5f;
            EXPECT_TRUE(near(image.at(x, y), kActionColours[action.kind]))
                << model.label(action) << " at " << x << "," << y << " is " << text(image.at(x, y));
            ++checked;
        }
    EXPECT_EQ(checked, 8u);  // gpipe pp=2 m=2: F and B of two microbatches per rank
    // The imported (real, finished) run's status badge.
    EXPECT_TRUE(badge_is(image, kStatusFinished));
    fs::remove_all(folder);
    fs::remove(png);
}

TEST(DropScreenshot, AMalformedProfilerTraceIsADialogNamingTheFileAndTheByte) {
    const fs::path folder = drop_folder("malformed");
    const fs::path bad = folder / "bad.json";
    std::ofstream(bad) << R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}, x]})";
    const fs::path png = screenshot_path("drop_malformed");
    std::string errors;
    ASSERT_EQ(run_viewer("--drop " + bad.string() + " --screenshot " + png.string() +
                             " --size 1280x800 --frames 12",
                         &errors),
              0);
    EXPECT_EQ(errors, "pipelens-view: " + bad.string() +
                          ": traceEvents[1] is not an object at byte 62 (line 1) (read as "
                          "pytorch-profiler)\n");
    EXPECT_FALSE(fs::exists(folder / "bad.json.pipelens.db"));
    // The dialog is modal: the window behind it is dimmed, lighter than the bare background.
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);
    const Rgb behind = image.at(kSidebarWidth + 40, 120);
    EXPECT_GT(behind.r + behind.g + behind.b, kBackground.r + kBackground.g + kBackground.b + 30)
        << text(behind);
    fs::remove_all(folder);
    fs::remove(png);
}

}  // namespace
}  // namespace pipelens::viewer
