// Where everything sits in the viewer window, in pixels, and the colours it uses — GUI-free, so
// the screenshot tests compute where a known action, bubble or arrow must appear with the same
// arithmetic the viewer draws with.
//
//   +-----------+-------------------------------------------------+
//   | sidebar   | badge  | summary figures                        |
//   |           |        | overview of the whole run              |
//   |           | gutter | ruler                                  |
//   | runs,     | rank 0 | compute lane                           |
//   | search,   |        | communication lane                     |
//   | details   | ...    |                                        |
//   |           +--------+----------------------------------------+
//   |           | memory plot                                     |
//   |           +-------------------------------------------------+
//   |           | panels: events | errors | sharding              |
//   +-----------+-------------------------------------------------+
#pragma once

#include <algorithm>
#include <cstdint>

#include "traces/palette.hpp"

namespace pipelens::viewer {

inline constexpr float kSidebarWidth = 280;
inline constexpr float kGutterWidth = 170;
inline constexpr float kRightMargin = 12;
// The status badge and the summary figures, on up to kHeaderLines lines (at 1024 px the figures
// of a run take two), kHeaderLineHeight apart.
inline constexpr int kHeaderLines = 2;
inline constexpr float kHeaderLineHeight = 17;
inline constexpr float kHeaderHeight = 6 + kHeaderLines * kHeaderLineHeight;
inline constexpr float kOverviewHeight = 14;  // the whole run, the view marked on it
inline constexpr float kRulerTop = kHeaderHeight + kOverviewHeight;
inline constexpr float kRulerHeight = 26;
inline constexpr float kLanesTop = kRulerTop + kRulerHeight;  // y of the first rank's lanes
inline constexpr float kLaneHeight = 18;
inline constexpr float kLaneGap = 2;
inline constexpr float kRankGap = 10;
inline constexpr float kRankHeight = 2 * kLaneHeight + kLaneGap + kRankGap;
inline constexpr float kMemoryHeight = 110;
inline constexpr float kPanelHeight = 230;
// A sharding-only run (no timeline, no memory): the panels start here, under the line saying so.
inline constexpr float kShardingOnlyPanelsTop = 70;
inline constexpr float kMergeBelowPixels = 3;  // narrower actions merge into one block

using palette::kActionColours;  // by ActionKind, shared with the SVG export
using palette::Rgb;

// Shards of a tensor on the mesh, by shard number (cycled past eight): all distinct, unlike the
// action colours, whose sends and receives share one.
inline constexpr Rgb kShardColours[] = {
    {66, 133, 244}, {52, 168, 83},  {251, 188, 5},  {234, 67, 53},
    {0, 172, 193},  {156, 39, 176}, {255, 112, 67}, {175, 180, 43},
};
// Memory lines by rank (cycled past eight; beyond eight ranks only the selected and the peak
// rank are coloured, the rest muted), readable on the dark plot.
inline constexpr Rgb kRankColours[] = {
    {230, 159, 0}, {86, 180, 233}, {0, 158, 115},   {240, 228, 66},
    {0, 114, 178}, {213, 94, 0},   {204, 121, 167}, {235, 235, 235},
};
inline constexpr Rgb kMutedRank = {90, 90, 98};
inline constexpr float kMemoryAxisWidth = 64;       // the y-axis labels, right of the gutter's edge
inline constexpr Rgb kErrorMarker = {255, 0, 110};  // the chosen error's moment
inline constexpr Rgb kChangedField = {255, 213, 79};  // a state field the chosen event changed
inline constexpr Rgb kChosenStrategy = {90, 80, 20};  // the chosen row of the strategy table
inline constexpr Rgb kBackground = {24, 24, 28};
inline constexpr Rgb kAreaBackground = {15, 15, 15};  // the sidebar's and the panels' ground
// Bubbles are tinted by cause (BubbleCause order: warm-up, cool-down, waiting, idle) and
// hatched in a lighter tint of the same hue, so the cause reads without hovering.
inline constexpr Rgb kBubbleFills[] = {{35, 55, 85}, {35, 70, 55}, {90, 40, 40}, {60, 60, 60}};
inline constexpr Rgb kBubbleHatches[] = {
    {80, 115, 165}, {80, 140, 110}, {170, 85, 85}, {120, 120, 120}};
inline constexpr Rgb kMergedOutline = {20, 20, 24};  // the edge of a merged block
inline constexpr Rgb kArrow = {190, 190, 190};       // send -> recv (white is the critical path)
// Every pair's arrows at once are drawn see-through, so the action names under them stay
// readable; the hovered or selected pair's is solid.
inline constexpr int kEveryArrowAlpha = 150;
inline constexpr Rgb kSelection = {255, 235, 59};
// The run's status badge, in the header row above the rank labels, and its colours.
inline constexpr float kBadgeLeft = kSidebarWidth + 6;
inline constexpr float kBadgeTop = 3;
inline constexpr float kBadgeWidth = 104;
inline constexpr float kBadgeHeight = kHeaderLineHeight + 1;
inline constexpr Rgb kStatusFinished = {0, 158, 115};
inline constexpr Rgb kStatusFailed = {213, 94, 0};
inline constexpr Rgb kStatusUnfinished = {230, 159, 0};
// Where each step after the first begins, through the ruler and every rank, named in the ruler:
// two whole pixel columns, the one holding the step's start and the one before it.
inline constexpr Rgb kStepBoundary = {180, 140, 255};
inline constexpr Rgb kLiveMarker = {255, 80, 80};      // "LIVE": the trace is still being written
inline constexpr Rgb kCriticalPath = {255, 255, 255};  // strip over the path's actions, its links
inline constexpr float kCriticalStrip = 4;             // the strip's height, at the lane's top
// A straggling rank (rank_stragglers.hpp): a bar at the gutter's left edge, left of the rank's
// label, from its compute lane's top to its communication lane's bottom (a fitted row: the row).
inline constexpr Rgb kStraggler = {0, 230, 255};
// A refused value or a failed simulation, beside the field or button it is about.
inline constexpr Rgb kRefusalText = {255, 110, 110};
inline constexpr float kStragglerMarkLeft = kSidebarWidth + 1;
inline constexpr float kStragglerMarkWidth = 4;

// The colour key, at the bottom of the sidebar in two columns: a swatch and a name per entry.
struct LegendEntry {
    const char* name;
    Rgb colour;
};
inline constexpr LegendEntry kLegend[] = {
    {"F", kActionColours[0]},           {"I", kActionColours[1]},
    {"W", kActionColours[2]},           {"B", kActionColours[3]},
    {"OVERLAP_F_B", kActionColours[8]}, {"FSDP", kActionColours[9]},
    {"send", kActionColours[4]},        {"recv", kActionColours[5]},
    {"warm-up gap", kBubbleFills[0]},   {"cool-down gap", kBubbleFills[1]},
    {"waiting gap", kBubbleFills[2]},   {"idle gap", kBubbleFills[3]},
    {"critical path", kCriticalPath},   {"failure", kErrorMarker},
    {"step start", kStepBoundary},      {"straggler", kStraggler},
};
inline constexpr int kLegendSize = static_cast<int>(sizeof kLegend / sizeof kLegend[0]);
inline constexpr float kLegendRowHeight = 17;
inline constexpr float kLegendSwatch = 12;

// The top-left corner of entry `index`'s swatch in a window `window_height` pixels tall.
struct Point {
    float x, y;
};
inline Point legend_swatch(int index, float window_height) {
    const float top = window_height - 8 - kLegendRowHeight * ((kLegendSize + 1) / 2);
    return {8 + static_cast<float>(index % 2) * (kSidebarWidth / 2),
            top + static_cast<float>(index / 2) * kLegendRowHeight};
}

// The timeline's mapping of time and lanes to pixels.
struct TimelineGeometry {
    float left = 0;   // x of time view_start
    float width = 1;  // pixels from view_start to view_end
    float top = 0;    // y of rank 0's compute lane
    std::int64_t view_start = 0;
    std::int64_t view_end = 1;
    // Rows shrunk to fit every rank (more ranks than fit at full height): one row per rank of
    // rank_height pixels (a pixel or less at 1,024 ranks), the compute lane only.
    bool compact = false;
    float rank_height = kRankHeight;

    double pixels_per_ns() const { return width / static_cast<double>(view_end - view_start); }
    float x(std::int64_t time_ns) const {
        return left + static_cast<float>((time_ns - view_start) * pixels_per_ns());
    }
    std::int64_t time_at(float pixel_x) const {
        return view_start + static_cast<std::int64_t>((pixel_x - left) / pixels_per_ns());
    }
    float lane_top(int rank, bool communication) const {
        return top + static_cast<float>(rank) * rank_height +
               (communication && !compact ? kLaneHeight + kLaneGap : 0);
    }
    float lane_height() const { return compact ? std::max(1.0f, rank_height) : kLaneHeight; }
};

// The times a run's timeline covers: from its earliest action (a real run's RECVs are posted
// before the step's zero, set-up is negative) or 0, whichever is earlier, to its fitted end.
struct TimeSpan {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t length() const { return end_ns - start_ns; }
};

// The timeline area of a window of `window_width` pixels, fitted to `span` with a margin of 2%
// of its length after the end.
inline TimelineGeometry fitted_geometry(float window_width, TimeSpan span) {
    TimelineGeometry geometry;
    geometry.left = kSidebarWidth + kGutterWidth;
    geometry.width = std::max(1.0f, window_width - geometry.left - kRightMargin);
    geometry.top = kLanesTop;
    geometry.view_start = span.start_ns;
    geometry.view_end = std::max<std::int64_t>(span.start_ns + 1, span.end_ns + span.length() / 50);
    return geometry;
}

// A run that starts at 0, fitted to [0, end_ns].
inline TimelineGeometry fitted_geometry(float window_width, std::int64_t end_ns) {
    return fitted_geometry(window_width, TimeSpan{0, end_ns});
}

}  // namespace pipelens::viewer
