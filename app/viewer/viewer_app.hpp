// One frame of the viewer: places the sidebar, timeline, memory plot and bottom panels at the
// fixed rectangles of viewer_layout.hpp and draws them.
#pragma once

#include <vector>

#include "app/viewer/viewer_layout.hpp"
#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {

void draw_frame(ViewerState& state, float width, float height);

// A rectangle of the window in one plain colour, top-left origin. The areas draw no background
// of their own: the window is cleared to kBackground and then each of these to its colour before
// the frame's primitives are drawn, because a software rasteriser pays for every pixel an
// area's background quad would fill, and a clear costs a fraction of that.
struct PlainArea {
    float left = 0, top = 0, width = 0, height = 0;
    Rgb colour;
};
// Where they are depends on the run shown (a sharding-only run's panels take the timeline's room).
std::vector<PlainArea> plain_areas(const ViewerState& state, float width, float height);

}  // namespace pipelens::viewer
