// The timeline panel: ruler, per-rank gutter figures, compute and communication lanes with
// actions coloured by kind (merged below 3 px, culled by binary search), hatched bubbles with
// their cause on hover, send/recv arrows (for the hovered or selected action always, for every
// visible pair once zoomed in), ghost bars of a compared run, zoom on the wheel around the
// cursor, pan by dragging, fit on double-click or F.
#pragma once

#include "app/viewer/viewer_state.hpp"

struct ImDrawList;

namespace pipelens::viewer {

// Draws into the current ImGui window, which spans the whole timeline area.
void draw_timeline(ViewerState& state, float window_width, float area_bottom);

// The memory plot under the timeline, on the same time axis.
void draw_memory(const ViewerState& state, float top, float bottom);

}  // namespace pipelens::viewer
