// The Ranks panel: one row per rank — busy time, bubble by cause (warm-up, cool-down, waiting),
// peak memory, the peer it waited on longest — sortable by any column; a click selects the
// rank's first computation on the timeline.
#pragma once

namespace pipelens::viewer {

struct ViewerState;

struct RanksPanelState {
    int sort_column = 0;
    bool descending = false;
};

void draw_ranks_panel(ViewerState& state);

}  // namespace pipelens::viewer
