// The viewer's panels, one file each: the sidebar (open a file, recent files, runs to show and
// compare, search, details of the selection and the largest differences of a comparison), and
// the bottom panels — recorded events with a replay scrubber, errors that jump to their action,
// sharding decisions with the mesh and the strategy table. Each draws into the current window;
// an empty table says plainly that nothing was recorded.
#pragma once

#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {

void draw_sidebar(ViewerState& state);
void draw_events_panel(ViewerState& state);
void draw_errors_panel(ViewerState& state);
void draw_sharding_panel(ViewerState& state);

}  // namespace pipelens::viewer
