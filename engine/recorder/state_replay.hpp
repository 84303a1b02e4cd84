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

// Why an event failed when replayed: the engine refused it (the replay went another way than
// the recording), it cannot be read (a damaged or foreign trace), or what it asks for does not
// fit this machine (a resource limit, not a finding).
enum class ReplayFailure { refused, unreadable, too_large };

// An event that failed when replayed: names it. Made inside the catch of the error it wraps,
// whose type says the failure.
class ReplayError : public std::runtime_error {
  public:
    ReplayError(const Event& event, const std::string& message);
    Event event;
    ReplayFailure failure = ReplayFailure::refused;
    std::size_t stream = 0;  // which of the streams compared (0: the first or only one)
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
