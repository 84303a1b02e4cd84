// `pipelens sweep`: a grid of configurations (an experiment and the axes it varies) simulated
// on every core, ranked, printed, written as JSON and CSV, drawn, the best recorded into a trace,
// and checked against CI gates. `--shard I/N` runs one part of the grid; `pipelens merge`
// (merge_command.cpp) joins the parts.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/cli/ci_gates.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/progress_bar.hpp"
#include "app/cli/sweep_outputs.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "engine/run_record/parallel_for.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "sim/experiment_simulation.hpp"
#include "traces/text/quantities.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::cli {
namespace {

struct SweepOptions {
    ExperimentOptions experiment;
    std::vector<std::string> axes;  // --sweep KEY=VALUES
    std::optional<int> threads;
    std::string shard = "1/1";
    std::optional<std::string> out;  // trace to record the best configurations in
    std::optional<int> record;
    std::optional<int> global_batch;  // sequences per step, cut into m microbatches
    SweepOutputOptions outputs;
    GateOptions gates;
};

// Each swept kind sets v to its own (as --schedule does), so a --v typed beside a kind axis would
// be dropped without a word: it is refused instead, as a flag that contradicts an axis is.
void refuse_v_the_kind_axis_resets(const SweepOptions& options,
                                   const std::vector<SweepAxis>& axes) {
    const auto swept = [&](const char* key) {
        return std::any_of(axes.begin(), axes.end(),
                           [&](const SweepAxis& axis) { return axis.key == key; });
    };
    if (!options.experiment.v || !swept("schedule.kind") || swept("schedule.v"))
        return;
    throw CommandFailure(kExitUsage,
                         fmt::format("pipelens sweep: --v {} would be replaced by each swept "
                                     "kind's own v: give --sweep v={} in its place to keep it for "
                                     "every kind",
                                     *options.experiment.v, *options.experiment.v));
}

// The file's axes, then the flags' (a flag's key replaces the file's axis of that key).
SweepGrid sweep_grid(const SweepOptions& options) {
    ExperimentSweep sweep = load_experiment_sweep(options.experiment);
    std::vector<SweepAxis> axes;
    for (const SweepAxisText& axis : sweep.axes)
        axes.push_back(sweep_axis_from_file(axis));
    std::map<std::string, std::string> flag_axes;  // key -> the --sweep that sweeps it
    for (const std::string& flag : options.axes) {
        SweepAxis axis = parse_sweep_flag(flag);
        // A flag replaces the file's axis of the same key; a second flag for it is a mistake
        // (the last one silently won).
        if (const auto [earlier, fresh] = flag_axes.emplace(axis.key, axis.where); !fresh)
            throw CommandFailure(
                kExitUsage,
                fmt::format(
                    "pipelens sweep: {} and {} both sweep {}: give all its values in one --sweep",
                    earlier->second, axis.where, axis.key));
        const auto same_key = [&](const SweepAxis& other) { return other.key == axis.key; };
        axes.erase(std::remove_if(axes.begin(), axes.end(), same_key), axes.end());
        axes.push_back(std::move(axis));
    }
    for (const SweepAxis& axis : axes)
        if (const std::string flag = flag_setting(options.experiment, axis.key); !flag.empty())
            throw CommandFailure(kExitUsage,
                                 fmt::format("pipelens sweep: {} fixes {} while {} sweeps it: keep "
                                             "one (drop {} to sweep it, or "
                                             "the axis to fix it)",
                                             flag, axis.key, axis.where, flag));
    refuse_v_the_kind_axis_resets(options, axes);
    if (axes.empty())
        throw CommandFailure(kExitUsage,
                             "pipelens sweep: nothing to sweep: give --sweep KEY=VALUES (such as "
                             "--sweep pp=2,4,8) or a [sweep] table in the experiment file");
    // A kind axis replaces the experiment's schedule file; the pipeline keeps the file's shape.
    if (std::any_of(axes.begin(), axes.end(),
                    [](const SweepAxis& axis) { return axis.key == "schedule.kind"; }))
        settle_schedule_file_shape(sweep.experiment);
    return SweepGrid(std::move(sweep.experiment), std::move(axes));
}

// The `count` best configurations recorded as runs, each named after its place and values.
void record_best(const SweepGrid& grid, const sim::SweepResults& results, const std::string& out,
                 std::size_t count) {
    // A shard's places are its own, not the merged grid's: its runs say which shard ranked them.
    const std::string ranking =
        results.shard.count > 1
            ? fmt::format("shard {}/{} place", results.shard.index, results.shard.count)
            : "place";
    std::vector<std::int64_t> run_ids;
    ProgressBar progress("recording into " + out, std::min(count, results.points.size()), "runs");
    for (const sim::SweepPoint& point : results.points) {
        if (!point.simulated() || run_ids.size() == count)
            break;
        Experiment experiment = sim::sweep_configuration(grid, point.index, results.global_batch);
        experiment.name = fmt::format("sweep {} {}: {}", ranking, point.place,
                                      sim::sweep_point_subject(results, point));
        // The file was free before the grid ran (check_trace_destination); a writer that took it
        // since, another shard recording into the same file, is waited for.
        run_ids.push_back(
            *sim::simulate_experiment(experiment, out, {},
                                      {.wait_for_other_writer = traces::kWaitAfterLongWork})
                 .run_id);
        progress.update(run_ids.size());
    }
    progress.finish();
    if (!run_ids.empty())
        fmt::print(stderr, "recorded the {} best as run{} {} in {}\n", run_ids.size(),
                   run_ids.size() == 1 ? "" : "s", fmt::join(run_ids, ", "), out);
}

// Said once, for the first simulated configuration whose flat per-stage costs make its model
// larger than v = 1's: rows of different v then compare different models.
std::string cost_scope_notes(const SweepGrid& grid, const sim::SweepResults& results) {
    for (const sim::SweepPoint& point : results.points) {
        if (!point.simulated() || point.v <= 1)  // no note at v = 1: skip rebuilding its experiment
            continue;
        const std::string note = cost_scope_note(grid.configuration(point.index), point.v);
        if (!note.empty())
            return "\nnote: " + note;
    }
    return {};
}

// A calibrated file's [jitter] predicts one configuration's median step with a thousand
// simulations; a grid ranks by each configuration's one.
std::string jitter_note(const SweepGrid& grid) {
    if (!grid.base().jitter)
        return {};
    return "\nnote: ranked by the step of the costs; [jitter]'s draws are not taken here "
           "(`pipelens "
           "simulate` the chosen configuration for its predicted median step and spread)";
}

// What the ranking compares, and why where it cannot compare whole steps.
std::string ranking_line(const sim::SweepBasis& basis) {
    if (basis.ranking == sim::SweepRanking::per_global_batch)
        return "\nranked by time per global batch (the step): the model and the global batch "
               "stay fixed across the grid";
    return fmt::format("\nranked by {} ({}), the grid not saying what stays fixed: {}",
                       sim::sweep_ranking_name(basis.ranking),
                       sim::sweep_ranking_figure(basis.ranking), basis.why);
}

// A grid whose results cannot be held is refused before it runs (a 10^7 grid once took 1.3 GB
// before its first configuration, and ran out of memory 38 s later). The bounds are lower
// bounds measured on 100,000 configurations: 21 MB held (about 210 bytes each), 180 MB with
// --json (the document is built whole before it is written).
void refuse_grid_too_large(std::size_t configurations, const SweepShard& shard,
                           const SweepOutputOptions& outputs) {
    const double per_configuration = outputs.json || outputs.csv ? 1800 : 210;
    const double needed = double(configurations) * per_configuration;
    const std::int64_t available = available_memory_bytes();
    if (needed <= double(available))
        return;
    throw CommandFailure(
        kExitTooLarge,
        fmt::format("pipelens sweep: {} configurations{} need at least {} to hold their "
                    "results{}, and {} is available: split the grid with --shard I/N (and join "
                    "the parts with pipelens merge)",
                    configurations,
                    shard.count > 1 ? fmt::format(" (shard {}/{})", shard.index, shard.count) : "",
                    format_bytes(static_cast<std::int64_t>(std::min(needed, 9e18))),
                    outputs.json || outputs.csv ? " and write them" : "", format_bytes(available)));
}

void run_sweep_command(const SweepOptions& options) {
    const GateLimits limits = gate_limits(options.gates);  // bad flags stop before any work
    const SweepShard shard = parse_sweep_shard(options.shard);
    check_sweep_outputs(options.outputs, "pipelens sweep");
    if (options.out)  // before the grid runs, not after
        traces::check_trace_destination(*options.out);
    const SweepGrid grid = sweep_grid(options);
    const int global_batch = options.global_batch ? *options.global_batch : 0;
    try {
        sim::refuse_axes_the_global_batch_sets(grid, global_batch);
    } catch (const ExperimentError& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens sweep: {}", error.what()));
    }
    const std::size_t total = shard.size_of(grid.size());
    refuse_grid_too_large(total, shard, options.outputs);
    const unsigned threads =
        run_record::worker_count(total, options.threads ? *options.threads : 0);
    const auto started = std::chrono::steady_clock::now();
    ProgressBar progress("simulating", total, "configurations");
    const sim::SweepBasis basis = sim::sweep_basis(grid, global_batch);
    std::vector<sim::SweepPoint> points = sim::run_sweep(
        grid, shard, threads,
        [&](std::size_t done, std::size_t all) { progress.update(done, all); }, global_batch);
    progress.finish();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    sim::SweepResults results{experiment_to_toml(grid.base()),
                              grid.axes(),
                              grid.size(),
                              shard,
                              std::move(points),
                              basis.ranking,
                              global_batch};
    std::vector<std::string> sizes;
    for (const SweepAxis& axis : grid.axes())
        sizes.push_back(fmt::format("{} {}", axis.values.size(), axis.key));
    const auto simulated =
        std::count_if(results.points.begin(), results.points.end(),
                      [](const sim::SweepPoint& point) { return point.simulated(); });
    const std::string heading = fmt::format(
        "sweep of {} configurations ({}){}: {} run in {:.2f} s on {} thread{} ({:.0f} "
        "configurations/s), {} simulated",
        grid.size(), fmt::join(sizes, " x "),
        shard.count > 1 ? fmt::format(", shard {}/{} of {}", shard.index, shard.count, total) : "",
        total, seconds, threads, threads == 1 ? "" : "s", total / std::max(seconds, 1e-9),
        simulated);
    write_sweep_outputs(
        results, options.outputs,
        heading + ranking_line(basis) + cost_scope_notes(grid, results) + jitter_note(grid));
    refuse_empty_ranking(results, "pipelens sweep");
    if (options.out)
        record_best(grid, results, *options.out, options.record ? *options.record : 10);
    enforce_sweep_gates(results, limits, options.gates, "pipelens sweep");
}

}  // namespace

void add_sweep_command(CLI::App& app) {
    auto options = std::make_shared<SweepOptions>();
    CLI::App* command = app.add_subcommand(
        "sweep",
        "Simulate a grid of schedules, shapes and costs on every core; rank, write and "
        "draw the results");
    add_experiment_options(*command, options->experiment);
    command
        ->add_option("--sweep", options->axes,
                     "An axis KEY=V1,V2,...: kind (or schedule), pp, v, m, max_activations, "
                     "defer_recv, rendezvous, or any experiment field as TABLE.KEY (costs.f, "
                     "network.bandwidth, transformer.hidden); another bare KEY is in [costs]; "
                     "[a,b] is a per-stage list. Repeat for more axes")
        ->type_name("KEY=VALUES");
    add_count_option(*command, "--threads", options->threads,
                     "Simulating threads (default: one per core)", 1);
    command->add_option("--shard", options->shard,
                        "Run part I of N of the grid (1 <= I <= N), as one task of a job array; "
                        "join the parts with pipelens merge");
    command->add_option("--out", options->out,
                        "Trace file (SQLite) to record the best configurations in");
    add_count_option(*command, "--record", options->record,
                     "How many of the best configurations --out records (default 10)", 1);
    add_count_option(*command, "--global-batch", options->global_batch,
                     "Sequences per step, held fixed: each of the m microbatches carries "
                     "global-batch / m of them (a [transformer]'s microbatch size; flat costs "
                     "are then one sequence's), so configurations rank by time per global batch",
                     1);
    add_sweep_output_options(*command, options->outputs);
    add_gate_options(*command, options->gates);
    command->callback([options] {
        run_with_junit_report(options->gates, "pipelens sweep",
                              experiment_input_files(options->experiment),
                              sweep_output_files(options->outputs, options->out),
                              [&] { run_sweep_command(*options); });
    });
}

}  // namespace pipelens::cli
