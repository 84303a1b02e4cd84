// The commands that read a trace: `pipelens summary TRACE.db [--run N] [--json]
// [--critical-path] [--stragglers] [--straggler-threshold X]` lists the runs and their figures
// (and critical paths, stragglers), `pipelens export
// TRACE.db [--chrome OUT.json] [--svg OUT.svg] [--run N]` writes one run for Perfetto and/or as a
// timeline picture. Both open the trace read-only, so they work on a trace another process is
// writing.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/critical_path_report.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/output_file.hpp"
#include "app/cli/run_report.hpp"
#include "app/cli/validators.hpp"
#include "engine/analysis/stragglers.hpp"
#include "engine/analysis/training_steps.hpp"
#include "traces/chrome_export.hpp"
#include "traces/run_outcome.hpp"
#include "traces/svg_timeline.hpp"
#include "traces/text/quantities.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::cli {
namespace {

// The runs table's status: a finished run whose results failed a check (an accuracy or
// reference mismatch) is not shown as a plain "finished" run.
std::string_view status_text(traces::RunStatus status, bool check_failed = false) {
    if (status == traces::RunStatus::finished && check_failed)
        return "check failed";
    switch (status) {
        case traces::RunStatus::running:
            return "unfinished";
        case traces::RunStatus::finished:
            return "finished";
        case traces::RunStatus::failed:
            return "failed";
    }
    return "?";
}

std::string_view kind_text(traces::RunKind kind) {
    return kind == traces::RunKind::simulated ? "sim" : "real";
}

std::string started_text(std::int64_t started_at_ns) {
    const std::time_t seconds = static_cast<std::time_t>(started_at_ns / 1'000'000'000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &utc);
    return text;
}

bool check_failed(const RunFigures& figures) {
    return !figures.outcome.findings.empty();
}

std::string run_title(const traces::RunRecord& run, const RunFigures& figures) {
    return fmt::format("run {}: {} pp={} v={} m={} ({}, {})", run.id, run.schedule, run.pp, run.v,
                       run.m, kind_text(run.kind), status_text(run.status, check_failed(figures)));
}

struct SummaryOptions {
    std::string trace;
    std::optional<std::int64_t> run;
    bool json = false;
    bool critical_path = false;
    bool stragglers = false;  // also set by giving a threshold
    double straggler_threshold = analysis::kDefaultStragglerThreshold;
};

// The critical path summary shows: of the step the run's figures are (a run of several steps:
// the median one, whose time is the run's step time; its length is that step time, not the
// steps' sum). A failed run has no step that ended: its path is the chain up to where it
// stopped (a flight-recorder hang's ops up to the stuck one), said as such.
struct RunPath {
    analysis::TimedSchedule timed;
    analysis::CriticalPath path;
    std::size_t step = 0;
    std::size_t step_count = 1;
    bool failed = false;
};

RunPath critical_path_of(const traces::TraceReader& reader, const traces::RunRecord& record) {
    RunPath run{analysis::read_timed_schedule(reader, record.id), {}};
    run.failed = record.status == traces::RunStatus::failed;
    // A failed run's chain runs through its steps to where it stopped; a run with no step time
    // (still running), or none of whose steps took it, is taken whole as well.
    // (A run of one step, every simulation, is not copied into steps to find that out.)
    std::vector<analysis::TrainingStep> steps =
        run.failed || !record.step_time_ns || analysis::training_step_count(run.timed.schedule) == 1
            ? std::vector<analysis::TrainingStep>{}
            : analysis::training_steps(run.timed);
    std::vector<std::int64_t> step_times;
    for (const analysis::TrainingStep& step : steps)
        step_times.push_back(step.end_ns);
    const auto median = analysis::median_step(step_times, record.step_time_ns.value_or(0));
    if (steps.size() > 1 && median) {
        run.step_count = steps.size();
        run.step = *median;
        run.timed = std::move(steps[*median].timed);
    }
    run.path = analysis::critical_path(run.timed, analysis::HoldGraph(run.timed));
    return run;
}

std::string path_text(const RunPath& run) {
    const std::string which =
        run.failed ? "up to where the run stopped (it failed), "
        : run.step_count > 1
            ? fmt::format("of step {} (steps 0-{}), the median one: ", run.step, run.step_count - 1)
            : "";
    std::string text = format_critical_path(run.timed, run.path);
    if (!which.empty() && text.starts_with("critical path: "))
        text.insert(std::string_view("critical path: ").size(), which);
    return text;
}

nlohmann::ordered_json path_json(const RunPath& run) {
    nlohmann::ordered_json json = critical_path_json(run.timed, run.path);
    if (run.failed)
        json["run_failed"] = true;  // a chain up to where it stopped, not a step's path
    if (run.step_count > 1) {
        json["step"] = run.step;
        json["steps"] = run.step_count;
    }
    return json;
}

void print_run_list(const std::vector<traces::RunRecord>& runs,
                    const std::vector<bool>& checks_failed) {
    fmt::print("{:>4}  {:<4}  {:<12}  {:<22}  {:>5}  {:>3}  {:>5}  {:>12}  {:>7}  {}\n", "run",
               "kind", "status", "schedule", "pp", "v", "m", "step time", "bubble",
               "started (UTC)");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const traces::RunRecord& run = runs[i];
        const bool has_step = traces::run_has_step(run);
        fmt::print(
            "{:>4}  {:<4}  {:<12}  {:<22}  {:>5}  {:>3}  {:>5}  {:>12}  {:>7}  {}\n", run.id,
            kind_text(run.kind), status_text(run.status, checks_failed[i]), run.schedule, run.pp,
            run.v, run.m, has_step ? format_duration(*run.step_time_ns) : "-",
            has_step && run.bubble_ratio ? fmt::format("{:.1f}%", *run.bubble_ratio * 100) : "-",
            started_text(run.started_at_ns));
    }
}

void run_summary(const SummaryOptions& options) {
    const traces::TraceReader reader(options.trace);
    std::vector<traces::RunRecord> runs;
    if (options.run)
        runs.push_back(reader.run(*options.run));
    else
        runs = reader.runs();
    if (options.json) {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const traces::RunRecord& run : runs) {
            const RunFigures run_figures = recorded_run_figures(reader, run);
            nlohmann::ordered_json json = run_figures_json(run_figures, run.id);
            json["kind"] = kind_text(run.kind);
            json["status"] = status_text(run.status);
            json["schedule"] = run.schedule;
            json["pp"] = run.pp;
            json["v"] = run.v;
            json["m"] = run.m;
            json["actions"] = reader.action_count(run.id);
            if (options.critical_path)
                json["critical_path"] = path_json(critical_path_of(reader, run));
            if (options.stragglers)  // null for a run without a step, as `run --json` has it
                json["stragglers"] = traces::step_figures_apply(run_figures.outcome)
                                         ? stragglers_json(analysis::read_stragglers(
                                               reader, run, options.straggler_threshold))
                                         : nlohmann::ordered_json(nullptr);
            list.push_back(std::move(json));
        }
        fmt::print("{}\n",
                   json_text(nlohmann::ordered_json{{"trace", options.trace}, {"runs", list}}));
        return;
    }
    // Every run is read before anything is printed: a damaged run is refused with one line, not
    // after half a report.
    std::string figures;
    std::vector<bool> checks_failed;
    for (const traces::RunRecord& run : runs) {
        const RunFigures run_figures = recorded_run_figures(reader, run);
        checks_failed.push_back(check_failed(run_figures));
        figures += "\n" + format_run_figures(run_title(run, run_figures), run_figures);
        if (options.critical_path)
            figures += path_text(critical_path_of(reader, run));
        // A failed run's ranks stopped at different points: no step to measure them against (a
        // "relative throughput 1.000" from one rank's work would read as an even run).
        if (options.stragglers)
            figures +=
                traces::step_figures_apply(run_figures.outcome)
                    ? analysis::format_stragglers(
                          analysis::read_stragglers(reader, run, options.straggler_threshold))
                    : std::string("stragglers: n/a (no step to measure the ranks against)\n");
    }
    // With --run, one run of the file's: the header counts the file's, as without it.
    const auto in_file = options.run ? reader.run_count() : static_cast<std::int64_t>(runs.size());
    fmt::print("{}: {} run{}{}\n\n", options.trace, in_file, in_file == 1 ? "" : "s",
               options.run ? fmt::format(" (run {} shown)", *options.run) : std::string());
    if (runs.empty())
        return;
    print_run_list(runs, checks_failed);
    fmt::print("{}", figures);
}

struct ExportOptions {
    std::string trace;
    std::string chrome;
    std::string svg;
    std::optional<std::int64_t> run;
};

// Streamed from the run as it is read, written whole or not at all (output_file.hpp).
void export_chrome(const traces::TraceReader& reader, std::int64_t run_id,
                   const std::string& path) {
    traces::ChromeExportCounts counts;
    write_output_with(path, [&](std::FILE* stream) {
        try {
            counts = traces::write_chrome_trace(reader, run_id, stream);
            return 0;
        } catch (const traces::ChromeWriteError&) {
            return errno != 0 ? errno : EIO;
        }
    });
    fmt::print("wrote {}: run {}, {} actions, {} send/recv arrows, {} memory samples\n", path,
               run_id, counts.actions, counts.flows, counts.memory_samples);
    std::error_code error;
    const std::uintmax_t bytes = std::filesystem::file_size(path, error);
    if (const std::string note = traces::chrome_size_note(path, error ? 0 : bytes); !note.empty())
        fmt::print(stderr, "pipelens: export: {}\n", note);
}

void run_export(const ExportOptions& options) {
    if (options.chrome.empty() && options.svg.empty())
        throw CommandFailure(kExitUsage,
                             "pipelens: export: give --chrome OUT.json and/or --svg OUT.svg");
    refuse_outputs({{"--chrome", options.chrome}, {"--svg", options.svg}}, {options.trace});
    const traces::TraceReader reader(options.trace);
    const std::int64_t run_id = options.run.value_or(reader.latest_run_id());
    reader.run(run_id);  // an unknown run fails before any output file is created
    if (!options.chrome.empty())
        export_chrome(reader, run_id, options.chrome);
    if (!options.svg.empty()) {
        write_output_file(options.svg, traces::svg_timeline(reader, run_id));
        fmt::print("wrote {}: run {} timeline\n", options.svg, run_id);
    }
}

}  // namespace

void add_summary_command(CLI::App& app) {
    auto options = std::make_shared<SummaryOptions>();
    CLI::App* command = app.add_subcommand("summary", "List a trace's runs and their figures");
    add_trace_argument(*command, options->trace, "Trace file");
    command->add_option("--run", options->run, "Only this run")->check(int64_number());
    command->add_flag("--json", options->json, "Print JSON instead of tables");
    command->add_flag("--critical-path", options->critical_path,
                      "Also list each run's critical path: the chain of actions and transfers "
                      "that sets its step time, and its time by kind");
    command->add_flag("--stragglers", options->stragglers,
                      "Also list each run's stragglers: ranks computing slower than the others "
                      "(or than the run's calibration), per step, with their cost");
    command
        ->add_option("--straggler-threshold", options->straggler_threshold,
                     "Flag a rank whose computations take more than this many times their "
                     "reference (implies --stragglers)")
        ->check(positive_ratio())
        ->each([options](const std::string&) { options->stragglers = true; });
    command->callback([options] { run_summary(*options); });
}

void add_export_command(CLI::App& app) {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* command = app.add_subcommand(
        "export", "Export a run to another format (Chrome trace / Perfetto, SVG timeline)");
    add_trace_argument(*command, options->trace, "Trace file");
    command->add_option("--chrome", options->chrome, "Chrome trace JSON to write (for Perfetto)");
    command->add_option("--svg", options->svg, "Timeline picture (SVG) to write");
    command->add_option("--run", options->run, "Run to export (default: the latest)")
        ->check(int64_number());
    command->callback([options] { run_export(*options); });
}

}  // namespace pipelens::cli
