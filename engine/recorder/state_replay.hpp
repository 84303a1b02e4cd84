// Replaying a recorded event stream on a fresh StateRecorder, as PyTorch's
// replay_shape_env_events does: event 0 constructs, every later top-level event is applied in
// order, nested events are made again by their parents.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/recorder/state_recorder.hpp"

namespace pipelens::recorder {

// An event that failed when replayed: names it.
class ReplayError : public std::runtime_error {
  public:
    ReplayError(const Event& event, const std::string& message);
    Event event;
};

// The top-level events of `events` (one rank's stream, by sequence), in order.
std::vector<Event> top_level_events(const std::vector<Event>& events);

// Replays the first `count` top-level events (all when nullopt). Throws ReplayError.
StateRecorder replay_prefix(const std::vector<Event>& top_level, std::optional<std::size_t> count);

// Replays every top-level event with sequence <= `upto` (all when nullopt).
StateRecorder replay_events(const std::vector<Event>& events,
                            std::optional<std::int64_t> upto = std::nullopt);

// The first recorded event the replay did not make again identically (name, parent,
// arguments), when there is one: a replay that rebuilt the same state from different calls
// still means the recording and this engine disagree.
std::optional<std::string> compare_event_streams(const std::vector<Event>& recorded,
                                                 const std::vector<Event>& replayed);

}  // namespace pipelens::recorder
