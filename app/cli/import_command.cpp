// `pipelens import FILES... --out TRACE.db [--format F] [--step K] [--schedule-csv OUT.csv]
// [--simulate]`: another tool's record of a pipeline run becomes a run in a pipelens trace (see
// engine/import/). Everything is read and checked before the trace is opened, so input that
// fails to import leaves no run behind (exit 2 with one line naming the file).
//
// With --simulate the imported run is calibrated (per-stage medians of its own actions and
// transfers, as `pipelens calibrate` does) and the same schedule simulated with those costs is
// recorded beside it: `pipelens view TRACE.db --compare` then shows where the real run lost
// time against its own ideal.
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/output_file.hpp"
#include "app/cli/run_report.hpp"
#include "engine/import/import_files.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"
#include "engine/text/text_file.hpp"
#include "sim/calibration.hpp"
#include "sim/experiment_simulation.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::cli {
namespace {

// clang-format reads "import::" at the start of a line as a C++20 module import.
namespace importer = pipelens::import;

struct ImportOptions {
    std::vector<std::string> files;
    std::string out;
    std::string format;
    std::optional<int> step;
    std::string schedule_csv;
    bool simulate = false;
};

importer::ImportFormat chosen_format(const ImportOptions& options) {
    if (!options.format.empty()) {
        if (const auto format = importer::format_from_name(options.format))
            return *format;
        throw CommandFailure(
            kExitUsage, fmt::format("pipelens import: --format {}: not one of {}", options.format,
                                    fmt::join(importer::format_names(), ", ")));
    }
    return importer::detect_common_format(options.files);
}

// Calibrates the imported run and records its simulation; returns the simulated run's id.
// `schedule_csv`: the run's compute-only schedule, for a schedule no kind generates.
std::int64_t record_simulated_twin(const ImportOptions& options, std::int64_t real_run_id,
                                   const std::string& schedule_csv) {
    Experiment experiment;
    {
        const traces::TraceReader reader(options.out);
        try {
            // Any timeline: PyTorch's schedule dumps are its unit-step simulations, which the
            // twin reproduces; it is a replay, not a calibration `calibrate` would report.
            experiment =
                sim::calibrate_from_trace(reader, real_run_id, schedule_csv, sim::Timelines::any)
                    .experiment;
        } catch (const std::invalid_argument& error) {
            throw CommandFailure(
                kExitUsage, fmt::format("pipelens import --simulate: run {} in {}: {}", real_run_id,
                                        options.out, error.what()));
        }
    }
    return *sim::simulate_experiment(experiment, options.out).run_id;
}

void print_run(const std::string& trace, std::int64_t run_id, const std::string& what) {
    const traces::TraceReader reader(trace);
    const traces::RunRecord run = reader.run(run_id);
    const RunFigures figures = recorded_run_figures(reader, run);
    fmt::print("{}", format_run_figures(fmt::format("run {} ({}): {} pp={} v={} m={}", run_id, what,
                                                    run.schedule, run.pp, run.v, run.m),
                                        figures));
}

// A reader's refusal says which format the file was read as, so a file taken for the wrong
// one shows it (and --format is the way out).
CommandFailure refusal(const importer::ImportError& error, importer::ImportFormat format) {
    return CommandFailure(kExitUsage, fmt::format("pipelens import: {} (read as {})", error.what(),
                                                  importer::format_name(format)));
}

// Flight-recorder dumps are not a timeline of pipeline actions but the last collectives of a
// job that may have hung: the report is printed. Exit 1 when they show a hang or a mismatch.
void report_flight_recorder(const ImportOptions& options, const importer::ImportResult& result) {
    const importer::FlightRecorderReport& report = *result.flight_recorder;
    fmt::print("imported {} flight-recorder dump(s) as run {} in {}\n{}\n", result.file_count,
               result.run_id, options.out, report.text());
    if (report.hang || report.mismatch)
        throw CommandFailure(kExitCheckFailed,
                             fmt::format("pipelens import: the dumps show {}",
                                         report.hang && report.mismatch ? "a hang and a mismatch"
                                         : report.hang                  ? "a hang"
                                                                        : "a mismatch"));
    // Findings no hang explains (a rank missing from a collective, a send or recv without its
    // partner) are problems too: they once came with exit 0 and no verdict.
    if (!report.findings.empty())
        throw CommandFailure(
            kExitCheckFailed,
            fmt::format("pipelens import: the dumps show {} finding{} (ranks that disagree on "
                        "what was posted)",
                        report.findings.size(), report.findings.size() == 1 ? "" : "s"));
}

void run_import(const ImportOptions& options) {
    importer::ImportFormat format{};
    try {
        format = chosen_format(options);
    } catch (const importer::ImportError& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens import: {}", error.what()));
    }
    std::vector<std::string> read_or_written = options.files;
    read_or_written.push_back(options.out);
    refuse_output_over(options.schedule_csv, "--schedule-csv", read_or_written);
    if (format == importer::ImportFormat::flight_recorder &&
        (options.simulate || !options.schedule_csv.empty() || options.step))
        throw CommandFailure(kExitUsage,
                             "pipelens import: --simulate, --schedule-csv and --step do "
                             "not apply to flight-recorder dumps (they hold no schedule)");
    importer::ImportResult result;
    try {
        result = importer::import_files(options.files, format, options.out,
                                        {options.step, options.schedule_csv});
    } catch (const importer::ImportError& error) {
        throw refusal(error, format);
    } catch (const TextFileError& error) {  // too large once decompressed, or no file
        throw CommandFailure(
            error.problem() == TextFileError::Problem::too_large ? kExitTooLarge : kExitUsage,
            fmt::format("pipelens import: {} (read as {})", error.what(),
                        importer::format_name(format)));
    }
    if (result.flight_recorder)
        return report_flight_recorder(options, result);
    const std::int64_t run_id = result.run_id;
    fmt::print("imported {} file(s) ({}) as run {} in {}\n", options.files.size(),
               importer::format_name(format), run_id, options.out);
    for (const std::string& note : result.notes)
        fmt::print("  note: {}\n", note);
    print_run(options.out, run_id, "imported");
    // What the ranks ran, read back, must be a schedule: a forward the trace lost, a stage on
    // two ranks, once came with exit 0 and a CSV that `check` refuses. The run stays recorded
    // (it is what the files hold); the problems are the verdict.
    if (const CheckReport& check = result.structure; !check.ok())
        throw CommandFailure(kExitCheckFailed,
                             fmt::format("pipelens import: the schedule the files show is not "
                                         "one a pipeline can run (run {} is recorded as read): {}",
                                         run_id, check.text()));
    if (options.simulate) {
        // A schedule no kind generates is simulated from its CSV, kept beside the trace.
        std::string csv;
        if (!result.generated_kind) {
            csv = !options.schedule_csv.empty()
                      ? options.schedule_csv
                      : fmt::format("{}.run{}.schedule.csv", options.out, run_id);
            if (options.schedule_csv.empty())
                write_schedule_csv(result.compute, csv);
            fmt::print("its schedule matches no generated kind: simulated from {}\n", csv);
        }
        const std::int64_t simulated = record_simulated_twin(options, run_id, csv);
        print_run(options.out, simulated, "simulated with costs fitted to it");
        fmt::print("compare them: pipelens view {} --run {} --compare {}\n", options.out, run_id,
                   simulated);
    }
}

}  // namespace

void add_import_command(CLI::App& app) {
    auto options = std::make_shared<ImportOptions>();
    CLI::App* command = app.add_subcommand(
        "import",
        "Read PyTorch profiler traces, pipelining dumps, flight-recorder dumps or Megatron "
        "timers into a trace");
    command->add_option("files", options->files, "One file per rank (or one dump)")
        ->required()
        ->check(CLI::ExistingFile)
        ->check(
            input_file("import",
                       {traces::FileKind::pytorch_profiler,
                        traces::FileKind::pipelining_chrometrace, traces::FileKind::schedule_csv,
                        traces::FileKind::flight_recorder, traces::FileKind::megatron_timers},
                       "a file pipelens imports (profiler or pipelining JSON, schedule CSV, "
                       "flight-recorder dump, Megatron timers)"));
    command->add_option("--out", options->out, "Trace file (SQLite) to record the run in")
        ->required();
    command->add_option(
        "--format", options->format,
        fmt::format("Force the format: {}", fmt::join(importer::format_names(), ", ")));
    command->add_option("--step", options->step,
                        "Profiler traces with several steps: which one (0 = first; default last)");
    command->add_option("--schedule-csv", options->schedule_csv,
                        "Also write the recovered schedule as a PyTorch CSV (for check/simulate)");
    command->add_flag("--simulate", options->simulate,
                      "Also record the same schedule simulated with costs fitted to the run");
    command->callback([options] { run_import(*options); });
}

}  // namespace pipelens::cli
