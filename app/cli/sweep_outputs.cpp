// Sweep outputs: each file written whole (to a temporary name, then renamed), so a reader never
// sees half a file and a failed write names the file.
#include "app/cli/sweep_outputs.hpp"
#include "app/cli/json_text.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/output_file.hpp"
#include "app/cli/sweep_chart.hpp"

namespace pipelens::cli {
namespace {

std::string chart_title(const sim::SweepResults& results) {
    std::size_t simulated = 0, front = 0;
    for (const sim::SweepPoint& point : results.points) {
        simulated += point.simulated() ? 1 : 0;
        front += point.pareto ? 1 : 0;
    }
    return fmt::format("pipelens sweep: {} of {} configurations simulated, {} on the Pareto front",
                       simulated, results.grid_size, front);
}

}  // namespace

void add_sweep_output_options(CLI::App& command, SweepOutputOptions& options) {
    command.add_option("--json", options.json,
                       "Write every configuration as JSON (what pipelens merge reads); - for "
                       "standard output");
    command.add_option("--csv", options.csv,
                       "Write every configuration as CSV; - for standard output");
    command.add_option("--png", options.png,
                       "Draw step time against peak memory (Pareto front) and bubble against m "
                       "as a PNG");
    command.add_option("--svg", options.svg, "The same picture as SVG");
    add_count_option(command, "--top", options.top, "Rows of the printed table (default 20)", 1);
}

std::vector<std::pair<std::string, std::string>> sweep_output_files(
    const SweepOutputOptions& options, const std::optional<std::string>& trace) {
    return {{"--json", options.json.value_or("")},
            {"--csv", options.csv.value_or("")},
            {"--png", options.png.value_or("")},
            {"--svg", options.svg.value_or("")},
            {"--out", trace.value_or("")}};
}

void check_sweep_outputs(const SweepOutputOptions& options, const std::string& command,
                         const std::vector<std::string>& inputs) {
    std::vector<std::pair<std::string, std::string>> files = sweep_output_files(options, {});
    files.pop_back();  // the trace is checked as one (check_trace_destination)
    refuse_outputs(files, inputs);
    if (options.json == "-" && options.csv == "-")
        throw CommandFailure(kExitUsage,
                             command + ": --json - and --csv - cannot both use standard output");
    for (const auto* path : {&options.png, &options.svg})
        if (*path == "-")
            throw CommandFailure(kExitUsage, command + ": pictures go to files, not -");
}

void refuse_empty_ranking(const sim::SweepResults& results, const std::string& command) {
    const auto simulated = [](const sim::SweepPoint& point) { return point.simulated(); };
    const auto too_large = [](const sim::SweepPoint& point) { return point.too_large; };
    const std::vector<sim::SweepPoint>& points = results.points;
    if (points.empty() || std::any_of(points.begin(), points.end(), simulated))
        return;
    if (results.shard.count > 1) {
        fmt::print(stderr,
                   "{}: none of shard {}/{}'s {} configurations could be simulated (why: above); "
                   "pipelens merge ranks the whole grid\n",
                   command, results.shard.index, results.shard.count, points.size());
        return;
    }
    const bool all_too_large = std::all_of(points.begin(), points.end(), too_large);
    throw CommandFailure(
        all_too_large ? kExitTooLarge : kExitUsage,
        fmt::format("{}: none of the {} configurations could be simulated{}", command,
                    points.size(),
                    all_too_large ? ": each is too large for this machine's memory (why: above)"
                                  : " (why: above)"));
}

void write_sweep_outputs(const sim::SweepResults& results, const SweepOutputOptions& options,
                         const std::string& heading) {
    const bool stdout_taken = options.json == "-" || options.csv == "-";
    const std::string table =
        heading + "\n" + sim::sweep_results_table(results, options.top ? *options.top : 20);
    if (stdout_taken)
        fmt::print(stderr, "{}", table);
    else
        fmt::print("{}", table);
    if (options.json)
        write_output_file(*options.json, json_text(sim::sweep_results_json(results), 1) + "\n");
    if (options.csv)
        write_output_file(*options.csv, sim::sweep_results_csv(results));
    if (options.png || options.svg) {
        const ChartScene scene = sweep_chart(results.points, chart_title(results), results.ranking);
        if (options.png)
            write_output_file(*options.png, chart_png(scene));
        if (options.svg)
            write_output_file(*options.svg, chart_svg(scene));
    }
}

void enforce_sweep_gates(const sim::SweepResults& results, const GateLimits& limits,
                         const GateOptions& options, const std::string& suite) {
    if (!limits.any() && options.junit.empty())
        return;
    std::vector<std::pair<GateFigures, std::vector<GateResult>>> checked;
    for (const sim::SweepPoint& point : results.points) {
        if (!point.simulated()) {
            // In the report as not checked, with the engine's reason: a gate that passes
            // because the configuration it was meant for never ran must not look like a pass.
            GateFigures figures{sim::sweep_point_subject(results, point), 0, 0, std::nullopt, -1};
            checked.emplace_back(
                std::move(figures),
                std::vector<GateResult>{{"simulated", false, point.error, /*skipped=*/true}});
            continue;
        }
        GateFigures figures{sim::sweep_point_subject(results, point), point.step_time_ns,
                            point.bubble_ratio, std::nullopt, -1};
        if (point.peak_memory_bytes > 0) {
            figures.peak_memory_bytes = point.peak_memory_bytes;
            figures.peak_memory_rank = point.peak_memory_rank;
        }
        std::vector<GateResult> gates = check_gates(limits, figures);
        checked.emplace_back(std::move(figures), std::move(gates));
    }
    enforce_gates(options, suite, checked);
}

}  // namespace pipelens::cli
