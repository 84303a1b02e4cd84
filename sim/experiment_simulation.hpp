// A simulated run, built one way for every command that simulates and may record one
// (simulate, the configurations a sweep records, import --simulate's twin, plan's best layout):
// the schedule chosen and lowered and the cost model set on a StateRecorder, the simulation run
// on what that recorded state holds, so that a replay of the recorded events rebuilds exactly
// what was simulated.
//
// Invariants: a recorded run always carries its events (the schedule's, the transport's and the
// cost model's) and the state they built; the simulation uses the cost model read back from
// that state, never the one it was given directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "engine/experiment/experiment.hpp"
#include "engine/schedule/schedule.hpp"
#include "sim/cost_model.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"

namespace pipelens::sim {

struct ExperimentSimulation {
    std::shared_ptr<const Schedule> lowered;
    SimulationResult result;
    std::optional<std::int64_t> run_id;  // when recorded
    CostModel costs;                     // what it was simulated under (read back from the state)
};

// Validates `experiment` (a schedule file fills its shape) and simulates it; with a trace file
// `out`, records the run (its config the experiment's TOML) while simulating. The file is opened
// only once the experiment has been found valid, so a bad one leaves no file behind. Throws what
// choosing, lowering, opening or simulating throws (ExperimentError, TraceError,
// ScheduleHangError, ...); a recorded run that fails is marked failed. `writer` says how the file
// is opened (how long to wait for another process writing it).
ExperimentSimulation simulate_experiment(Experiment& experiment,
                                         const std::filesystem::path& out = {},
                                         const RecordProgress& progress = {},
                                         const traces::TraceWriterOptions& writer = {});

// The same for a generated schedule under a cost model worked out elsewhere (the planner's):
// `config` is what the recorded run keeps as its configuration.
ExperimentSimulation simulate_shape(const ScheduleShape& shape, const CostModel& costs,
                                    const std::string& config,
                                    const std::filesystem::path& out = {});

}  // namespace pipelens::sim
