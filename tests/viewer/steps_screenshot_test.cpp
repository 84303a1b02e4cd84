// pipelens-view on a run of several steps, in a real (Xvfb) window: every step shown at first,
// with a boundary line where each step after the first starts, and --step fitting the view to
// one step. The pixels are checked where the layout puts the boundaries for the model's steps.
#include <gtest/gtest.h>

#include "app/viewer/run_steps.hpp"
#include "app/viewer/timeline_model.hpp"
#include "tests/viewer/multi_step_trace.hpp"
#include "tests/viewer/screenshot_support.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {
namespace {

// Between rank 0's communication lane and rank 1's compute lane: no action or bubble there,
// so a pixel is a boundary or the background.
float gap_y(const TimelineGeometry& geometry) {
    return geometry.lane_top(0, true) + kLaneHeight + kRankGap / 2;
}

TEST(StepsScreenshot, EveryStepIsShownWithALineWhereEachLaterStepStarts) {
    const fs::path trace = testing::multi_step_trace("steps_shot", 3);
    const fs::path png = screenshot_path("steps");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                         " --size 1280x800 --frames 3"),
              0);
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);

    const traces::TraceReader reader(trace);
    const std::vector<RunStep> steps =
        find_steps(TimelineModel::load(reader, reader.latest_run_id()));
    ASSERT_EQ(steps.size(), 3u);
    // All steps: the view is the whole run, 0 to 26 us.
    const TimelineGeometry geometry = fitted_geometry(1280, steps.back().end_ns);
    const float y = gap_y(geometry);
    for (std::size_t step = 1; step < steps.size(); ++step) {
        const float x = geometry.x(steps[step].start_ns);
        EXPECT_TRUE(near(image.at(x, y), kStepBoundary))
            << "step " << step << " at " << x << " is " << text(image.at(x, y));
        // Not a wide smear: 6 px either side is background again.
        EXPECT_TRUE(near(image.at(x - 6, y), kBackground, 6)) << text(image.at(x - 6, y));
        EXPECT_TRUE(near(image.at(x + 6, y), kBackground, 6)) << text(image.at(x + 6, y));
    }
    // Step 0 has none: its start is the view's left edge, drawn as background just inside.
    EXPECT_TRUE(near(image.at(geometry.x(0) + 3, y), kBackground, 6));
}

TEST(StepsScreenshot, PickingAStepFitsTheViewToIt) {
    const fs::path trace = testing::multi_step_trace("steps_pick", 3);
    const fs::path png = screenshot_path("steps_pick");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                         " --size 1280x800 --frames 3 --step 1"),
              0);
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);
    const traces::TraceReader reader(trace);
    const std::vector<RunStep> steps =
        find_steps(TimelineModel::load(reader, reader.latest_run_id()));
    ASSERT_EQ(steps.size(), 3u);
    const TimelineGeometry geometry =
        fitted_step_geometry(1280, steps, 1, {0, steps.back().end_ns});
    // Step 1 starts 2% of its span into the view: its boundary line is there, and its first
    // action (0F1's F, rank 0) fills the compute lane right after it.
    const float x = geometry.x(steps[1].start_ns);
    EXPECT_NEAR(x, geometry.left + geometry.width * (120.0f / 6240.0f), 1.0f);
    EXPECT_TRUE(near(image.at(x, gap_y(geometry)), kStepBoundary))
        << text(image.at(x, gap_y(geometry)));
    const float f_x = geometry.x(steps[1].start_ns + 500);
    EXPECT_TRUE(
        near(image.at(f_x, geometry.lane_top(0, false) + kLaneHeight - 1.5f), kActionColours[0]))
        << text(image.at(f_x, geometry.lane_top(0, false) + kLaneHeight - 1.5f));
    // Step 2 begins 4 us after step 1 ends: beyond the fitted view.
    EXPECT_GT(geometry.x(steps[2].start_ns), geometry.left + geometry.width);
}

// A choice the run cannot take is an error, as a bad --run is: named on stderr, exit 2, and no
// picture (one of something else than was asked for would pass for it).
TEST(StepsScreenshot, AStepOrActionTheRunDoesNotHaveIsAnError) {
    const fs::path trace = testing::multi_step_trace("steps_missing", 3);
    const fs::path png = screenshot_path("steps_missing");
    fs::remove(png);
    std::string errors;
    EXPECT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --step 3", &errors),
              2);
    EXPECT_NE(errors.find("--step 3: the run has 3 steps"), std::string::npos) << errors;
    EXPECT_FALSE(fs::exists(png));
    EXPECT_EQ(
        run_viewer(trace.string() + " --screenshot " + png.string() + " --select 9F9", &errors), 2);
    EXPECT_NE(errors.find("--select 9F9: no such action"), std::string::npos) << errors;
    EXPECT_FALSE(fs::exists(png));

    const fs::path one = testing::multi_step_trace("steps_missing_one", 1);
    EXPECT_EQ(run_viewer(one.string() + " --screenshot " + png.string() + " --step 1", &errors), 2);
    EXPECT_NE(errors.find("--step 1: the run has 1 step"), std::string::npos) << errors;
    EXPECT_EQ(errors.find("1 steps"), std::string::npos) << errors;
    EXPECT_FALSE(fs::exists(png));
    // -1 once showed every step, and a run compared with itself drew nothing, both with exit 0.
    EXPECT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --step -1", &errors),
              2);
    EXPECT_NE(errors.find("--step -1: the run has 3 steps (0 is the first)"), std::string::npos)
        << errors;
    EXPECT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --run 1 --compare 1",
                         &errors),
              2);
    EXPECT_NE(errors.find("--compare 1: that is the run shown"), std::string::npos) << errors;
    EXPECT_FALSE(fs::exists(png));
}

}  // namespace
}  // namespace pipelens::viewer
