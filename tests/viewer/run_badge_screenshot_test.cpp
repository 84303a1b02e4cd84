// pipelens-view in a real (Xvfb) window on runs of each ending: the status badge in the header says
// how the run ended, a finished run whose results failed a check apart from a plain finished one,
// checked at the pixels the layout says.
#include <gtest/gtest.h>

#include <algorithm>
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

// A real 1F1B pp=2 run of `m` microbatches begun in `writer`, with both ranks' rows.
std::int64_t begin_two_rank_run(traces::TraceWriter& writer, int m) {
    traces::RunRecord run;
    run.kind = traces::RunKind::real;
    run.schedule = "1F1B";
    run.pp = 2;
    run.m = m;
    const std::int64_t id = writer.begin_run(run);
    for (int rank = 0; rank < 2; ++rank) {
        traces::RankRecord record;
        record.rank = rank;
        writer.add_rank(id, record);
    }
    return id;
}

// Rank 1's shape mismatch in 1F0, which started at `started_ns` and failed at `failed_ns`.
traces::ErrorRecord rank_one_shape_mismatch(std::int64_t started_ns, std::int64_t failed_ns) {
    traces::ErrorRecord failure;
    failure.rank = 1;
    failure.stage = 1;
    failure.microbatch = 0;
    failure.action = "1F0";
    failure.kind = "shape_mismatch";
    failure.message = "Stage 1 forward outputs[0] has a shape mismatch";
    failure.time_ns = failed_ns;
    failure.started_ns = started_ns;
    return failure;
}

// A run with ranks and no action (one that failed before its first ended) says so where its
// actions would be, instead of blank rows that read as a drawing fault.
TEST(ViewerScreenshot, ARunWithoutActionsSaysSoInItsLanes) {
    const fs::path trace = testing::fresh_trace("viewer_no_actions");
    {
        traces::TraceWriter writer(trace);
        const std::int64_t id = begin_two_rank_run(writer, 2);
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

// A send whose receive never ran points toward the failed peer and says "no matching recv";
// where the peer's in-flight bar lies under that label, the label stays readable over it.
TEST(ViewerScreenshot, TheLabelOfASendWithoutItsReceiveIsReadableOverThePeersInFlightBar) {
    const fs::path trace = testing::fresh_trace("viewer_dangling_label");
    {
        traces::TraceWriter writer(trace);
        const std::int64_t id = begin_two_rank_run(writer, 1);
        traces::ActionRecord forward;
        forward.kind = static_cast<std::uint8_t>(ActionKind::forward);
        forward.stage = 0;
        forward.microbatch = 0;
        forward.end_ns = 100'000;
        writer.add_action(id, forward);
        traces::ActionRecord send = forward;
        send.step = 1;
        send.lane = traces::ActionLane::communication;
        send.kind = static_cast<std::uint8_t>(ActionKind::send_forward);
        send.start_ns = 100'000;
        send.end_ns = 110'000;
        send.pair_id = 0;
        writer.add_action(id, send);
        writer.add_pair(id, {.pair_id = 0, .send_rank = 0, .send_step = 1, .recv_rank = 1});
        const traces::ErrorRecord failure = rank_one_shape_mismatch(50'000, 1'000'000);
        writer.add_error(id, failure);
        writer.fail_run(id, failure.message);
    }
    const fs::path png = screenshot_path("dangling_label");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --size 1280x800"), 0);
    const Image image = load_png(png);
    const TimelineGeometry geometry = fitted_geometry(1280, 1'000'000);
    // The label's box, where draw_dangling_arrow puts it: right of the arrow's loose end.
    const float left = geometry.x(100'000) + 28;
    const float middle = geometry.lane_top(0, true) + kLaneHeight / 2 + kRankHeight * 0.45f;
    ASSERT_GT(geometry.x(1'000'000), left + 16 * 7) << "the in-flight bar must run under it";
    // Counted inside rank 1's in-flight bar, clear of its outline (the failure's colour too).
    const float bar_top = geometry.lane_top(1, false);
    const float from = std::max(middle - 7, bar_top + 3);
    const float to = std::min(middle + 7, bar_top + kLaneHeight - 3);
    ASSERT_GT(to - from, 4) << "the label must lie over the bar";
    int label = 0;
    for (float x = left; x < left + 16 * 7; x += 1)
        for (float y = from; y < to; y += 1)
            label += near(image.at(x, y), kErrorMarker, 40) ? 1 : 0;
    EXPECT_GT(label, 40) << "the label of the dangling arrow is hidden";
    fs::remove(png);
}

// A real run's RECV is posted before the step's zero (rank 0's barrier exit): the fitted view
// starts at it, so its first part and the warm-up before rank 0's first F are on screen.
TEST(ViewerScreenshot, TheFittedViewStartsAtAReceivePostedBeforeTheStep) {
    const fs::path trace = testing::fresh_trace("viewer_negative_start");
    constexpr std::int64_t kPosted = -400'000;
    {
        traces::TraceWriter writer(trace);
        const std::int64_t id = begin_two_rank_run(writer, 1);
        traces::ActionRecord forward;
        forward.kind = static_cast<std::uint8_t>(ActionKind::forward);
        forward.start_ns = 0;
        forward.end_ns = 1'000'000;
        writer.add_action(id, forward);
        traces::ActionRecord receive;
        receive.rank = 1;
        receive.stage = 1;
        receive.lane = traces::ActionLane::communication;
        receive.kind = static_cast<std::uint8_t>(ActionKind::recv_forward);
        receive.start_ns = kPosted;
        receive.end_ns = 1'100'000;
        writer.add_action(id, receive);
        writer.finish_run(id, 2'000'000, 0.5);
    }
    const fs::path png = screenshot_path("negative_start");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() + " --size 1280x800"), 0);
    const Image image = load_png(png);
    const TimelineGeometry geometry = fitted_geometry(1280, TimeSpan{kPosted, 1'100'000});
    EXPECT_EQ(geometry.x(kPosted), geometry.left);
    // The receive's bar from just inside the view's left edge, before the step's zero.
    const float y = geometry.lane_top(1, true) + kLaneHeight - 3;
    for (const std::int64_t time : {kPosted + 20'000, std::int64_t{-100'000}})
        EXPECT_TRUE(near(image.at(geometry.x(time), y), kActionColours[5], 12))
            << time << ": " << text(image.at(geometry.x(time), y));
    // Rank 0's F starts at the zero, after the warm-up the view now shows.
    const float compute = geometry.lane_top(0, false) + kLaneHeight - 3;
    EXPECT_FALSE(near(image.at(geometry.x(-100'000), compute), kActionColours[0], 12))
        << text(image.at(geometry.x(-100'000), compute));
    EXPECT_TRUE(near(image.at(geometry.x(100'000), compute), kActionColours[0], 12))
        << text(image.at(geometry.x(100'000), compute));
    fs::remove(png);
}

// The failing rank's bar is drawn over the arrows: a message rank 1 received as it failed has its
// arrow through the very column of the failure, and the bar still shows whole there.
TEST(ViewerScreenshot, TheFailureBarIsDrawnOverAnArrowThatCrossesIt) {
    const fs::path trace = testing::fresh_trace("viewer_bar_over_arrow");
    constexpr std::int64_t kFailedAt = 1'000'000;
    {
        traces::TraceWriter writer(trace);
        const std::int64_t id = begin_two_rank_run(writer, 2);
        traces::ActionRecord forward;
        forward.kind = static_cast<std::uint8_t>(ActionKind::forward);
        forward.stage = 0;
        forward.microbatch = 1;
        forward.start_ns = 500'000;
        forward.end_ns = kFailedAt;
        writer.add_action(id, forward);
        traces::ActionRecord send = forward;
        send.step = 1;
        send.lane = traces::ActionLane::communication;
        send.kind = static_cast<std::uint8_t>(ActionKind::send_forward);
        send.start_ns = kFailedAt;  // the arrow runs from here, straight down to the receive's end
        send.end_ns = kFailedAt + 10'000;
        send.pair_id = 0;
        writer.add_action(id, send);
        traces::ActionRecord receive = send;
        receive.rank = 1;
        receive.stage = 1;
        receive.step = 0;
        receive.kind = static_cast<std::uint8_t>(ActionKind::recv_forward);
        receive.start_ns = 600'000;
        receive.end_ns = kFailedAt;
        writer.add_action(id, receive);
        writer.add_pair(
            id, {.pair_id = 0, .send_rank = 0, .send_step = 1, .recv_rank = 1, .recv_step = 0});
        const traces::ErrorRecord failure = rank_one_shape_mismatch(100'000, kFailedAt);
        writer.add_error(id, failure);
        traces::ErrorRecord stop;  // chosen below, so that its marker is not the bar's column
        stop.rank = 0;
        stop.kind = "stopped";
        stop.message = "rank 0 stopped: rank 1 failed";
        stop.time_ns = kFailedAt + 10'000;
        writer.add_error(id, stop);
        writer.fail_run(id, failure.message);
    }
    const fs::path png = screenshot_path("bar_over_arrow");
    ASSERT_EQ(
        run_viewer(trace.string() + " --error 1 --screenshot " + png.string() + " --size 1280x800"),
        0);
    const Image image = load_png(png);
    const TimelineGeometry geometry = fitted_geometry(1280, kFailedAt + 10'000);
    const float x = geometry.x(kFailedAt);
    const auto count = [&](float y, Rgb rgb) {
        int found = 0;
        for (float dx = -2; dx <= 2; dx += 1)
            found += near(image.at(x + dx, y), rgb) ? 1 : 0;
        return found;
    };
    // The arrow is there, above rank 1 where the bar does not reach (see-through, as every
    // pair's arrows are over the background)...
    const auto seen_through = [](int arrow, int background) {
        return static_cast<unsigned char>(background +
                                          (arrow - background) * kEveryArrowAlpha / 255.0 + 0.5);
    };
    const Rgb arrow{seen_through(kArrow.r, kBackground.r), seen_through(kArrow.g, kBackground.g),
                    seen_through(kArrow.b, kBackground.b)};
    EXPECT_GE(count(geometry.lane_top(1, false) - 6, arrow), 1);
    // ...and where the bar is, the bar shows three pixels wide.
    for (float y : {geometry.lane_top(1, false) - 1, geometry.lane_top(1, true) + kLaneHeight / 2})
        EXPECT_GE(count(y, kErrorMarker), 3) << "the bar is cut at y " << y;
    fs::remove(png);
}

}  // namespace
}  // namespace pipelens::viewer
