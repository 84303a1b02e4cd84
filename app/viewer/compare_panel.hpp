// The Compare panel: pin the current simulation and vary another. While one is pinned the
// timeline's area shows both, one above the other on one time axis (compare_layout.hpp), with
// their step, bubble and peak memory and the differences; the panel lists the differences per
// rank and holds a grid of schedule kinds x m (step and bubble of each, simulated by the
// workbench), a click on a cell opening it.
#pragma once

#include <string>
#include <vector>

#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

struct ViewerState;

struct ComparePanelState {
    bool show_both = true;  // the two timelines instead of the current one, while one is pinned
    std::string grid_kinds = "GPipe,1F1B,Interleaved1F1B,ZBVZeroBubble,DualPipeV";
    std::string grid_ms = "4,8,16,32";
    std::string grid_refusal;  // why the typed kinds or m were not simulated
    // The workbench's grid the boxes were last filled from: a grid asked for another way (a
    // script's `grid`) shows in the boxes, as if typed there.
    std::vector<std::string> boxes_kinds;
    std::vector<int> boxes_ms;
};

void draw_compare_panel(ViewerState& state);

// Whether the timeline's area shows the comparison this frame.
bool showing_comparison(const ViewerState& state);
// The two timelines in the timeline's area, `width` wide down to `area_bottom`.
void draw_comparison_view(const ViewerState& state, float width, float area_bottom);
// Their shared time axis, `width` wide (while showing_comparison).
TimelineGeometry comparison_axis(const ViewerState& state, float width, float area_bottom);

}  // namespace pipelens::viewer
