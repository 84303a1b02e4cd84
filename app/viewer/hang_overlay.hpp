// A checked schedule's hang drawn on its timeline (the marks of hang_marks.hpp): the ranks of
// the wait cycle marked in their gutter, each stuck action outlined, an arrow from it to the
// action it waits for (who waits for whom), and the report's first line along the bottom.
#pragma once

#include <imgui.h>

#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

struct ViewerState;

// Nothing unless the shown trace is the timeline of the schedule last found to hang. Called
// within the lanes' clip, over everything on them but the selection.
void draw_hang(ImDrawList* draw, const ViewerState& state, const TimelineGeometry& geometry,
               float area_bottom);

}  // namespace pipelens::viewer
