// pipelens-view marking a straggling rank, in a real (Xvfb) window: a simulation of 1F1B pp=2 m=4
// with rank 1 at 1.5x (`simulate --rank-slowdown 1,1.5`, the run `pipelens summary --stragglers`
// flags rank 1 in) has the straggler bar left of rank 1's label, in the key's colour, and none
// on rank 0's row; a threshold at the ratio (`--straggler-threshold 1.5`) marks no row.
#include <gtest/gtest.h>

#include "app/viewer/viewer_layout.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/viewer/screenshot_support.hpp"

namespace pipelens::viewer {
namespace {

// The middle of the bar's width, between a rank's compute and communication lanes.
Point straggler_mark(int rank) {
    const TimelineGeometry geometry = fitted_geometry(1280, 1);  // rows do not depend on time
    return {kStragglerMarkLeft + kStragglerMarkWidth / 2,
            geometry.lane_top(rank, false) + kLaneHeight + kLaneGap / 2};
}

fs::path slow_rank_trace(const std::string& name) {
    const fs::path trace = testing::fresh_trace(name);
    const testing::CommandResult result = testing::run_pipelens(
        "simulate --schedule 1F1B --pp 2 --m 4 --rank-slowdown 1,1.5 --out " + trace.string());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return trace;
}

TEST(StragglerScreenshot, TheStragglingRanksRowIsMarked) {
    const fs::path trace = slow_rank_trace("straggler_shot");
    const fs::path png = screenshot_path("straggler");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                         " --size 1280x800 --frames 3"),
              0);
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);
    const Point slow = straggler_mark(1), other = straggler_mark(0);
    EXPECT_TRUE(near(image.at(slow.x, slow.y), kStraggler)) << text(image.at(slow.x, slow.y));
    EXPECT_TRUE(near(image.at(other.x, other.y), kBackground, 6))
        << text(image.at(other.x, other.y));
    // Only the bar's own columns: the label starts further right.
    EXPECT_TRUE(
        near(image.at(kStragglerMarkLeft + kStragglerMarkWidth + 1, slow.y), kBackground, 6))
        << text(image.at(kStragglerMarkLeft + kStragglerMarkWidth + 1, slow.y));
}

TEST(StragglerScreenshot, AThresholdAtTheRatioMarksNoRow) {
    const fs::path trace = slow_rank_trace("straggler_threshold");
    const fs::path png = screenshot_path("straggler_threshold");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                         " --size 1280x800 --frames 3 --straggler-threshold 1.5"),
              0);
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);
    const Point slow = straggler_mark(1);
    EXPECT_TRUE(near(image.at(slow.x, slow.y), kBackground, 6)) << text(image.at(slow.x, slow.y));
}

}  // namespace
}  // namespace pipelens::viewer
