// Experiment -> recorded state -> cost model -> simulation (and recording), in one place.
#include "sim/experiment_simulation.hpp"

#include "engine/experiment/experiment_toml.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "sim/cost_model_events.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/zero_bubble_inputs.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::sim {

ExperimentSimulation simulate_experiment(Experiment& experiment, const std::filesystem::path& out,
                                         const RecordProgress& progress) {
    resolve_zero_bubble_inputs(experiment);
    recorder::StateRecorder recording(-1, "sim");
    ExperimentSimulation simulation;
    simulation.lowered = record_experiment_schedule(recording, experiment);
    const Schedule& lowered = *simulation.lowered;
    recording.configure_transport({"simulated", lowered.rank_count, 0, "none"});
    record_cost_model(recording, cost_model_for(experiment, lowered.stage_count));
    recording.plan_buffers();
    const CostModel costs = cost_model_from_state(recording.state());
    if (out.empty()) {
        simulation.result = simulate(lowered, costs);
        return simulation;
    }
    traces::TraceWriter writer(out);
    traces::RunRecord run;
    run.schedule = lowered.name;
    run.pp = experiment.shape.rank_count;
    run.v = experiment.shape.stages_per_rank;
    run.m = experiment.shape.microbatch_count;
    run.config = experiment_to_toml(experiment);
    RecordedSimulation recorded =
        simulate_and_record(writer, lowered, costs, run, progress, &recording);
    simulation.result = std::move(recorded.result);
    simulation.run_id = recorded.run_id;
    return simulation;
}

}  // namespace pipelens::sim
