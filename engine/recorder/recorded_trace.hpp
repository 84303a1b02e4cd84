// Recordings in a trace: a rank's events go to the `events` table, the state it ended in to
// `state_snapshots`, and calls that failed to `errors` (kind `event_failed`). Reading gives one
// rank's stream back, ready for replay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/recorder/state_equality.hpp"
#include "engine/recorder/state_recorder.hpp"
#include "engine/schedule/schedule.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::recorder {

// Writes the recorder's events, its final state as the rank's snapshot, and its failures.
void write_recording(traces::TraceWriter& writer, std::int64_t run_id,
                     const StateRecorder& recorder);
// The same from parts (a rank's recording that travelled to rank 0 as JSON).
void write_recording(traces::TraceWriter& writer, std::int64_t run_id, int rank,
                     const std::vector<Event>& events, const std::vector<StateField>& final_state,
                     const std::vector<EventFailure>& failures);

// "rank 0", or "whole pipeline" for a simulation's one stream (rank -1): how messages name a
// stream.
std::string stream_name(int rank);

// A run's recorded events, read from the trace once and handed out rank by rank.
class RecordedEvents {
  public:
    RecordedEvents(const traces::TraceReader& reader, std::int64_t run_id);
    // From rows already read (`path` names the trace in messages).
    RecordedEvents(std::string path, std::int64_t run_id, std::vector<traces::EventRecord> records);

    // The ranks with events, ascending (-1 is a whole-pipeline stream).
    std::vector<int> ranks() const;
    // One rank's events by sequence. Throws std::invalid_argument naming the run and the
    // ranks that have events when `rank` has none, when the stored arguments are not JSON, and
    // as a corrupt trace when the rows are numbered or nested as no recorder numbers them.
    std::vector<Event> stream(int rank) const;

  private:
    std::string path_;
    std::int64_t run_id_;
    std::vector<traces::EventRecord> records_;  // by (rank, sequence)
};

struct StateSnapshot {
    std::int64_t after_sequence = -1;
    std::vector<StateField> fields;
};
std::optional<StateSnapshot> read_snapshot(const traces::TraceReader& reader, std::int64_t run_id,
                                           int rank);

// A recording as JSON, for travelling between processes ({events, state, failures}); event
// times become ns after `time_origin_ns` on the recorder's clock (the run's time zero).
nlohmann::json recording_to_json(const StateRecorder& recorder, std::int64_t time_origin_ns = 0);
struct RecordingParts {
    std::vector<Event> events;
    std::vector<StateField> state;
    std::vector<EventFailure> failures;
};
RecordingParts recording_from_json(const nlohmann::json& json);

// A trace row for rank `rank`'s action at `step` of a lowered schedule: what the action is (kind,
// stage, microbatch, an OVERLAP_F_B's parts) and its lane; times, bytes and pair are the
// caller's. Simulated and real runs describe their actions through this one function.
traces::ActionRecord action_record(const Schedule& lowered, int rank, int step);

}  // namespace pipelens::recorder
