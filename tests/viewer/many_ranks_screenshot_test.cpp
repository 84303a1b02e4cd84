// pipelens-view in a real (Xvfb) window on runs of a thousand ranks, alone and compared with
// another: rows pooled into the pixels there are, one rank's bubble still showing, and the compared
// run's outlines never washing them out, checked at the pixels the layout says.
#include <gtest/gtest.h>

#include <string>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "engine/schedule/action.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/viewer/screenshot_support.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::viewer {
namespace {

void expect_thousand_rank_rows(const Image& image, int ranks, int gap_rank);

TEST(ViewerScreenshot, AThousandRanksFitAndOneRanksBubbleShows) {
    const fs::path trace = testing::fresh_trace("viewer_1024");
    constexpr int kRanks = 1024, kGapRank = 700;
    // Two identical runs: the second compared with the first must draw the same rows (the
    // compared run's outlines, drawn at full lane height in rows of a pixel, once washed the
    // whole timeline white).
    for (int copy = 0; copy < 2; ++copy) {
        traces::TraceWriter writer(trace);
        traces::RunRecord run;
        run.schedule = "GPipe";
        run.pp = kRanks;
        run.m = 1;
        const std::int64_t id = writer.begin_run(run);
        for (int rank = 0; rank < kRanks; ++rank) {
            traces::ActionRecord forward;
            forward.rank = rank;
            forward.stage = rank;
            forward.microbatch = 0;
            forward.kind = static_cast<std::uint8_t>(ActionKind::forward);
            forward.start_ns = 0;
            forward.end_ns = rank == kGapRank ? 400'000 : 1'000'000;
            writer.add_action(id, forward);
            if (rank == kGapRank) {  // busy again after a gap
                traces::ActionRecord backward = forward;
                backward.step = 1;
                backward.kind = static_cast<std::uint8_t>(ActionKind::full_backward);
                backward.start_ns = 600'000;
                backward.end_ns = 1'000'000;
                writer.add_action(id, backward);
            }
        }
        writer.finish_run(id, 1'000'000, 0.0002);
    }
    const fs::path png = screenshot_path("ranks1024");
    for (const std::string compare : {"", " --run 2 --compare 1"}) {
        ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                             " --size 1600x1000 --no-critical-path" + compare),
                  0);
        expect_thousand_rank_rows(load_png(png), kRanks, kGapRank);
    }
    fs::remove(png);
}

// The rows of AThousandRanksFitAndOneRanksBubbleShows's run, pooled into the pixels there are.
void expect_thousand_rank_rows(const Image& image, int ranks, int gap_rank) {
    ASSERT_EQ(image.height, 1000);
    TimelineGeometry geometry = fitted_geometry(1600, 1'000'000);
    const float rows_bottom = 1000 - kPanelHeight - kMemoryHeight;
    // The rows' image spans [kLanesTop, rows_bottom); its last pixel row is the window's edge.
    const int rows = static_cast<int>(rows_bottom - kLanesTop) - 1;
    ASSERT_LT(rows, ranks);  // fewer pixels than ranks: pooled
    int forward_rows = 0;
    for (int row = 0; row < rows; ++row)
        forward_rows +=
            near(image.at(geometry.x(200'000), kLanesTop + row), kActionColours[0]) ? 1 : 0;
    EXPECT_EQ(forward_rows, rows);  // every row holds ranks, all busy at 0.2 ms
    const int gap_row = static_cast<int>(static_cast<std::int64_t>(gap_rank) * (rows + 1) / ranks);
    const Rgb idle = kBubbleFills[static_cast<int>(BubbleCause::idle)];
    for (int row = 0; row < rows; ++row) {
        const Rgb pixel = image.at(geometry.x(500'000), kLanesTop + row);
        if (row == gap_row)
            EXPECT_TRUE(near(pixel, idle)) << "rank " << gap_rank << "'s gap is " << text(pixel);
        else
            EXPECT_TRUE(near(pixel, kActionColours[0])) << "row " << row << " is " << text(pixel);
    }
    // The overview strip: the whole run over the timeline's width, every rank busy at 0.2 ms
    // (F's colour), and the view outlined in white at its left edge.
    const float overview_y = kHeaderHeight + kOverviewHeight / 2;
    const Rgb overview = image.at(geometry.left + 0.2f * geometry.width, overview_y);
    EXPECT_TRUE(near(overview, kActionColours[0], 4)) << text(overview);
    EXPECT_TRUE(near(image.at(geometry.left, overview_y), {255, 255, 255}, 60))
        << text(image.at(geometry.left, overview_y));
}

}  // namespace
}  // namespace pipelens::viewer
