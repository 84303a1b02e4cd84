// Where the Compare view puts the pinned and the current simulation: one above the other in
// the timeline's area, on one time axis from 0 to the longer step, so the difference in step is
// the difference in where the two end. GUI-free, so the screenshot tests find a run's end with
// the arithmetic the view draws with.
//
// Invariants: both halves share `left`, `right` and `span_ns`; a rank's row is at most
// kCompareRowHeight tall and every rank of a half fits in it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

inline constexpr float kCompareHeaderHeight = 48;  // three lines: pinned, current, difference
inline constexpr float kCompareLabelHeight = 18;   // a half's title above its rows
inline constexpr float kCompareRowHeight = 16;     // a rank's compute lane, with its gap
inline constexpr float kCompareRowGap = 2;

struct CompareGeometry {
    float left = 0, right = 0;
    std::int64_t span_ns = 1;
    float top[2] = {0, 0};  // 0: pinned, 1: current; the first rank's row
    float row_height[2] = {kCompareRowHeight, kCompareRowHeight};

    float x(std::int64_t time_ns) const {
        return left + (right - left) * static_cast<float>(static_cast<double>(time_ns) /
                                                          static_cast<double>(span_ns));
    }
    float row_top(int half, int rank) const { return top[half] + row_height[half] * rank; }
    float bar_height(int half) const {
        return row_height[half] >= 4 * kCompareRowGap ? row_height[half] - kCompareRowGap
                                                      : row_height[half];
    }
};

// `area_bottom`: the timeline area's foot; ranks and ends of the pinned (0) and current (1) runs.
inline CompareGeometry compare_geometry(float width, float area_bottom, const int ranks[2],
                                        const std::int64_t ends[2]) {
    CompareGeometry geometry;
    geometry.left = kSidebarWidth + kGutterWidth;
    geometry.right = width - kRightMargin;
    geometry.span_ns = std::max<std::int64_t>({ends[0], ends[1], 1});
    const float half = (area_bottom - kCompareHeaderHeight) / 2 - kCompareLabelHeight;
    for (int which = 0; which < 2; ++which) {
        geometry.top[which] =
            kCompareHeaderHeight + kCompareLabelHeight + which * (half + kCompareLabelHeight);
        geometry.row_height[which] =
            std::min(kCompareRowHeight, half / static_cast<float>(std::max(1, ranks[which])));
    }
    return geometry;
}

// The shared time axis as a timeline's geometry, for what is drawn under the two halves (the
// current run's memory).
inline TimelineGeometry comparison_time_axis(const CompareGeometry& geometry) {
    TimelineGeometry axis;
    axis.left = geometry.left;
    axis.width = geometry.right - geometry.left;
    axis.view_start = 0;
    axis.view_end = geometry.span_ns;
    return axis;
}

}  // namespace pipelens::viewer
