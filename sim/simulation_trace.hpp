// Records a simulation into a trace: the run (kind `sim`, its experiment as TOML), per-rank
// figures with the bubble split, every action of the timeline with its PyTorch text, the
// send/recv pairs and the memory samples. The run is finished only after every row is written,
// so an interrupted recording leaves a run marked unfinished rather than a partial one that
// looks complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/recorder/state_recorder.hpp"
#include "engine/schedule/schedule.hpp"
#include "sim/simulator.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::sim {

// Called with (rows written, rows in total) as the recording goes on.
using RecordProgress = std::function<void(std::size_t, std::size_t)>;

// `lowered` is the schedule `result` was simulated from under `costs`. `run` carries the
// description fields (schedule, pp, v, m, config); `recording`, when given, the events that
// built the simulated state and that state (see engine/recorder). Returns the new run's id.
std::int64_t record_simulation(traces::TraceWriter& writer, const Schedule& lowered,
                               const CostModel& costs, const SimulationResult& result,
                               traces::RunRecord run, const RecordProgress& progress = {},
                               const recorder::StateRecorder* recording = nullptr);

// simulate() and record_simulation() at once: the rows that need no simulated time (the run,
// the recording, the pairs) are written on a second thread while the simulation runs. A
// simulation that fails (a hang) leaves its run recorded as failed with the error, and throws.
struct RecordedSimulation {
    SimulationResult result;
    std::int64_t run_id = 0;
};
RecordedSimulation simulate_and_record(traces::TraceWriter& writer, const Schedule& lowered,
                                       const CostModel& costs, traces::RunRecord run,
                                       const RecordProgress& progress = {},
                                       const recorder::StateRecorder* recording = nullptr);

// A rank's figures as the `ranks` table stores them (waiting time as a JSON object by peer).
traces::RankRecord rank_record(const RankResult& rank);

// The rows record_simulation writes, held in memory instead (the viewer shows a simulation
// without a file): the same records, ranks by number, actions and memory samples in the order
// the file's keys keep them. As in the file, an action's PyTorch text is given only where its
// integers cannot give it (OVERLAP_F_B, which names its parts); the others' labels are empty.
struct SimulationRows {
    std::vector<traces::ActionRecord> actions;
    std::vector<traces::PairRecord> pairs;
    std::vector<traces::RankRecord> ranks;
    std::vector<traces::MemoryRecord> memory;
};
SimulationRows simulation_rows(const Schedule& lowered, const CostModel& costs,
                               const SimulationResult& result);

// The row count record_simulation writes for `result` (what progress counts up to).
std::size_t simulation_row_count(const Schedule& lowered, const SimulationResult& result);

}  // namespace pipelens::sim
