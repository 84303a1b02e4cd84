// TraceSession: the viewer's data model, without any GUI — the open trace (read through traces/
// only), its runs, the run shown and the one compared with it (matched step by step, action by
// action), that run's recorded events, errors and sharding decisions, and the recent files. The
// panels draw from it and keep their own UI state apart (see each panel's header), so it is
// tested without a window.
//
// Invariants: `model` and the rows belong to `run_id` of `reader`; `compared` (when set) to
// `compared_run_id`, and match.durations is indexed by `model`'s label ids. A failed open or
// load leaves what was shown before and sets `error` to the reader's message. Work on threads
// (the hold analysis, a live reload) reads `model` or its own connection, never the other's: a
// model replaced while its analysis runs lives on, with that analysis, in `retired_analyses`
// until the analysis ends; a reload is applied, or dropped, only on the thread that owns the
// session.
#pragma once

#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/viewer/recent_files.hpp"
#include "app/viewer/run_comparison.hpp"
#include "app/viewer/run_summary.hpp"
#include "app/viewer/step_match.hpp"
#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {

struct TraceSession {
    std::unique_ptr<traces::TraceReader> reader;
    std::vector<traces::RunRecord> runs;
    // Held by pointer so that a model replaced while its analysis runs can be handed, with that
    // analysis, to `retired_analyses` at the same address instead of being waited for.
    std::unique_ptr<TimelineModel> model;
    std::optional<TimelineModel> compared;  // ghost bars
    // Matched once per comparison, step by step (step_match.hpp): for each action of `model`
    // the duration of the compared action with its text in the matched step, the ghost bars on
    // every step, the compute actions whose durations differ, each step's busy time per rank.
    StepMatch match;
    // The comparison as `pipelens diff` splits it (run_comparison.hpp), found once per comparison.
    ComparisonSplit split;
    // The critical path and bubbles' "waited on" of `model`, and its stragglers, found on a
    // thread after the load (poll_analysis applies it once ready); replacing `model` retires it
    // (below). Then, when the step picker chooses a step, that step's alone, the same way.
    std::future<HoldAnalysis> pending_analysis;
    // Analyses of models already replaced, each with the model it reads, kept until it finishes
    // (its result unused) so that showing a new run never waits for the last one's analysis.
    struct RetiredAnalysis {
        std::unique_ptr<TimelineModel> model;
        std::future<HoldAnalysis> analysis;  // destroyed first: it waits, then the model goes
    };
    std::vector<RetiredAnalysis> retired_analyses;
    // The shown model's analysis, waiting for the retired ones to finish so that at most one
    // analysis takes a core at a time (a person dragging a value retires one per frame).
    struct DeferredAnalysis {
        std::string source;
        HoldRequest request;
    };
    std::optional<DeferredAnalysis> deferred_analysis;
    std::optional<int> wanted_step;  // the step the analysis should be of (nullopt: the run)
    // Above it a (rank, step) is a straggler (`pipelens summary --straggler-threshold`).
    double straggler_threshold = analysis::kDefaultStragglerThreshold;
    RunSummary summary;           // of `model`: the header strip and the Ranks panel
    RunSummary compared_summary;  // of `compared`, when set
    std::string summary_line, critical_path_line;
    std::string subject;  // a simulation's, "1F1B pp=4 v=1 m=8", ahead of its figures
    std::int64_t run_id = 0;
    std::int64_t compared_run_id = 0;
    std::string error;  // shown in the window; empty when all is well
    // SQLite's quick_check of the open file, run on a thread once the file is shown (reading
    // every row of a run does not meet every damaged page: a damaged b-tree can drop rows
    // without an error); `damage` is its finding, shown until another file opens.
    std::future<std::string> integrity;
    std::string damage;
    // Checks of files no longer shown, kept until they end (a future's destructor waits for its
    // thread: replacing one would hold the window up for the rest of the old file's check).
    std::vector<std::future<std::string>> retired_checks;

    std::vector<traces::EventRecord> events;
    std::vector<traces::ErrorRecord> errors;  // root cause first (traces/root_cause.hpp)
    std::vector<traces::ShardingRecord> sharding;
    // Each decision's strategies, parsed once per run rather than every frame (discarded when
    // the JSON is malformed).
    std::vector<nlohmann::json> sharding_strategies;

    RecentFiles recent_files;  // kept only when a person runs the viewer

    // Watching a trace that is still being written (poll_trace): the reader's data version
    // when the shown run was last loaded, when it was last asked, and whether the shown run is
    // still `running` and its file has grown since it was opened (the "live" marker). A reload
    // is read on a thread with its own connection, `model` shown meanwhile; `reload_version` is
    // the data version it was asked at.
    std::int64_t data_version = 0;
    double last_poll_s = -1;
    bool live = false;
    std::future<TimelineModel> pending_reload;
    std::int64_t reload_version = 0;
    // Reloads no longer wanted (another run or a simulation was shown meanwhile), still being
    // read: never waited for, let go once read (poll_trace).
    std::vector<std::future<TimelineModel>> dropped_reloads;
};

// How often poll_trace asks the file whether it changed: often enough to watch a step land,
// cheap enough for every frame (one PRAGMA on the reader's idle connection, no lock held).
inline constexpr double kTracePollSeconds = 0.5;

// Opens `path` and shows its latest run (or `run_id`); remembers it as a recent file. False,
// with `error` set, when it cannot be opened or the run cannot be shown.
bool open_trace(TraceSession& session, const std::filesystem::path& path,
                std::optional<std::int64_t> run_id = std::nullopt);
// Loads `run_id` of the open trace and its rows; false, with `error` set, when it fails.
bool show_run(TraceSession& session, std::int64_t run_id);
// Finds the shown model's critical path, bubble causes and stragglers (`request`, with the
// session's straggler threshold) on a thread; `source` names the run in the analysis's errors.
void start_analysis(TraceSession& session, std::string source, HoldRequest request);
// Makes `model` the shown one. An analysis still running on the one it replaces is retired with
// it rather than waited for; finished retired analyses are let go of here and on every poll.
void replace_model(TraceSession& session, std::unique_ptr<TimelineModel> model);
// Whether the shown model's analysis is running or waiting to start.
bool analysis_pending(const TraceSession& session);
// Forgets the open file's integrity check and its finding (another file, or a simulation, is
// shown): a check still running is retired, not waited for.
void forget_file_check(TraceSession& session);
// Applies the shown run's analysis once it is ready (true when it did), and the file's
// integrity check's finding (`damage`); finish_analysis waits for both
// (screenshots, tests, benchmarks).
bool poll_analysis(TraceSession& session);
void finish_analysis(TraceSession& session);
// Makes the critical path and bubble causes those of step `step` alone (nullopt: of the whole
// run): found on a thread once the run's own analysis is applied; back to the whole run at once.
void analyse_step(TraceSession& session, std::optional<int> step);
// What a fitted view of the shown run covers: from its earliest action (or 0) to its last action,
// a failed run's root cause, or the latest stop of an action interrupted in flight, whichever
// came last (those actions never ended, so no action reaches them).
TimeSpan fitted_span(const TraceSession& session);
// Reloads the shown run when another process has committed to the file since it was loaded,
// asking at most once per kTracePollSeconds of `now_s` (any monotonic clock in seconds): new
// actions and steps of a run still being written appear without reopening. The run is read on a
// thread, so a long run does not stop the window while it loads; a later call shows it. True
// when it showed a reload; a failed reload keeps what was shown and sets `error`.
bool poll_trace(TraceSession& session, double now_s);
// Waits for a reload poll_trace started and shows it (true when there was one): tests, scripts.
bool finish_reload(TraceSession& session);
// Gives up a reload in flight without waiting for it: what it reads is no longer what is shown.
void drop_reload(TraceSession& session);
// The header's figures, for run_summary.hpp's fit_figures: a simulation's subject, the run's
// summary_figures, then the critical path line; for a checked schedule that can hang (`hangs`)
// kHangsNoStep and kHangsNoPath stand in place of the step, bubble and path figures.
std::vector<std::string> header_figures(const TraceSession& session, bool hangs);
// The action with this text (e.g. "2F5") in training step `step` of the shown run (nullopt:
// its first copy, the one of step 0): what a search, --select or a click on a listed action
// selects. Nothing when the run has no such action; the first copy when the step lacks one.
std::optional<ActionLocation> find_action(const TraceSession& session, const std::string& label,
                                          std::optional<int> step);
// Where an action stands in the run, for its details: "index 5 in its rank's list" and, in a
// run of several steps, "training step 2, " before it (`actions.step` is the index, the same in
// every step).
std::string action_step_text(const TraceSession& session, const ActionLocation& at);
// Compares the shown run with `run_id` (0, or the shown run: no comparison).
void compare_with(TraceSession& session, std::int64_t run_id);
// The sidebar's comparison line: over every step (nullopt) run_summary.hpp's
// step_comparison_text of the runs' own step times; for a picked step, that step against its
// match (step_match.hpp's step_delta_text). Empty without a comparison.
std::string comparison_line(const TraceSession& session, std::optional<int> step = std::nullopt);
// The comparison's split for the step picker's choice (run_comparison.hpp's split_lines); empty
// without a comparison.
std::vector<std::string> split_lines(const TraceSession& session, std::optional<int> step);

}  // namespace pipelens::viewer
