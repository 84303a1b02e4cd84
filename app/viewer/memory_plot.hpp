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

void draw_memory(const ViewerState& state, float top, float bottom);

}  // namespace pipelens::viewer
