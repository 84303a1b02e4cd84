// `pipelens simulate`: experiment -> lowered schedule -> cost model -> simulation, printed as a
// table (or one JSON object) and, with --out, recorded as a run in a trace file.
#include <cstdio>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/ci_gates.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/progress_bar.hpp"
#include "app/cli/run_report.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "engine/run_plan/experiment_schedule.hpp"
#include "sim/cost_model_events.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"

namespace pipelens::cli {
namespace {

struct SimulateOptions {
    ExperimentOptions experiment;
    std::string out;
    bool json = false;
    GateOptions gates;
};

// Simulates and records at once: the writer is opened first, so a file that cannot take the run
// is refused before any simulating, and the rows that need no simulated time are written while
// the simulation runs.
std::pair<sim::SimulationResult, std::int64_t> simulate_into(
    const SimulateOptions& options, const Experiment& experiment, const Schedule& lowered,
    const sim::CostModel& costs, const recorder::StateRecorder& recording) {
    traces::TraceWriter writer(options.out);
    traces::RunRecord run;
    run.schedule = lowered.name;
    run.pp = experiment.shape.rank_count;
    run.v = experiment.shape.stages_per_rank;
    run.m = experiment.shape.microbatch_count;
    run.config = experiment_to_toml(experiment);
    ProgressBar progress("writing " + options.out, 0);
    sim::RecordedSimulation recorded = sim::simulate_and_record(
        writer, lowered, costs, run,
        [&](std::size_t done, std::size_t total) { progress.update(done, total); }, &recording);
    progress.finish();
    return {std::move(recorded.result), recorded.run_id};
}

// The highest rank's peak; unknown when no rank holds memory (a cost model without sizes).
GateFigures gate_figures(const std::string& subject, const sim::SimulationResult& result) {
    GateFigures figures{subject, result.step_time_ns, result.bubble_ratio, std::nullopt, -1};
    for (const sim::RankResult& rank : result.ranks)
        if (rank.peak_memory_bytes > 0 &&
            (!figures.peak_memory_bytes || rank.peak_memory_bytes > *figures.peak_memory_bytes)) {
            figures.peak_memory_bytes = rank.peak_memory_bytes;
            figures.peak_memory_rank = rank.rank;
        }
    return figures;
}

RunFigures figures_of(const sim::SimulationResult& result) {
    RunFigures figures;
    figures.step_time_ns = result.step_time_ns;
    figures.bubble_ratio = result.bubble_ratio;
    for (const sim::RankResult& rank : result.ranks)
        figures.ranks.push_back(sim::rank_record(rank));
    return figures;
}

void run_simulate(const SimulateOptions& options) {
    const GateLimits limits = gate_limits(options.gates);  // a bad limit stops before any work
    Experiment experiment = load_experiment(options.experiment);
    // The simulation runs on what the recorded state holds, so a replay rebuilds exactly what
    // was simulated.
    recorder::StateRecorder recording(-1, "sim");
    const std::shared_ptr<const Schedule> schedule =
        record_experiment_schedule(recording, experiment);
    const Schedule& lowered = *schedule;
    recording.configure_transport({"simulated", lowered.rank_count, 0, "none"});
    sim::record_cost_model(recording, sim::cost_model_for(experiment, lowered.stage_count));
    recording.plan_buffers();
    const sim::CostModel costs = sim::cost_model_from_state(recording.state());
    sim::SimulationResult result;
    std::optional<std::int64_t> run_id;
    if (options.out.empty())
        result = sim::simulate(lowered, costs);
    else
        std::tie(result, run_id) = simulate_into(options, experiment, lowered, costs, recording);
    const RunFigures figures = figures_of(result);
    const std::string subject =
        fmt::format("{} pp={} v={} m={}", lowered.name, experiment.shape.rank_count,
                    experiment.shape.stages_per_rank, experiment.shape.microbatch_count);
    if (options.json) {
        fmt::print("{}\n", run_figures_json(figures, run_id).dump());
    } else {
        const std::string title =
            subject + (experiment.name.empty() ? "" : fmt::format(" ({})", experiment.name));
        fmt::print("{}", format_run_figures(title, figures));
        if (run_id)
            fmt::print("recorded as run {} in {}\n", *run_id, options.out);
    }
    // After the figures and the recorded run: a failed gate loses nothing.
    if (limits.any() || !options.gates.junit.empty()) {
        const GateFigures gated = gate_figures(subject, result);
        enforce_gates(options.gates, "pipelens simulate", {{gated, check_gates(limits, gated)}});
    }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
    auto options = std::make_shared<SimulateOptions>();
    CLI::App* command = app.add_subcommand(
        "simulate", "Simulate a schedule under a cost model; print bubbles and memory per rank");
    add_experiment_options(*command, options->experiment);
    command->add_option("--out", options->out, "Trace file (SQLite) to record the run in");
    command->add_flag("--json", options->json, "Print one JSON object instead of a table");
    add_gate_options(*command, options->gates);
    command->callback([options] { run_simulate(*options); });
}

}  // namespace pipelens::cli
