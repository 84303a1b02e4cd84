// The Events panel: recorded events, filterable by rank and name, and a scrubber that replays
// the state up to the chosen event (the timeline marks its moment).
#pragma once

#include <string>
#include <vector>

namespace pipelens::viewer {

struct ViewerState;

// A line of the replayed state: "field: value", or a heading.
struct ReplayedLine {
    std::string text;
    bool changed = false;  // drawn in kChangedField: the chosen event changed it
};

struct EventsPanelState {
    int scrub = -1;                            // index into the run's events; -1: none replayed
    int replayed_event = -1;                   // the event replayed_lines belong to
    std::vector<ReplayedLine> replayed_lines;  // the state after that event
    int rank_filter = -2;                      // -2: all ranks
    std::string name_filter;
};

void draw_events_panel(ViewerState& state);

}  // namespace pipelens::viewer
