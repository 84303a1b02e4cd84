// The timeline panel: ruler, per-rank gutter figures, compute and communication lanes with
// actions coloured by kind (merged below 3 px, culled by binary search), hatched bubbles with
// their cause on hover, send/recv arrows (for the hovered or selected action always, for every
// visible pair once zoomed in), ghost bars of a compared run, zoom on the wheel around the
// cursor, pan by dragging, fit on double-click or F.
#pragma once

#include <cstdint>
#include <optional>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

struct ViewerState;

struct TimelineViewState {
    TimelineGeometry geometry;
    float scroll_y = 0;   // ranks scrolled up out of view, in pixels (dragging scrolls)
    bool fitted = false;  // geometry set for the current run
    std::optional<ActionLocation> selected;
    std::optional<ActionLocation> hovered;
};

// Centres the view, at its zoom, on [start_ns, end_ns] unless that is already in view.
void bring_into_view(TimelineViewState& view, std::int64_t start_ns, std::int64_t end_ns);

// Draws into the current ImGui window, which spans the whole timeline area.
void draw_timeline(ViewerState& state, float window_width, float area_bottom);

// The memory plot under the timeline, on the same time axis.
void draw_memory(const ViewerState& state, float top, float bottom);

}  // namespace pipelens::viewer
