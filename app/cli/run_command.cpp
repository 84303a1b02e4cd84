// `pipelens run`: one real training step of a schedule on LibTorch ranks, compared with the same
// model run whole on one rank, printed and recorded as a `real` run. `--nproc N` launches N rank
// processes (torchrun's environment); `--rank/--world-size/--master` (or RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT) joins ranks started by hand.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/model_options.hpp"
#include "app/cli/rank_launcher.hpp"
#include "app/cli/real_run_report.hpp"
#include "app/cli/rendezvous_port.hpp"
#include "app/cli/report_directory.hpp"
#include "app/cli/run_report.hpp"
#include "app/cli/stop_signal_watch.hpp"
#include "app/cli/torch_profile_option.hpp"
#include "app/cli/validators.hpp"
#include "engine/analysis/stragglers.hpp"
#include "engine/experiment/units.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "engine/run_record/faults.hpp"
#include "engine/run_record/rank_files.hpp"
#include "engine/run_record/run_dtype.hpp"
#include "engine/run_record/run_trace.hpp"
#include "engine/run_record/thread_budget.hpp"
#include "engine/runtime/blas_library.hpp"
#include "engine/runtime/device_placement.hpp"
#include "engine/runtime/pipeline_run.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/stage_plan/device_choice.hpp"
#include "sim/zero_bubble_inputs.hpp"
#include "traces/text/quantities.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::cli {
namespace {

struct RunOptions {
    ExperimentOptions experiment;
    ModelOptions model;
    std::optional<std::string> transport;
    std::optional<std::string> device;
    std::optional<std::string> dtype;
    std::optional<std::string> timeout;
    std::vector<std::string> faults;
    bool no_reference = false;
    bool check_accuracy = false;
    bool profile = false;
    // Recorded steps, after `warmup` unrecorded ones; the defaults cost what one step always
    // did (one warm-up, one recorded) so a test suite of many runs keeps its time.
    int steps = 1;
    int warmup = 1;
    std::vector<std::string> backends;
    int nproc = 0;
    std::optional<int> threads;
    std::optional<int> rank, world_size;
    std::optional<std::string> master;
    std::string out;
    double straggler_threshold = analysis::kDefaultStragglerThreshold;
    std::string rank_reports;   // set by the launcher: where rank processes leave their reports
    std::string torch_profile;  // a directory for each rank's LibTorch profile
    bool json = false;
    std::vector<std::string> original_arguments;
};

// A whole decimal integer in int's range, or none.
std::optional<int> whole_integer(const std::string& text) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// RANK, WORLD_SIZE, MASTER_PORT, ... as a launcher sets them; one that is set but no integer is
// a usage error naming it (it once read as 0: rank 0, port 0).
std::optional<int> environment_integer(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0')
        return std::nullopt;
    if (const std::optional<int> integer = whole_integer(value))
        return integer;
    throw ExperimentError(
        fmt::format("environment variable {}='{}' is not an integer", name, value));
}

struct MasterAddress {
    std::string host;
    int port = 0;
};

// --master HOST:PORT, both there and the port in 1..65535 (":29500" once waited out the
// timeout connecting to an empty host name, "HOST:abc" read as port 0).
MasterAddress parse_master(const std::string& text) {
    const auto colon = text.rfind(':');
    const std::optional<int> port =
        colon == std::string::npos ? std::nullopt : whole_integer(text.substr(colon + 1));
    if (colon == std::string::npos || colon == 0 || !port || *port < 1 || *port > 65535)
        throw ExperimentError(fmt::format(
            "--master '{}': expected HOST:PORT with a port from 1 to 65535, e.g. 10.0.0.1:29500",
            text));
    return {text.substr(0, colon), *port};
}

// A --device text the runtime would not understand, as a usage error before anything starts.
void check_device_text(const std::string& text) {
    try {
        runtime::parse_device_choice(text);
    } catch (const runtime::DeviceChoiceError& error) {
        throw ExperimentError(error.what());
    }
}

// A --dtype the runtime does not compute in, as a usage error before anything starts.
void check_dtype_text(const std::string& text) {
    if (const std::string problem = run_record::run_dtype_problem(text); !problem.empty())
        throw ExperimentError(problem);
}

// Every recorded action is held until the run is written, and rank 0 gathers every rank's: at
// least 512 bytes each (about 690 measured on 2026-11-28, `run --model empty --schedule
// Interleaved1F1B --pp 1 --v 2 --m 32 --steps 500|4000`, peak resident size), so a count that
// cannot fit is refused now rather than dying of std::bad_alloc after hours of steps.
void refuse_steps_too_large(const RunOptions& options, const Schedule& lowered) {
    constexpr double kBytesPerRecordedAction = 512;
    double per_step = 0;
    for (const auto& actions : lowered.ranks)
        per_step += static_cast<double>(actions.size());
    const double bytes = per_step * options.steps * kBytesPerRecordedAction;
    const std::int64_t available = available_memory_bytes();
    if (bytes <= static_cast<double>(available))
        return;
    throw CommandFailure(
        kExitTooLarge,
        fmt::format("pipelens: run: --steps {} records {:.3g} actions ({:.0f} a step), at least {} "
                    "held until the run is written, more than the {} this machine has available: "
                    "lower --steps",
                    options.steps, per_step * options.steps, per_step,
                    format_bytes(static_cast<std::int64_t>(std::min(bytes, 9e18))),
                    format_bytes(available)));
}

// --steps below 1 or --warmup below 0 as a usage error before anything starts.
void check_step_counts(const RunOptions& options) {
    if (options.steps < 1)
        throw ExperimentError(fmt::format(
            "--steps: {} is not a step count (at least 1 step is recorded)", options.steps));
    if (options.warmup < 0)
        throw ExperimentError(
            fmt::format("--warmup: {} is not a step count (0 or more)", options.warmup));
    // Every recorded action is kept in memory until the run is written, and message tags count
    // steps in an int: a bound far past any measurement keeps both finite.
    constexpr int kMostSteps = 1'000'000;
    if (options.steps > kMostSteps || options.warmup > kMostSteps)
        throw ExperimentError(fmt::format(
            "--steps {} --warmup {}: at most {} steps each (every recorded action is held in "
            "memory until the run is written; a few hundred steps give a stable median)",
            options.steps, options.warmup, kMostSteps));
    constexpr int kMostThreads = 1024;
    if (options.threads && *options.threads > kMostThreads)  // below 1: thread_budget.cpp
        throw ExperimentError(
            fmt::format("--threads: {} is more threads than a rank can use "
                        "(at most {}; the default shares this host's cores)",
                        *options.threads, kMostThreads));
}

void apply_overrides(const RunOptions& options, Experiment& experiment) {
    apply_model_options(options.model, experiment);
    if (options.transport) {
        try {
            check_transport_name(*options.transport);
        } catch (const ExperimentError& error) {
            throw ExperimentError(fmt::format("--transport: {}", error.what()));
        }
        experiment.run.transport = *options.transport;
    }
    // Gloo and NCCL move a message only once its receive is posted (gloo's tcp pair queues a
    // send until the peer's receive is pending): recorded with the run, so that a calibration
    // simulates its transfers the way they ran. Threads (local) hand a copy over at once.
    if (experiment.run.transport == "gloo" || experiment.run.transport == "nccl")
        experiment.rendezvous = true;
    if (options.timeout) {
        try {
            experiment.run.timeout_ns = parse_duration_ns(*options.timeout);
        } catch (const UnitParseError& error) {
            throw ExperimentError(fmt::format("--timeout: {}", error.what()));
        }
        // Every wait on another rank gets this long: none at all fails the first receive, and
        // waits are timed in whole milliseconds (500us was raised to 1 ms without a word).
        if (experiment.run.timeout_ns <= 0)
            throw ExperimentError(fmt::format(
                "--timeout: {} leaves no time to wait for another rank; give a positive "
                "duration, e.g. 10s",
                *options.timeout));
        if (experiment.run.timeout_ns < 1'000'000)
            throw ExperimentError(fmt::format(
                "--timeout: {} is under 1 ms, the finest a wait on another rank is timed (a bare "
                "number is microseconds); give e.g. 10s",
                *options.timeout));
    }
    // The same for an experiment file's [run] timeout, which only a run waits with.
    if (experiment.run.timeout_ns < 1'000'000)
        throw ExperimentError(
            fmt::format("{}: run.timeout: {} is under 1 ms, the finest a wait on another "
                        "rank is timed; give e.g. \"10s\"",
                        experiment.source, format_duration(experiment.run.timeout_ns)));
}

run_record::PipelineRunOptions runtime_options(const RunOptions& options,
                                               const Experiment& experiment) {
    run_record::PipelineRunOptions run = pipeline_options_for(experiment.model);
    run.faults = options.faults;
    run.timeout_ms = std::max<std::int64_t>(1, experiment.run.timeout_ns / 1'000'000);
    // A --timeout the user gave bounds joining the other ranks too; the default leaves them
    // at least the rendezvous' own 30 s.
    run.rendezvous_timeout_ms =
        options.timeout ? run.timeout_ms : std::max(run.timeout_ms, run.rendezvous_timeout_ms);
    run.check_reference = !options.no_reference;
    run.check_accuracy = options.check_accuracy;
    run.profile = options.profile;
    run.recorded_steps = options.steps;
    run.warmup_steps = options.warmup;
    run.backends = options.backends;
    run.transport = experiment.run.transport;
    // They were ignored: threads of one process are every rank at once.
    if (run.transport == "local" && (options.rank || options.world_size))
        throw ExperimentError(fmt::format(
            "{} names one process of a run, but {} runs every rank as a thread of this one: "
            "drop it, or give --transport gloo (or nccl) and start each rank",
            options.rank ? "--rank" : "--world-size",
            options.transport ? "--transport local" : "the default transport (local)"));
    run.zero_bubble = experiment.shape.zero_bubble;
    run.world_size = options.world_size.value_or(
        environment_integer("WORLD_SIZE").value_or(experiment.shape.rank_count));
    run.rank = options.rank.value_or(environment_integer("RANK").value_or(0));
    if (options.master) {
        const MasterAddress master = parse_master(*options.master);
        run.master_address = master.host;
        run.master_port = master.port;
    } else {
        if (const char* address = std::getenv("MASTER_ADDR"))
            run.master_address = address;
        run.master_port = environment_integer("MASTER_PORT").value_or(29500);
    }
    if (const auto local_rank = environment_integer("LOCAL_RANK"))
        run.local_rank = *local_rank;
    if (options.device) {
        check_device_text(*options.device);
        run.device = *options.device;
    }
    if (options.dtype) {
        check_dtype_text(*options.dtype);
        run.dtype = *options.dtype;
    }
    run.report_directory = options.rank_reports;
    run.torch_profile_directory = make_torch_profile_directory(options.torch_profile, run.transport,
                                                               experiment.shape.rank_count);
    // The ranks on this host share its cores: all of them as threads here, or the launcher's
    // processes (LOCAL_WORLD_SIZE, as torchrun sets it).
    const int local_ranks = run.transport == "local"
                                ? experiment.shape.rank_count
                                : environment_integer("LOCAL_WORLD_SIZE").value_or(1);
    try {
        const run_record::ThreadBudget budget =
            run_record::plan_threads(run_record::available_cores(), local_ranks, options.threads);
        run.intra_op_threads = budget.threads_per_rank;
        if (budget.oversubscribed() && run.rank == 0)
            fmt::print(stderr, "pipelens: warning: {}\n", budget.warning());
    } catch (const std::invalid_argument& error) {
        throw ExperimentError(error.what());
    }
    return run;
}

// A rank started by hand (no --nproc) waits for the others at the rendezvous: say so before
// the wait, with how to start them and how long it waits, so a forgotten --nproc is not a
// silent hang.
void say_who_we_wait_for(const run_record::PipelineRunOptions& run) {
    if (run.world_size <= 1)
        return;  // a world of one waits for nobody
    fmt::print(stderr,
               "pipelens run: rank {} of {} ({}) waits for the other ranks at {}:{}; start each "
               "with the same command and --rank R --world-size {} --master {}:{}, or give "
               "--nproc {} to start them all here; giving up after {}\n",
               run.rank, run.world_size, run.transport, run.master_address, run.master_port,
               run.world_size, run.master_address, run.master_port, run.world_size,
               format_duration(run.rendezvous_timeout_ms * 1'000'000));
    std::fflush(stderr);
}

// Removes a trace file and what a writer may leave beside it.
void remove_trace(const std::filesystem::path& path) {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"})
        std::filesystem::remove(path.string() + suffix, ignored);
}

// A completed run's stragglers, read back from its trace as `summary --stragglers` reads them
// (one implementation): from --out, else from a trace written for this and removed after.
std::optional<analysis::StragglerReport> run_stragglers(const RunOptions& options,
                                                        const Experiment& experiment,
                                                        const Schedule& lowered,
                                                        const run_record::PipelineRunResult& result,
                                                        std::optional<std::int64_t> run_id) {
    if (!result.completed)
        return std::nullopt;
    if (run_id) {
        const traces::TraceReader reader(options.out);
        return analysis::read_stragglers(reader, reader.run(*run_id), options.straggler_threshold);
    }
    const std::filesystem::path scratch =
        std::filesystem::temp_directory_path() /
        fmt::format("pipelens-run-{}-{}.db", ::getpid(),
                    std::chrono::steady_clock::now().time_since_epoch().count());
    try {
        std::int64_t id = 0;
        {
            traces::TraceWriter writer(scratch);
            id = run_record::record_real_run(writer, lowered, result, experiment);
        }
        const traces::TraceReader reader(scratch);
        analysis::StragglerReport report =
            analysis::read_stragglers(reader, reader.run(id), options.straggler_threshold);
        remove_trace(scratch);
        return report;
    } catch (...) {
        remove_trace(scratch);
        throw;
    }
}

// A rank that ran out of memory makes the run too large for where it ran, not a failed check.
int failed_run_exit_code(const run_record::PipelineRunResult& result) {
    return run_record::ran_out_of_memory(result) ? kExitTooLarge : kExitCheckFailed;
}

// Prints, records (with --out) and judges a run's result, as rank 0 (or the launcher for it).
int report_run(const RunOptions& options, const Experiment& experiment, const Schedule& lowered,
               const run_record::PipelineRunOptions& run,
               const run_record::PipelineRunResult& result) {
    RunFigures figures;
    figures.step_time_ns = result.step_time_ns;
    figures.ranks = run_record::real_rank_records(lowered, result);
    figures.outcome = run_record::real_run_outcome(result);
    for (const traces::RankRecord& rank : figures.ranks)
        figures.bubble_ratio += rank.bubble_ratio / static_cast<double>(figures.ranks.size());
    const std::size_t whole = run_record::whole_steps(lowered, result);
    std::optional<std::int64_t> run_id;
    // A trace that cannot take the run (a full disk) is the error it ends with, after the
    // report of the steps that did run: those figures are not lost with the file.
    std::exception_ptr recording_failed;
    if (!options.out.empty()) {
        try {
            // The file was free when the run began (check_trace_destination); another writer
            // that took it since is waited for, so that the run is not lost to it.
            traces::TraceWriter writer(options.out,
                                       {.wait_for_other_writer = traces::kWaitAfterLongWork});
            run_id = run_record::record_real_run(writer, lowered, result, experiment);
        } catch (const std::exception&) {
            recording_failed = std::current_exception();
        }
    }
    const std::optional<std::string> device_note =
        runtime::shared_device_note(run.transport, result.device, lowered.rank_count);
    std::optional<analysis::StragglerReport> stragglers;
    try {
        if (!recording_failed)
            stragglers = run_stragglers(options, experiment, lowered, result, run_id);
    } catch (const std::exception& error) {
        // An analysis of the run, not the run: said, and the report goes on without it.
        fmt::print(stderr, "pipelens: run: the stragglers could not be read: {}\n", error.what());
    }
    if (options.json)
        fmt::print("{}\n", json_text(result_json(
                               result, run, {figures, run_id, device_note, stragglers, whole})));
    else
        print_text(
            result, run, {figures, run_id, device_note, stragglers, whole},
            fmt::format("{} pp={} v={} m={}, model {}, transport {} (real run, {}{}{})",
                        lowered.name, lowered.rank_count, lowered.stages_per_rank,
                        lowered.microbatch_count, experiment.model.name, run.transport,
                        result.device,
                        run.dtype == run_record::kDefaultRunDtype ? "" : ", " + run.dtype,
                        figures.outcome.status == traces::RunStatus::failed ? ", FAILED" : ""),
            options.out);
    if (recording_failed) {
        std::fflush(stdout);
        std::rethrow_exception(recording_failed);
    }
    const bool matched = (!result.reference.checked ||
                          (result.reference.outputs_match && result.reference.gradients_match)) &&
                         !result.accuracy.first_divergence;
    if (!result.completed)
        return failed_run_exit_code(result);
    return matched ? kExitOk : kExitCheckFailed;
}

// A run as its options describe it: the experiment with the flags applied, its lowered schedule
// and the runtime's options. Read the same way by the ranks, the launcher's checks and the
// launcher's record of a run whose rank 0 died.
struct PlannedRun {
    Experiment experiment;
    Schedule lowered;
    run_record::PipelineRunOptions run;
};

PlannedRun plan_run(const RunOptions& options) {
    PlannedRun planned;
    planned.experiment = load_experiment(options.experiment);
    apply_overrides(options, planned.experiment);
    sim::resolve_zero_bubble_inputs(planned.experiment);  // after the overrides: they change costs
    planned.lowered = lowered_schedule_for(planned.experiment);
    planned.run = runtime_options(options, planned.experiment);
    return planned;
}

int run_ranks_here(RunOptions& options) {
    end_with_launcher();
    const PlannedRun planned = plan_run(options);
    const Experiment& experiment = planned.experiment;
    const Schedule& lowered = planned.lowered;
    const run_record::PipelineRunOptions& run = planned.run;
    if (options.rank_reports.empty())  // a launcher's ranks: it has checked for all of them
        refuse_model_too_large("run", experiment, lowered,
                               run.transport == "local"
                                   ? lowered.rank_count
                                   : environment_integer("LOCAL_WORLD_SIZE").value_or(1),
                               run.check_reference);
    if (options.rank_reports.empty())
        refuse_steps_too_large(options, lowered);
    if (run.transport != "local" && options.rank_reports.empty())
        say_who_we_wait_for(run);
    if (run.transport == "local" || run.rank == 0)  // said once a run, before its wait
        if (const std::optional<std::string> note = runtime::reference_blas_note())
            fmt::print(stderr, "pipelens: note: {}\n", *note);
    run_record::PipelineRunResult result;
    try {
        // Ranks that are threads here stop with a word, as a launcher's do; a rank process
        // keeps the signals' defaults, its launcher speaking for it.
        std::optional<StopSignalWatch> watch;
        if (run.transport == "local")
            watch.emplace();
        result = runtime::run_pipeline(run, lowered);
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: run: {}", error.what()));
    }
    if (run.transport != "local" && run.rank != 0) {  // rank 0 reports for everyone
        // Started by hand, this rank's own terminal is where its user looks for why it ended.
        if (options.rank_reports.empty())
            for (const run_record::RankRun& rank : result.ranks)
                if (rank.failure)
                    fmt::print(stderr, "pipelens: rank {}: {}\n", rank.rank, rank.failure->message);
        return result.completed ? kExitOk : failed_run_exit_code(result);
    }
    return report_run(options, experiment, lowered, run, result);
}

// Rank 0 gathers every rank's report and records the run; when it died, the launcher does it
// from the reports the other ranks left, so the run is still recorded (failed, naming rank 0).
void report_for_dead_rank_zero(const RunOptions& options, const LaunchResult& launched,
                               const std::string& reports) {
    const PlannedRun planned = plan_run(options);
    std::vector<std::string> payloads(options.nproc);
    for (int rank = 0; rank < options.nproc; ++rank) {
        std::ifstream file(run_record::rank_report_file(reports, rank), std::ios::binary);
        std::ostringstream text;
        text << file.rdbuf();
        payloads[rank] = text.str();
    }
    report_run(
        options, planned.experiment, planned.lowered, planned.run,
        runtime::merge_rank_reports(payloads, launched.deaths, planned.run, planned.lowered));
}

// Every rank process would refuse a device this host cannot give them: say it once, here. The
// last rank's LOCAL_RANK is the one that needs the most GPUs when ranks take cuda:LOCAL_RANK.
void refuse_unusable_device(const RunOptions& options) {
    try {
        runtime::resolve_run_device(options.device.value_or(""), options.nproc - 1);
    } catch (const runtime::DeviceChoiceError& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: run: {}", error.what()));
    }
}

// --nproc starts every rank as a process: flags that say this process is one rank, or that
// the ranks are threads, contradict it. What every rank would refuse (a process count that is
// not the schedule's rank count, a fault naming a rank or stage the run does not have, a model
// whose copies cannot fit, a device it cannot have) is refused here, once for all the ranks,
// before any starts.
void refuse_launch_contradictions(const RunOptions& options) {
    if (options.rank || options.world_size)
        throw ExperimentError(fmt::format(
            "--nproc {} starts all the ranks, but {} says this process is one of them: give "
            "--nproc alone, or start each rank by hand with --rank/--world-size",
            options.nproc, options.rank ? "--rank" : "--world-size"));
    const PlannedRun planned = plan_run(options);
    if (planned.experiment.run.transport == "local")
        throw ExperimentError(fmt::format(
            "--nproc {} starts one process per rank, but {} runs the ranks as threads of one "
            "process: give --transport gloo (or nccl) with --nproc, or drop --nproc",
            options.nproc,
            options.transport ? "--transport local" : "the default transport (local)"));
    const Schedule& lowered = planned.lowered;
    refuse_model_too_large("run", planned.experiment, lowered, options.nproc,
                           !options.no_reference);
    refuse_steps_too_large(options, lowered);
    refuse_unusable_device(options);
    try {
        if (options.nproc != lowered.rank_count)
            throw std::invalid_argument(
                fmt::format("--nproc {} starts {} processes, but the schedule has {} ranks (pp)",
                            options.nproc, options.nproc, lowered.rank_count));
        run_record::check_faults(planned.run.faults, planned.run.transport, lowered.rank_count,
                                 lowered.stage_count);
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: run: {}", error.what()));
    }
}

// How long the other ranks may take to stop on their own once one has failed: a rank ends its
// current wait (--timeout) and, as rank 0, gathers the reports (--timeout again); 30 s, the
// rendezvous's own limit, when no --timeout was given.
std::chrono::milliseconds stop_grace(const RunOptions& options) {
    constexpr std::chrono::milliseconds kLongest{30'000};
    if (!options.timeout)
        return kLongest;
    const auto timeout = std::chrono::milliseconds(parse_duration_ns(*options.timeout) / 1'000'000);
    return std::min(kLongest, 2 * timeout + std::chrono::milliseconds(2'000));
}

int launch(const RunOptions& options) {
    std::vector<std::string> arguments;
    for (std::size_t index = 0; index < options.original_arguments.size(); ++index) {
        const std::string& argument = options.original_arguments[index];
        if (argument == "--nproc") {
            ++index;
            continue;
        }
        if (argument.rfind("--nproc=", 0) == 0)
            continue;
        arguments.push_back(argument);
    }
    std::string address = "127.0.0.1";
    int port = 0;
    if (options.master) {
        const MasterAddress master = parse_master(*options.master);
        address = master.host;
        port = master.port;
    } else {
        port = rendezvous_port();
        arguments.push_back("--master");
        arguments.push_back(fmt::format("{}:{}", address, port));
    }
    const ReportDirectory reports;
    arguments.push_back("--rank-reports");
    arguments.push_back(reports.path());
    const LaunchResult launched =
        launch_ranks(arguments, options.nproc, address, port, stop_grace(options),
                     [&](int rank, const std::string& how) {
                         // Best effort: without the notice rank 0 waits for the report until its
                         // timeout.
                         try {
                             run_record::note_rank_ended(reports.path(), rank, how);
                         } catch (const std::exception& error) {
                             fmt::print(stderr, "pipelens run: {}\n", error.what());
                         }
                     });
    for (const std::string& problem : launched.problems)
        fmt::print(stderr, "pipelens run: {}\n", problem);
    if (launched.interrupted_by != 0) {
        const int signal = launched.interrupted_by;
        fmt::print(stderr,
                   "pipelens run: stopped by {}: every rank was asked to stop; the run is not "
                   "recorded\n",
                   stop_signal_name(signal));
        return launched.exit_code;
    }
    if (!launched.deaths.empty() && !launched.deaths[0].empty())
        report_for_dead_rank_zero(options, launched, reports.path());
    return launched.exit_code;
}

}  // namespace

void add_run_command(CLI::App& app, const std::vector<std::string>& arguments) {
    auto options = std::make_shared<RunOptions>();
    options->original_arguments = arguments;
    CLI::App* command = app.add_subcommand("run", kRunDescription);
    add_experiment_options(*command, options->experiment, /*with_costs=*/false);
    add_model_options(*command, options->model);
    command->add_option("--transport", options->transport, "local, gloo or nccl");
    command->add_option("--device", options->device,
                        "Where the ranks compute: cpu, cuda (each process's LOCAL_RANK GPU) or "
                        "cuda:N (default: cuda where this build has CUDA and a GPU is seen, else "
                        "cpu)");
    command->add_option("--dtype", options->dtype,
                        "What the model's parameters, the batch and the single-rank reference "
                        "compute in: float32 (default) or bfloat16; the reference check's "
                        "tolerance follows it");
    command->add_option("--timeout", options->timeout,
                        "Longest wait on another rank before it is an error (default 10s)");
    command->add_option("--fault", options->faults,
                        std::string("Inject a fault (repeatable): ") + run_record::fault_forms() +
                            "; die needs one process per rank");
    command->add_flag("--no-reference", options->no_reference,
                      "Skip the comparison with the single-rank run");
    command->add_option("--backend", options->backends,
                        "How stages run: NAME for every stage or stageN=NAME; eager, checked, "
                        "compile-error, runtime-error, accuracy-error (repeatable)");
    command->add_flag("--check-accuracy", options->check_accuracy,
                      "Compare every stage's outputs with the single-rank reference and name the "
                      "first stage and microbatch that diverge");
    command->add_flag("--profile", options->profile,
                      "After the step, time every stage and layer (F, I, W, B, OVERLAP_F_B), "
                      "their memory and the links, on all ranks at once, for `calibrate`");
    command->add_option("--steps", options->steps,
                        "Steps recorded one after another; the report gives their median time "
                        "and spread (default 1)");
    command->add_option("--warmup", options->warmup,
                        "Steps run first and not recorded (default 1)");
    command
        ->add_option("--straggler-threshold", options->straggler_threshold,
                     "Name a rank a straggler in a step when its computations take more than "
                     "this many times their reference (default 1.2)")
        ->check(positive_ratio());
    command->add_option("--nproc", options->nproc, "Start this many rank processes (gloo, nccl)")
        ->check(count_of("process"));
    command->add_option("--threads", options->threads,
                        "Intra-op threads per rank (default: this host's cores shared equally "
                        "by its ranks)");
    command->add_option("--rank", options->rank, "This process's rank (default: $RANK)");
    command->add_option("--world-size", options->world_size, "Ranks (default: $WORLD_SIZE)");
    command->add_option("--master", options->master,
                        "Rendezvous HOST:PORT (default: $MASTER_ADDR:$MASTER_PORT)");
    command->add_option("--out", options->out, "Trace file (SQLite) to record the run in");
    command
        ->add_option("--torch-profile", options->torch_profile,
                     "Write LibTorch's profile of each rank's recorded steps to "
                     "DIR/rank<R>.json (Chrome trace; each action marked PP:<action>, as "
                     "PyTorch's pipelining does; one process per rank)")
        ->type_name("DIR");
    command->add_option("--rank-reports", options->rank_reports)->group("");  // launcher's
    command->add_flag("--json", options->json, "Print one JSON object instead of text");
    command->callback([options] {
        int code = 0;
        check_step_counts(*options);
        if (options->device)
            check_device_text(*options->device);
        if (options->dtype)
            check_dtype_text(*options->dtype);
        if (options->nproc > 0)
            refuse_launch_contradictions(*options);
        // Before the work: a trace that cannot take the run fails now, not after every step.
        if (!options->out.empty() && options->rank_reports.empty() &&
            (options->nproc > 0 || options->rank.value_or(0) == 0))
            traces::check_trace_destination(options->out);
        if (options->nproc > 0)
            code = launch(*options);
        else
            code = run_ranks_here(*options);
        if (code != kExitOk)
            throw CommandFailure(code, "");
    });
}

}  // namespace pipelens::cli
