// An experiment simulated the way `pipelens simulate` does it, for every command that simulates
// one and may record it (simulate, the configurations a sweep records): the schedule chosen and
// lowered and the cost model set on a StateRecorder, the simulation run on what that recorded
// state holds, so that a replay of the recorded events rebuilds exactly what was simulated.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

#include "engine/experiment/experiment.hpp"
#include "engine/schedule/schedule.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"

namespace pipelens::sim {

struct ExperimentSimulation {
    std::shared_ptr<const Schedule> lowered;
    SimulationResult result;
    std::optional<std::int64_t> run_id;  // when recorded
};

// Validates `experiment` (a schedule file fills its shape) and simulates it; with a trace file
// `out`, records the run (its config the experiment's TOML) while simulating. The file is opened
// only once the experiment has been found valid, so a bad one leaves no file behind. Throws what
// choosing, lowering, opening or simulating throws (ExperimentError, TraceError,
// ScheduleHangError, ...); a recorded run that fails is marked failed.
ExperimentSimulation simulate_experiment(Experiment& experiment,
                                         const std::filesystem::path& out = {},
                                         const RecordProgress& progress = {});

}  // namespace pipelens::sim
