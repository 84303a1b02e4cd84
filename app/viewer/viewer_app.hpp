// One frame of the viewer: places the sidebar, timeline, memory plot and bottom panels at the
// fixed rectangles of viewer_layout.hpp and draws them.
#pragma once

#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {

void draw_frame(ViewerState& state, float width, float height);

}  // namespace pipelens::viewer
