// What the Events panel shows, without any GUI: which recorded events its filters keep and how
// each is listed, and the state replayed up to a chosen event, field by field, the fields that
// event changed first and marked.
//
// Invariants: a nested event takes effect with the top-level call that made it, so "changed" is
// always measured across that call: the state after the chosen event against the state before
// its top-level call. Replaying never throws; a replay that fails is one line saying why.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/viewer/trace_session.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::viewer {

inline constexpr int kAllRanks = -2;  // the rank filter that keeps every rank (-1 is a rank)

// Whether the list keeps `event`: its rank is `rank_filter` (or that is kAllRanks), and its name
// contains `name_filter` (or that is empty).
bool event_passes_filters(const traces::EventRecord& event, int rank_filter,
                          std::string_view name_filter);

// The ranks the rank filter offers: every rank `events` has, ascending, once each (-1 when some
// event is the pipeline's, as a simulation's are).
std::vector<int> event_ranks(const std::vector<traces::EventRecord>& events);
// The rank filter's text for `rank_filter`: "all ranks", "rank 3", "r-1 (pipeline)".
std::string rank_filter_label(int rank_filter);

// The list's line for `event`: "r0 #3 1.20 us choose_schedule {...}", indented when nested, its
// time only when it has one, its arguments cut at 120 characters.
std::string event_list_line(const traces::EventRecord& event);

// The scrubber's text for the chosen event, numbered as the list and the replayed state's
// heading number it (the rank's own sequence, not the event's place among every rank's):
// "replayed up to r1 #0 set_stage_meta".
std::string scrub_text(const traces::EventRecord& event);

// The top-level event `event` belongs to among `events` (itself when it is one): nested events
// take effect with their parent. Stops at a parent that is missing, or 64 levels up.
const traces::EventRecord& top_level_of(const std::vector<traces::EventRecord>& events,
                                        const traces::EventRecord& event);

// A line of the replayed state: "field: value", or a heading.
struct ReplayedLine {
    std::string text;
    bool changed = false;  // the chosen event changed it (and the heading saying so)

    friend bool operator==(const ReplayedLine&, const ReplayedLine&) = default;
};

// The state of `chosen`'s rank after `chosen`, replayed from the session's recorded events: a
// heading naming what changed it, the fields it changed, "unchanged:", then the other fields.
std::vector<ReplayedLine> replayed_state_lines(const TraceSession& session,
                                               const traces::EventRecord& chosen);

}  // namespace pipelens::viewer
