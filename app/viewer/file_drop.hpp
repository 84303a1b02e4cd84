// What the viewer does with a file dropped on it (or typed in the path box), GUI-free: it is
// routed by what its bytes say it is (traces/file_kind) and handled by the same library calls as
// the command that takes that file:
//   - a pipelens trace opens as it is;
//   - a schedule (PyTorch CSV) is checked as `pipelens check` checks it (engine/schedule's
//     check_schedule); one that can hang is imported as `pipelens import` reads a schedule dump
//     (its actions at unit steps) so that the stuck actions and the wait cycle can be drawn on
//     it; one that cannot is simulated as `pipelens simulate --schedule-file` does;
//   - profiler traces, pipelining dumps, flight-recorder dumps and Megatron timers are imported
//     as `pipelens import` imports them (engine/import's import_files).
// A schedule or an import is recorded in a trace beside the first file, FILE.pipelens.db
// (derived_trace_path), replacing the one an earlier drop wrote; the work runs on a thread
// (start_drop), its stage readable from the UI thread while it runs.
//
// Invariants: a drop that fails leaves no partial trace at FILE.pipelens.db (it is written
// under another name and renamed once complete) and its error is the engine's message, which
// names the file and the line or byte; `hang` is set only for a schedule that can hang, and is
// HangReport as `pipelens check` prints it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/viewer/hang_marks.hpp"
#include "engine/schedule/dry_run.hpp"
#include "traces/file_kind.hpp"

namespace pipelens::viewer {

enum class DropRoute { open_trace, check_schedule, import_files, refuse };

DropRoute route_of(traces::FileKind kind);

// Why a file of `kind` is not opened (DropRoute::refuse): what it is, and what the viewer opens.
// The drop's dialog and a file named on the command line say it alike.
std::string refusal_text(const std::filesystem::path& file, traces::FileKind kind);

// "a.json, b.json": the files' names, without their folders, for messages.
std::string file_names(const std::vector<std::filesystem::path>& files);

// How far a drop has got, for the progress line; stored in a std::atomic<int>.
enum class DropStage : int { reading, checking, simulating, importing, recording, done };
std::string_view stage_text(DropStage stage);

struct DropOutcome {
    DropRoute route = DropRoute::refuse;
    std::vector<std::filesystem::path> files;
    std::filesystem::path trace;  // to open: the trace dropped, or where the work was recorded
    std::optional<std::int64_t> run_id;
    std::string error;  // empty when all went well: the engine's message, naming file and place
    std::optional<HangReport> hang;  // a schedule that can hang: who waits for whom
    std::string report;              // what was done, in the words of the command that does it
};

// FILE.pipelens.db beside `source`, or in the system's temporary folder under the same name
// when the file's folder cannot be written.
std::filesystem::path derived_trace_path(const std::filesystem::path& source);

// Does the work of a drop of `files` (all of one kind; the first decides the route), reporting
// its stage in `stage` when given. Never throws: a failure is `error`.
DropOutcome process_drop(const std::vector<std::filesystem::path>& files,
                         std::atomic<int>* stage = nullptr);

// A drop being worked on off the UI thread, and the hang of the schedule last checked (drawn
// while its trace is the one shown).
struct FileDrop {
    std::vector<std::filesystem::path> files;
    std::shared_ptr<std::atomic<int>> stage;
    std::future<DropOutcome> pending;
    std::optional<HangReport> hang;
    std::filesystem::path hang_trace;  // where that schedule's timeline was recorded
    std::optional<HangMarks> marks;    // `hang` located on that timeline (locate_hang)
    std::string report;                // the last drop's outcome, for the sidebar
    std::string dialog;                // an error to show until dismissed

    bool busy() const { return pending.valid(); }
};

// Starts process_drop on a thread; false (nothing started) while another drop is still busy.
bool start_drop(FileDrop& drop, std::vector<std::filesystem::path> files);
// The finished drop's outcome once it is ready (nullopt while busy or when none is pending);
// `wait` blocks until it is.
std::optional<DropOutcome> take_finished_drop(FileDrop& drop, bool wait = false);
// Keeps what a finished drop leaves to show: its hang (for `outcome.trace`), its report, and
// its error as the dialog.
void remember_outcome(FileDrop& drop, const DropOutcome& outcome);
// Locates the kept hang on `model`, the timeline of its trace once opened (else forgets marks).
void locate_hang(FileDrop& drop, const std::filesystem::path& shown, const TimelineModel& model);
// The hang to draw over `shown` (the open trace's path): the last checked schedule's, while its
// trace is the one shown.
const HangMarks* marks_for(const FileDrop& drop, const std::filesystem::path& shown);

}  // namespace pipelens::viewer
