// Every rank's compute lane pooled into a pixel raster, for runs with more ranks than the
// timeline has room for (up to a pixel or less per rank): what the timeline draws as one image
// when its rows shrink to fit.
//
// Invariants: pixel row p covers ranks [p R / H, (p + 1) R / H) (at least one), pixel column x
// the time [view_start + x span / W, ...). Pooling keeps the worst: a bubble on any rank of a row
// wins over actions, and among bubbles the one whose cause ranks first (waiting, then warm-up,
// cool-down, idle); among actions the first drawn. So a bubble on a single rank of 1,024 still
// shows at a pixel.
#pragma once

#include <cstdint>
#include <vector>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

// 0: nothing; 1 + ActionKind: an action; kRasterBubble + BubbleCause: a bubble; the critical
// path over everything.
inline constexpr std::uint8_t kRasterBubble = 32;
inline constexpr std::uint8_t kRasterCriticalPath = 64;

struct RankRaster {
    int width = 0;
    int height = 0;
    std::vector<std::uint8_t> codes;  // row-major, width x height
    std::uint8_t at(int x, int y) const {
        return codes[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                     static_cast<std::size_t>(x)];
    }
};

RankRaster rank_raster(const TimelineModel& model, std::int64_t view_start, std::int64_t view_end,
                       int width, int height);

// Draws the model's critical path into `raster` (made for the same view): its actions on their
// ranks' rows, and a column spanning the rows where it changes rank.
void add_critical_path(RankRaster& raster, const TimelineModel& model, std::int64_t view_start,
                       std::int64_t view_end);

// For the overview strip: per pixel column of [0, end_ns) in `width` columns, the share of the
// ranks' compute time busy there (0 all idle, 1 all busy).
std::vector<float> busy_share_by_column(const TimelineModel& model, TimeSpan span, int width);

// The colour of a raster code (the timeline's: kinds, bubble fills; the background for 0).
Rgb raster_colour(std::uint8_t code);

// The ranks pixel row `row` of a raster `height` rows tall covers: [first, last).
struct RankSpan {
    int first = 0;
    int last = 0;
};
RankSpan ranks_of_row(int row, int height, int rank_count);

}  // namespace pipelens::viewer
