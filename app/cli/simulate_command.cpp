// `pipelens simulate`: experiment -> lowered schedule -> cost model -> simulation, printed as a
// table (or one JSON object) and, with --out, recorded as a run in a trace file.
#include <cstdio>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/ci_gates.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/progress_bar.hpp"
#include "app/cli/run_report.hpp"
#include "sim/experiment_simulation.hpp"
#include "sim/step_spread.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::cli {
namespace {

struct SimulateOptions {
    ExperimentOptions experiment;
    std::string out;
    bool json = false;
    GateOptions gates;
};

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
    figures.memory = result.memory_sizes_gradients ? traces::MemoryCounts::activations_and_gradients
                                                   : traces::MemoryCounts::activations;
    return figures;
}

// What [jitter] predicts a noisy machine measures: the median step over the draws and its spread.
nlohmann::ordered_json spread_json(const sim::StepSpread& spread) {
    return {{"draws", spread.draws},
            {"median_step_time_ns", spread.median_ns},
            {"p10_step_time_ns", spread.p10_ns},
            {"p90_step_time_ns", spread.p90_ns},
            {"min_step_time_ns", spread.min_ns},
            {"max_step_time_ns", spread.max_ns}};
}

std::string spread_text(const sim::StepSpread& spread, const JitterSpec& jitter) {
    return fmt::format(
        "with [jitter] ({} draws of each computation's time about its cost{}): median step {}, "
        "spread min/p10/p90/max {}/{}/{}/{}; the step above, {}, is the costs' own, without "
        "noise\n",
        spread.draws, jitter.step_quantiles.empty() ? "" : " and of each step's level",
        format_duration(spread.median_ns), format_duration(spread.min_ns),
        format_duration(spread.p10_ns), format_duration(spread.p90_ns),
        format_duration(spread.max_ns), format_duration(spread.noise_free_ns));
}

// The draws [jitter] asks for; nullopt without it. Too many draws is the experiment's fault.
std::optional<sim::StepSpread> step_spread(const Experiment& experiment,
                                           const sim::ExperimentSimulation& simulation) {
    if (!experiment.jitter)
        return std::nullopt;
    try {
        return sim::simulate_step_spread(*simulation.lowered, simulation.costs,
                                         sim::rules_for(simulation.costs), *experiment.jitter);
    } catch (const sim::JitterError& error) {
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens: {}: {}", experiment.source, error.what()));
    }
}

void run_simulate(const SimulateOptions& options) {
    const GateLimits limits = gate_limits(options.gates);  // a bad limit stops before any work
    // A file that also drives `pipelens sweep` is simulated as its base experiment, so one file
    // serves both jobs of a CI.
    ExperimentSweep loaded = load_experiment_sweep(options.experiment);
    if (!loaded.axes.empty())
        fmt::print(stderr,
                   "pipelens: note: {} sweeps {} key{} in its [sweep] table, which is for "
                   "pipelens sweep; this is its base experiment\n",
                   options.experiment.file, loaded.axes.size(), loaded.axes.size() == 1 ? "" : "s");
    Experiment experiment = std::move(loaded.experiment);
    sim::ExperimentSimulation simulation;
    if (options.out.empty()) {
        simulation = sim::simulate_experiment(experiment);
    } else {
        ProgressBar progress("writing " + options.out, 0);
        simulation = sim::simulate_experiment(
            experiment, options.out,
            [&](std::size_t done, std::size_t total) { progress.update(done, total); });
        progress.finish();
    }
    const sim::SimulationResult& result = simulation.result;
    const std::optional<std::int64_t>& run_id = simulation.run_id;
    const Schedule& lowered = *simulation.lowered;
    const RunFigures figures = figures_of(result);
    const std::optional<sim::StepSpread> spread = step_spread(experiment, simulation);
    const std::string subject =
        fmt::format("{} pp={} v={} m={}", lowered.name, experiment.shape.rank_count,
                    experiment.shape.stages_per_rank, experiment.shape.microbatch_count);
    if (options.json) {
        nlohmann::ordered_json json = run_figures_json(figures, run_id);
        // With draws, what a measured median step is compared with is their median.
        if (spread) {
            json["predicted_step_time_ns"] = spread->median_ns;
            json["jitter"] = spread_json(*spread);
        }
        fmt::print("{}\n", json_text(json));
    } else {
        const std::string title =
            subject + (experiment.name.empty() ? "" : fmt::format(" ({})", experiment.name));
        fmt::print("{}", format_run_figures(title, figures));
        if (spread)
            fmt::print("{}", spread_text(*spread, *experiment.jitter));
        if (const std::string note = cost_scope_note(experiment, lowered.stages_per_rank);
            !note.empty())
            fmt::print("note: {}\n", note);
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
    command->callback([options] {
        run_with_junit_report(options->gates, "pipelens simulate",
                              experiment_input_files(options->experiment),
                              {{"--out", options->out}}, [&] { run_simulate(*options); });
    });
}

}  // namespace pipelens::cli
