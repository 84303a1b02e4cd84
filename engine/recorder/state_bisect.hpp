// Bisection over replayed prefixes, as PyTorch bisects translation validation failures over
// ShapeEnv events: replaying the first k top-level events gives the state "after event k", and
// a binary search finds the first k where two streams' states differ, or where one stream's
// state stops validating. Each prefix is replayed at most once (results are cached), and the
// search assumes what it looks for persists once it appears, as upstream's does.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/recorder/event.hpp"
#include "engine/recorder/state_equality.hpp"

namespace pipelens::recorder {

struct DivergenceBisection {
    bool found = false;
    std::size_t event_count = 0;  // top-level events both streams have
    // The longer stream's further top-level events, searched when the common ones agree.
    std::size_t further_event_count = 0;
    // The first event after which the states differ, and the other stream's event at the same
    // position; where the streams agree over the events both have and one stream's further
    // events part them, only that stream's event (the other stream has ended).
    std::optional<Event> left_event;
    std::optional<Event> right_event;
    std::optional<StateDifference> difference;
    // Prefixes replayed: of both streams over the common events (at most 2 + ceil(log2 n)), then of
    // one stream over its further ones (at most 3 + ceil(log2 n'), the shorter stream whole too).
    int replays = 0;
    std::string note;  // e.g. one stream has more events
};

DivergenceBisection bisect_divergence(const std::vector<Event>& left,
                                      const std::vector<Event>& right);

struct ErrorBisection {
    bool found = false;
    std::size_t event_count = 0;
    std::optional<Event> event;         // the first event after which validation fails
    std::vector<std::string> problems;  // validate_state() there
    int replays = 0;
};

// Also counts a replay the engine refuses as a validation failure at that event; an event that
// cannot be read or does not fit this machine throws its ReplayError.
ErrorBisection bisect_until_error(const std::vector<Event>& events);

}  // namespace pipelens::recorder
