// A dropped file routed by its kind and handled by the commands' own library calls
// (file_drop.hpp).
#include "app/viewer/file_drop.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "engine/experiment/experiment.hpp"
#include "engine/import/import_files.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "engine/schedule/schedule_check.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "sim/experiment_simulation.hpp"

namespace pipelens::viewer {
namespace {

namespace fs = std::filesystem;
// clang-format reads "import::" at the start of a line as a C++20 module import.
namespace importer = pipelens::import;

void set_stage(std::atomic<int>* stage, DropStage value) {
    if (stage != nullptr)
        stage->store(static_cast<int>(value));
}

void remove_trace_files(const fs::path& trace) {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        fs::remove(trace.string() + suffix, ignored);
}

// Runs `record` on a fresh file beside `out` and moves it to `out` once it returned: a failure
// leaves neither a partial trace nor the previous one half-replaced.
template <typename Record>
auto record_replacing(const fs::path& out, Record record) {
    const fs::path partial = out.string() + ".partial";
    remove_trace_files(partial);
    try {
        auto result = record(partial);
        remove_trace_files(out);
        fs::rename(partial, out);
        return result;
    } catch (...) {
        remove_trace_files(partial);
        throw;
    }
}

// What `pipelens simulate --schedule-file FILE` simulates: the plain experiment's unit costs
// (F = I = W = 1 us, free links) on the file's schedule, its shape from the file.
std::int64_t simulate_schedule(const fs::path& csv, const fs::path& out) {
    Experiment experiment = plain_experiment();
    experiment.schedule_file = csv.string();
    experiment.shape.rank_count = 0;  // the file's rows decide
    settle_schedule_notation(experiment);
    return *sim::simulate_experiment(experiment, out).run_id;
}

void check_schedule_file(const fs::path& csv, DropOutcome& outcome, std::atomic<int>* stage) {
    const ScheduleCsvReading reading = read_schedule_csv_as(csv.string(), std::nullopt);
    const Schedule& schedule = reading.schedule;
    set_stage(stage, DropStage::checking);
    const ScheduleCheck check = check_schedule(schedule);
    if (!check.structure.ok()) {
        outcome.error = csv.string() + ": " + check.problem_text();
        return;
    }
    outcome.trace = derived_trace_path(csv);
    if (check.hang) {
        // Nothing can be simulated past the hang: its timeline is the file's own order, read
        // as `pipelens import` reads a schedule dump (one unit step per action).
        set_stage(stage, DropStage::importing);
        outcome.run_id = record_replacing(outcome.trace, [&](const fs::path& out) {
            return importer::import_files({csv.string()}, importer::ImportFormat::pipelining_csv,
                                          out.string())
                .run_id;
        });
        outcome.hang = check.hang;
        outcome.report = csv.string() + ": " + check.problem_text();
        return;
    }
    set_stage(stage, DropStage::simulating);
    outcome.run_id = record_replacing(
        outcome.trace, [&](const fs::path& out) { return simulate_schedule(csv, out); });
    outcome.report = fmt::format("{}: {}; simulated with F = I = W = 1 us as run {} in {}",
                                 csv.string(), ok_text(schedule, check, reading.notation),
                                 *outcome.run_id, outcome.trace.string());
}

void import_dropped(const std::vector<fs::path>& files, DropOutcome& outcome,
                    std::atomic<int>* stage) {
    std::vector<std::string> names;
    for (const fs::path& file : files)
        names.push_back(file.string());
    const importer::ImportFormat format = importer::detect_common_format(names);
    outcome.trace = derived_trace_path(files.front());
    try {
        const importer::ImportResult result =
            record_replacing(outcome.trace, [&](const fs::path& out) {
                return importer::import_files(
                    names, format, out.string(), {}, [&](importer::ImportStage reached) {
                        set_stage(stage, reached == importer::ImportStage::reading
                                             ? DropStage::importing
                                             : DropStage::recording);
                    });
            });
        outcome.run_id = result.run_id;
        outcome.report =
            fmt::format("imported {} file(s) ({}) as run {} in {}", result.file_count,
                        importer::format_name(format), result.run_id, outcome.trace.string());
    } catch (const importer::ImportError& error) {
        // As `pipelens import` says it: which format the file was read as.
        throw importer::ImportError(
            fmt::format("{} (read as {})", error.what(), importer::format_name(format)));
    }
}

}  // namespace

std::string refusal_text(const fs::path& file, traces::FileKind kind) {
    std::error_code error;
    if (!fs::exists(file, error))
        return file.string() + ": no such file";
    const std::string_view what = traces::file_kind_description(kind);
    // An empty file is no kind of anything: said so, as it is often a run that never wrote.
    const bool empty = fs::is_regular_file(file, error) && fs::file_size(file, error) == 0;
    return fmt::format(
        "{}: {}; the viewer opens a pipelens trace, a schedule (PyTorch CSV), PyTorch profiler "
        "traces, pipelining dumps, flight-recorder dumps or Megatron timers",
        file.string(),
        empty          ? "is empty (0 bytes)"
        : what.empty() ? "not a file pipelens reads"
                       : "is " + std::string(what));
}

std::string file_names(const std::vector<fs::path>& files) {
    std::string names;
    for (const fs::path& file : files)
        names += (names.empty() ? "" : ", ") + file.filename().string();
    return names;
}

DropRoute route_of(traces::FileKind kind) {
    switch (kind) {
        case traces::FileKind::sqlite:
            return DropRoute::open_trace;
        case traces::FileKind::schedule_csv:
            return DropRoute::check_schedule;
        case traces::FileKind::pytorch_profiler:
        case traces::FileKind::pipelining_chrometrace:
        case traces::FileKind::flight_recorder:
        case traces::FileKind::megatron_timers:
            return DropRoute::import_files;
        case traces::FileKind::unknown:
        case traces::FileKind::experiment_toml:
        case traces::FileKind::plan_toml:
            break;
    }
    return DropRoute::refuse;
}

std::string_view stage_text(DropStage stage) {
    switch (stage) {
        case DropStage::reading:
            return "reading";
        case DropStage::checking:
            return "checking the schedule";
        case DropStage::simulating:
            return "simulating";
        case DropStage::importing:
            return "reading the files";
        case DropStage::recording:
            return "recording the run";
        case DropStage::done:
            break;
    }
    return "done";
}

fs::path derived_trace_path(const fs::path& source) {
    const fs::path name = source.filename().string() + ".pipelens.db";
    fs::path folder = source.parent_path();
    if (folder.empty())
        folder = ".";
    if (::access(folder.c_str(), W_OK) == 0)
        return folder / name;
    return fs::temp_directory_path() / name;
}

DropOutcome process_drop(const std::vector<fs::path>& files, std::atomic<int>* stage) {
    DropOutcome outcome;
    outcome.files = files;
    set_stage(stage, DropStage::reading);
    if (files.empty()) {
        outcome.error = "nothing was dropped";
        return outcome;
    }
    const traces::FileKind kind = traces::file_kind_of(files.front().string());
    outcome.route = route_of(kind);
    // Only an import reads several files as one run; the others once opened the first alone
    // and said nothing of the rest.
    if (files.size() > 1 && outcome.route != DropRoute::import_files &&
        outcome.route != DropRoute::refuse) {
        outcome.error = fmt::format(
            "{} files were dropped ({}): {} is {}, which opens alone; drop one at a time",
            files.size(), file_names(files), files.front().string(),
            traces::file_kind_description(kind));
        set_stage(stage, DropStage::done);
        return outcome;
    }
    try {
        switch (outcome.route) {
            case DropRoute::open_trace:
                outcome.trace = files.front();
                break;
            case DropRoute::check_schedule:
                check_schedule_file(files.front(), outcome, stage);
                break;
            case DropRoute::import_files:
                import_dropped(files, outcome, stage);
                break;
            case DropRoute::refuse:
                outcome.error = refusal_text(files.front(), kind);
                break;
        }
    } catch (const std::exception& error) {
        outcome.error = error.what();
        outcome.run_id.reset();
        outcome.hang.reset();
    }
    set_stage(stage, DropStage::done);
    return outcome;
}

bool start_drop(FileDrop& drop, std::vector<fs::path> files) {
    if (drop.busy())
        return false;
    drop.files = files;
    drop.stage = std::make_shared<std::atomic<int>>(static_cast<int>(DropStage::reading));
    drop.pending = std::async(std::launch::async, [files = std::move(files), stage = drop.stage] {
        return process_drop(files, stage.get());
    });
    return true;
}

std::optional<DropOutcome> take_finished_drop(FileDrop& drop, bool wait) {
    if (!drop.pending.valid())
        return std::nullopt;
    if (!wait && drop.pending.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        return std::nullopt;
    return drop.pending.get();
}

void remember_outcome(FileDrop& drop, const DropOutcome& outcome) {
    drop.dialog = outcome.error;
    drop.report = outcome.error.empty() ? outcome.report : std::string();
    if (outcome.error.empty() && outcome.route == DropRoute::check_schedule) {
        drop.hang = outcome.hang;
        drop.hang_trace = outcome.trace;
        drop.marks.reset();
    }
}

namespace {

bool same_file(const fs::path& a, const fs::path& b) {
    std::error_code error;
    return !a.empty() && fs::equivalent(a, b, error);
}

}  // namespace

void locate_hang(FileDrop& drop, const fs::path& shown, const TimelineModel& model) {
    drop.marks.reset();
    if (drop.hang && same_file(drop.hang_trace, shown))
        drop.marks = hang_marks(model, *drop.hang);
}

const HangMarks* marks_for(const FileDrop& drop, const fs::path& shown) {
    return drop.marks && same_file(drop.hang_trace, shown) ? &*drop.marks : nullptr;
}

}  // namespace pipelens::viewer
