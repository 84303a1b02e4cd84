// The memory plot under the timeline, on its time axis: one line per rank (distinct colours up
// to eight ranks; past that the selected and the peak rank coloured, the rest muted), a y-axis
// in bytes, a key of the coloured ranks, and a readout of every coloured rank at the cursor.
#pragma once

#include <optional>
#include <vector>

#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

struct ViewerState;
class TimelineModel;

struct MemoryLine {
    int rank = 0;
    Rgb colour{};
    bool muted = false;
};

// The ranks with samples and how each is drawn (muted ones first, so coloured lines stay on
// top). `selected_rank`: the rank of the selected action, if any.
std::vector<MemoryLine> memory_lines(const TimelineModel& model, std::optional<int> selected_rank);

// Where the plot's parts go in the area [top, bottom): the title's line at its top (the key of
// ranks under it), then the plot, whose tick labels (kMemoryLabelHeight tall, centred on their
// tick) stay below the title's line and above the area's bottom: the peak's label never covers
// the title, and "0 B" is never cut off.
inline constexpr float kMemoryLabelHeight = 14;
struct MemoryPlotLayout {
    float title_top = 0;    // the title's line: [title_top, title_top + kMemoryLabelHeight)
    float plot_top = 0;     // the peak's tick
    float plot_bottom = 0;  // the 0 B tick
    float height() const { return plot_bottom - plot_top; }
};
inline MemoryPlotLayout memory_plot_layout(float top, float bottom) {
    MemoryPlotLayout layout;
    layout.title_top = top + 2;
    layout.plot_top = layout.title_top + kMemoryLabelHeight + 2 + kMemoryLabelHeight / 2;
    layout.plot_bottom = bottom - 2 - kMemoryLabelHeight / 2;
    return layout;
}

// `axis`: the time axis of the view above (the timeline's, or the Compare view's shared one),
// so that a peak lines up with the actions that made it.
void draw_memory(const ViewerState& state, const TimelineGeometry& axis, float top, float bottom);

}  // namespace pipelens::viewer
