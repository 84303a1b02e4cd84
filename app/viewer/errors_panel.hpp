// The Errors panel: every mismatch and failure of the run; choosing one selects its action and
// marks its moment on the timeline.
#pragma once

namespace pipelens::viewer {

struct ViewerState;

struct ErrorsPanelState {
    int chosen = -1;  // index into the run's errors; its moment is marked
};

void draw_errors_panel(ViewerState& state);

}  // namespace pipelens::viewer
