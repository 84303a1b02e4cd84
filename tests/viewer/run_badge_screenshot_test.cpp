// pipelens-view in a real (Xvfb) window on runs of each ending: the status badge in the header says
// how the run ended, a finished run whose results failed a check apart from a plain finished one,
// checked at the pixels the layout says.
#include <gtest/gtest.h>

#include <string>

#include "app/viewer/viewer_layout.hpp"
#include "engine/schedule/action.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/viewer/screenshot_support.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::viewer {
namespace {

// A finished run whose results differ from the reference is no plain "finished" run: its badge
// says MISMATCH in the failure's colour, as `summary` says "check failed".
TEST(ViewerScreenshot, AFinishedRunWhoseResultsFailedACheckIsBadgedAsAMismatch) {
    const fs::path trace = testing::fresh_trace("viewer_mismatch");
    {
        traces::TraceWriter writer(trace);
        for (bool mismatch : {false, true}) {
            traces::RunRecord run;
            run.kind = traces::RunKind::real;
            run.schedule = "GPipe";
            run.pp = 1;
            run.m = 1;
            const std::int64_t id = writer.begin_run(run);
            traces::ActionRecord forward;
            forward.kind = static_cast<std::uint8_t>(ActionKind::forward);
            forward.end_ns = 1'000;
            writer.add_action(id, forward);
            if (mismatch) {
                traces::ErrorRecord error;
                error.kind = "reference_mismatch";
                error.message = "the pipelined step's outputs differ from the reference's";
                writer.add_error(id, error);
            }
            writer.finish_run(id, 1'000, 0);
        }
    }
    const fs::path png = screenshot_path("mismatch");
    const auto badge = [&](int run) {
        EXPECT_EQ(run_viewer(trace.string() + " --run " + std::to_string(run) + " --screenshot " +
                             png.string()),
                  0);
        return load_png(png).at(kBadgeLeft + 3, kBadgeTop + kBadgeHeight / 2);
    };
    EXPECT_TRUE(near(badge(1), kStatusFinished, 6));
    EXPECT_TRUE(near(badge(2), kStatusFailed, 6));
    fs::remove(png);
}

// A run with ranks and no action (one that failed before its first ended) says so where its
// actions would be, instead of blank rows that read as a drawing fault.
TEST(ViewerScreenshot, ARunWithoutActionsSaysSoInItsLanes) {
    const fs::path trace = testing::fresh_trace("viewer_no_actions");
    {
        traces::TraceWriter writer(trace);
        traces::RunRecord run;
        run.kind = traces::RunKind::real;
        run.schedule = "1F1B";
        run.pp = 2;
        run.m = 2;
        const std::int64_t id = writer.begin_run(run);
        for (int rank = 0; rank < 2; ++rank) {
            traces::RankRecord record;
            record.rank = rank;
            writer.add_rank(id, record);
        }
        writer.fail_run(id, "rank 1: ProcessDied before its first action");
    }
    const fs::path png = screenshot_path("no_actions");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string()), 0);
    const Image image = load_png(png);
    int text = 0;
    const float left = kSidebarWidth + kGutterWidth;
    for (float y = kLanesTop + 4; y < kLanesTop + 18; y += 1)
        for (float x = left + 6; x < left + 300; x += 1)
            text += near(image.at(x, y), {150, 150, 150}, 40) ? 1 : 0;
    EXPECT_GT(text, 100);
    fs::remove(png);
}

}  // namespace
}  // namespace pipelens::viewer
