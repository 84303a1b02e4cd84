// pipelens-view on a run that timed out, in a real (Xvfb) window: stage 1 sleeps in its first
// forward (`--fault stage1=sleep:120s --timeout 1s`), rank 2 times out waiting for its input and
// ranks 0 and 1 are stopped. The root cause is rank 2's timeout, but what it waited for is rank 1
// stuck in 1F0: that action never ended, and it is drawn in flight, in F's colour, from its start
// to the moment rank 1 was stopped, across most of the view, named in its middle. A rank whose
// process died unseen (no moment, no actions recorded) has its lanes tinted whole in the failure's
// colour, which say why they are empty.
#include <gtest/gtest.h>

#include <algorithm>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/viewer/screenshot_support.hpp"
#include "traces/root_cause.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {
namespace {

TEST(StuckRankScreenshot, TheComputationAStuckRankWasInIsDrawnUntilItWasStopped) {
    if (!PIPELENS_HAS_RUNTIME)
        GTEST_SKIP() << "built without LibTorch: no real run to time out";
    const fs::path trace = testing::fresh_trace("viewer_stuck_rank");
    const testing::CommandResult run = testing::run_pipelens(
        "run --schedule 1F1B --pp 3 --m 3 --batch 12 --fault stage1=sleep:120s --timeout 1s "
        "--no-reference --out " +
        trace.string());
    ASSERT_EQ(run.exit_code, 1) << run.err;
    const traces::TraceReader reader(trace);
    const std::vector<traces::ErrorRecord> ordered = traces::root_cause_first(reader.errors(1));
    ASSERT_FALSE(ordered.empty());
    EXPECT_EQ(ordered.front().kind, "timeout");
    const auto stuck =
        std::find_if(ordered.begin(), ordered.end(),
                     [](const traces::ErrorRecord& error) { return error.action == "1F0"; });
    ASSERT_NE(stuck, ordered.end());
    ASSERT_TRUE(stuck->started_ns && stuck->time_ns);

    const fs::path png = screenshot_path("stuck_rank");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --size 1280x800"), 0);
    const Image image = load_png(png);
    // The fitted view reaches the latest stop of an action in flight (rank 1 is stopped after
    // rank 2's timeout, the root cause), so the whole bar is on screen.
    std::int64_t end =
        std::max(TimelineModel::load(reader, 1).end_ns(), ordered.front().time_ns.value_or(0));
    for (const traces::ErrorRecord& error : ordered)
        if (error.started_ns && error.time_ns)
            end = std::max(end, *error.time_ns);
    const TimelineGeometry geometry = fitted_geometry(1280, end);
    const float left = geometry.x(*stuck->started_ns);
    const float right = geometry.x(*stuck->time_ns);
    ASSERT_GT(right - left, 600);  // a second of sleep, most of the fitted view
    // Along a row near the lane's bottom (the label's descenders cross it near the left end).
    const float row = geometry.lane_top(1, false) + kLaneHeight - 4;
    int inside = 0;
    int coloured = 0;
    for (float x = left + 4; x <= right - 5; x += 1, ++inside)
        coloured += near(image.at(x, row), kActionColours[0]) ? 1 : 0;
    EXPECT_GE(coloured * 10, inside * 9) << coloured << " of " << inside << " pixels in F's colour";
    // Its label sits in the middle of so long a bar, clear of the "no matching recv" a peer's
    // send points at its start with: dark text pixels there, none over its first 60 pixels.
    const auto dark_pixels = [&](float from, float to) {
        int dark = 0;
        for (float x = from; x <= to; x += 1)
            for (float y = geometry.lane_top(1, false) + 3; y < geometry.lane_top(1, false) + 13;
                 y += 1)
                dark += near(image.at(x, y), Rgb{15, 15, 15}, 6) ? 1 : 0;
        return dark;
    };
    EXPECT_GT(dark_pixels((left + right) / 2 - 60, (left + right) / 2 + 60), 20);
    EXPECT_EQ(dark_pixels(left + 2, left + 60), 0);
    // And it ends there, inside the window, rather than running past its right edge.
    ASSERT_LT(right + 6, 1280.0f);
    EXPECT_FALSE(near(image.at(right + 6, row), kActionColours[0]))
        << "the in-flight bar runs past the moment rank 1 was stopped";
    fs::remove(png);
}

// Rank 1's process died before it reported: its lanes were blank, as an idle rank's are.
TEST(StuckRankScreenshot, ARankThatDiedUnseenHasItsLanesTintedAndNamed) {
    const fs::path trace = testing::fresh_trace("viewer_died_unseen");
    ASSERT_EQ(testing::run_pipelens("simulate --pp 2 --m 2 --out " + trace.string()).exit_code, 0);
    ASSERT_GE(testing::edit_trace(
                  trace,
                  "DELETE FROM action_parts WHERE rank = 1; DELETE FROM actions WHERE rank = 1; "
                  "UPDATE runs SET status = 'failed', failure = 'rank 1 died'; "
                  "INSERT INTO errors (run_id, rank, stage, microbatch, action, kind, expected, "
                  "actual, message, time_ns) VALUES (1, 1, -1, -1, '', 'rank_died', '', '', "
                  "'rank 1 died (killed by signal 9 (Killed)) before it reported', NULL)"),
              1);
    const fs::path png = screenshot_path("died_unseen");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --size 1280x800"), 0);
    const Image image = load_png(png);
    const traces::TraceReader reader(trace);
    const TimelineGeometry geometry =
        fitted_geometry(1280, TimelineModel::load(reader, 1).end_ns());
    // Right of the message, in both of rank 1's lanes: the failure's colour over the background.
    for (const bool communication : {false, true}) {
        const Rgb tint =
            image.at(geometry.left + geometry.width - 20, geometry.lane_top(1, communication) + 4);
        EXPECT_GT(tint.r, kBackground.r + 20) << text(tint);
        EXPECT_GT(tint.r, tint.g + 20) << text(tint);
    }
    fs::remove(png);
}

}  // namespace
}  // namespace pipelens::viewer
