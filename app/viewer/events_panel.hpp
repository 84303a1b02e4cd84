// The Events panel: recorded events, filterable by rank and name, and a scrubber that replays
// the state up to the chosen event (the timeline marks its moment). What it shows comes from
// event_replay.hpp; the panel keeps the choices and draws.
#pragma once

#include <string>
#include <vector>

#include "app/viewer/event_replay.hpp"

namespace pipelens::viewer {

struct ViewerState;

struct EventsPanelState {
    int scrub = -1;           // index into the run's events; -1: none replayed
    int replayed_event = -1;  // the event replayed_lines belong to
    int listed_event = -1;    // the chosen event the list last scrolled to (or was clicked)
    std::vector<ReplayedLine> replayed_lines;  // the state after that event (event_replay.hpp)
    int rank_filter = kAllRanks;
    std::string name_filter;
};

void draw_events_panel(ViewerState& state);

}  // namespace pipelens::viewer
