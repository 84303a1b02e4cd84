// Schedule -> recorded state -> cost model -> simulation (and recording), in one place: both
// entry points record their schedule and hand the recording to simulate_recorded.
#include "sim/experiment_simulation.hpp"

#include "engine/experiment/experiment_toml.hpp"
#include "engine/recorder/state_recorder.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "sim/cost_model_events.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/zero_bubble_inputs.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::sim {
namespace {

// `recording` holds the chosen, lowered schedule. Records the transport and `costs` on it and
// simulates with the cost model its state now holds; with `out`, records the run as `config`
// with those events.
ExperimentSimulation simulate_recorded(recorder::StateRecorder& recording, const CostModel& costs,
                                       const std::string& config, const std::filesystem::path& out,
                                       const RecordProgress& progress,
                                       const traces::TraceWriterOptions& writer_options = {}) {
    ExperimentSimulation simulation;
    simulation.lowered = recording.state().schedule.schedule;
    const Schedule& lowered = *simulation.lowered;
    recording.configure_transport({"simulated", lowered.rank_count, 0, "none"});
    record_cost_model(recording, costs);
    recording.plan_buffers();
    const CostModel recorded_costs = cost_model_from_state(recording.state());
    simulation.costs = recorded_costs;
    if (out.empty()) {
        simulation.result = simulate(lowered, recorded_costs);
        return simulation;
    }
    traces::TraceWriter writer(out, writer_options);
    traces::RunRecord run;
    run.kind = traces::RunKind::simulated;
    run.schedule = lowered.name;
    run.pp = lowered.rank_count;
    run.v = lowered.stages_per_rank;
    run.m = lowered.microbatch_count;
    run.config = config;
    RecordedSimulation recorded =
        simulate_and_record(writer, lowered, recorded_costs, run, progress, &recording);
    simulation.result = std::move(recorded.result);
    simulation.run_id = recorded.run_id;
    return simulation;
}

}  // namespace

ExperimentSimulation simulate_experiment(Experiment& experiment, const std::filesystem::path& out,
                                         const RecordProgress& progress,
                                         const traces::TraceWriterOptions& writer) {
    resolve_zero_bubble_inputs(experiment);
    recorder::StateRecorder recording(-1, "sim");
    const std::shared_ptr<const Schedule> lowered =
        record_experiment_schedule(recording, experiment);
    const std::string config = out.empty() ? "" : experiment_to_toml(experiment);
    return simulate_recorded(recording, cost_model_for(experiment, lowered->stage_count), config,
                             out, progress, writer);
}

ExperimentSimulation simulate_shape(const ScheduleShape& shape, const CostModel& costs,
                                    const std::string& config, const std::filesystem::path& out) {
    recorder::StateRecorder recording(-1, "sim");
    recording.choose_schedule(shape);
    recording.lower_schedule(false);
    return simulate_recorded(recording, costs, config, out, {});
}

}  // namespace pipelens::sim
