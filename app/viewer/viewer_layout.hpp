// Where everything sits in the viewer window, in pixels, and the colours it uses — GUI-free, so
// the screenshot tests compute where a known action, bubble or arrow must appear with the same
// arithmetic the viewer draws with.
//
//   +-----------+-------------------------------------------------+
//   | sidebar   | gutter | ruler                                  |
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

namespace pipelens::viewer {

inline constexpr float kSidebarWidth = 280;
inline constexpr float kGutterWidth = 170;
inline constexpr float kRightMargin = 12;
inline constexpr float kRulerHeight = 26;
inline constexpr float kLaneHeight = 18;
inline constexpr float kLaneGap = 2;
inline constexpr float kRankGap = 10;
inline constexpr float kRankHeight = 2 * kLaneHeight + kLaneGap + kRankGap;
inline constexpr float kMemoryHeight = 110;
inline constexpr float kPanelHeight = 230;
inline constexpr float kMergeBelowPixels = 3;  // narrower actions merge into one block

struct Rgb {
    unsigned char r, g, b;
};

// By ActionKind: F, I, W, B, SEND_F, RECV_F, SEND_B, RECV_B, OVERLAP_F_B, UNSHARD, RESHARD,
// REDUCE_GRAD.
inline constexpr Rgb kActionColours[] = {
    {66, 133, 244}, {52, 168, 83},   {251, 188, 5},   {234, 67, 53},
    {0, 172, 193},  {255, 112, 67},  {0, 172, 193},   {255, 112, 67},
    {156, 39, 176}, {120, 120, 120}, {120, 120, 120}, {120, 120, 120},
};
// Shards of a tensor on the mesh, by shard number (cycled past eight): all distinct, unlike the
// action colours, whose sends and receives share one.
inline constexpr Rgb kShardColours[] = {
    {66, 133, 244}, {52, 168, 83},  {251, 188, 5},  {234, 67, 53},
    {0, 172, 193},  {156, 39, 176}, {255, 112, 67}, {175, 180, 43},
};
inline constexpr Rgb kErrorMarker = {255, 0, 110};    // the chosen error's moment
inline constexpr Rgb kChangedField = {255, 213, 79};  // a state field the chosen event changed
inline constexpr Rgb kChosenStrategy = {90, 80, 20};  // the chosen row of the strategy table
inline constexpr Rgb kBackground = {24, 24, 28};
inline constexpr Rgb kBubbleFill = {70, 40, 40};
inline constexpr Rgb kBubbleHatch = {150, 80, 80};
inline constexpr Rgb kMergedBlock = {140, 140, 150};
inline constexpr Rgb kArrow = {255, 255, 255};
inline constexpr Rgb kSelection = {255, 235, 59};

// The timeline's mapping of time and lanes to pixels.
struct TimelineGeometry {
    float left = 0;   // x of time view_start
    float width = 1;  // pixels from view_start to view_end
    float top = 0;    // y of rank 0's compute lane
    std::int64_t view_start = 0;
    std::int64_t view_end = 1;

    double pixels_per_ns() const { return width / static_cast<double>(view_end - view_start); }
    float x(std::int64_t time_ns) const {
        return left + static_cast<float>((time_ns - view_start) * pixels_per_ns());
    }
    std::int64_t time_at(float pixel_x) const {
        return view_start + static_cast<std::int64_t>((pixel_x - left) / pixels_per_ns());
    }
    float lane_top(int rank, bool communication) const {
        return top + rank * kRankHeight + (communication ? kLaneHeight + kLaneGap : 0);
    }
};

// The timeline area of a window of `window_width` pixels, fitted to [0, end_ns] with a 2%
// margin after the end.
inline TimelineGeometry fitted_geometry(float window_width, std::int64_t end_ns) {
    TimelineGeometry geometry;
    geometry.left = kSidebarWidth + kGutterWidth;
    geometry.width = std::max(1.0f, window_width - geometry.left - kRightMargin);
    geometry.top = kRulerHeight;
    geometry.view_start = 0;
    geometry.view_end = std::max<std::int64_t>(1, end_ns + end_ns / 50);
    return geometry;
}

}  // namespace pipelens::viewer
