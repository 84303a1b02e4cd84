// The figures a person reads first about a run — step time, bubble share, peak memory, the
// busiest rank, where the critical path's time goes — and the per-rank table's rows, computed
// from the model with no GUI, so the header strip, the Ranks panel and tests share one source.
//
// Invariant: figures a run did not record are absent (std::nullopt), never shown as zero: a run
// without memory samples has no peak, not a peak of 0 B; a run that failed or never finished
// has no step (traces/run_outcome.hpp), so no step time or bubble, and says how it ended.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/viewer/run_steps.hpp"
#include "app/viewer/timeline_model.hpp"
#include "traces/run_outcome.hpp"

namespace pipelens::viewer {

struct RankRow {
    int rank = 0;
    std::int64_t busy_ns = 0;
    std::optional<std::int64_t> warmup_ns;  // none for a rank that computed nothing ("-")
    // None for a run that failed: its step never ended (`summary` prints "-").
    std::optional<std::int64_t> cooldown_ns;
    std::int64_t waiting_ns = 0;
    std::optional<std::int64_t> peak_memory_bytes;
    int waited_most_on = -1;  // the peer this rank waited on longest; -1 when none
};

struct RunSummary {
    traces::RunOutcome outcome;
    std::optional<std::int64_t> step_ns;  // a finished run's
    std::optional<double> bubble_ratio;
    std::optional<std::int64_t> peak_memory_bytes;
    int peak_memory_rank = -1;
    int busiest_rank = -1;  // the rank with the most compute: the one that bounds the step
    std::vector<RankRow> ranks;
    // The run's training steps as its actions show them (run_steps.hpp), also for a run still
    // being written; with several, the sidebar lists each one's step time and bubble.
    std::vector<RunStep> steps;
    // The last of `steps` is incomplete (run_steps.hpp): it has no figures. `writing`: the trace
    // is being written (the session's live marker), so it is in progress rather than cut off.
    bool last_step_incomplete = false;
    bool writing = false;
    // Each action's training step (run_steps.hpp's number_steps), by rank and lane.
    std::vector<RankActionSteps> action_steps;
    // Each rank's compute time within each step: [step][rank].
    std::vector<std::vector<std::int64_t>> step_busy_ns;
    // Ranks that waited for a core for a notable share of the step (traces/core_wait.hpp), with
    // that share: their times hold the scheduler's waits.
    std::vector<std::pair<int, double>> core_waits;
};

// `outcome`: how the model's run ended (traces::run_outcome of its record and errors).
RunSummary summarize(const TimelineModel& model, const traces::RunOutcome& outcome);

// The rank rows as the Ranks panel shows them: with a step picked, each rank's busy time is that
// step's; the other figures stay the trace's per-rank row (the median step's; peak: all steps').
std::vector<RankRow> rows_for_step(const RunSummary& summary, std::optional<int> step);

// Why a checked schedule that can hang has no step, bubble or critical-path figures: what it
// shows is the file's own order, which never ends, so no step does.
inline constexpr std::string_view kHangsNoStep =
    "no step or bubble: the schedule can hang, so no step ends";
inline constexpr std::string_view kHangsNoPath = "critical path: n/a (no step ends)";

// The figures, each whole: "step 57.0 us", "bubble 18.2%", "peak 3.1 MiB (rank 0)",
// "busiest rank 3", "3 steps" when the run has several, and "rank 1 waited for a core 31% of
// the step" for each rank whose wait is notable; a failed run's first is where it
// failed ("failed at rank 1, stage 1, action 1F0: <first error>") in place of step and bubble;
// a schedule that can hang (`hangs`) has kHangsNoStep there and no step count.
std::vector<std::string> summary_figures(const RunSummary& summary, bool hangs = false);
// summary_figures joined by "  |  ": "step 57.0 us  |  bubble 18.2%  |  peak ...".
std::string summary_text(const RunSummary& summary);
// Lays `figures` out on at most `lines` lines `width` pixels wide (text measured by `measure`),
// each line figures joined by "  |  ", no figure split between lines. Where they do not all fit,
// the first (a failure's message, the one long figure) is cut short with "..." until the rest
// do (a figure still too wide for a line is cut at its end).
std::vector<std::string> fit_figures(std::vector<std::string> figures, float width, int lines,
                                     const std::function<float(std::string_view)>& measure);
// A rank's shares under its name: "busy 82%  bubble 18%" of the run's recorded figures, or of
// `step` when one is picked; a run that did not finish has no step for a share or a bubble to
// be measured against: its busy time alone ("busy 1.2 ms"; "bubble -" beside it was cut at the
// lanes' edge), nor has a schedule that can hang (`hangs`: "no step: it hangs").
std::string rank_shares_text(const RankTimeline& rank, const RunSummary& summary,
                             bool hangs = false, std::optional<int> step = std::nullopt);
// A run in the runs list: "2 real pp=2 m=4  1F1B  57.0 us", "3 real pp=2 m=4  1F1B  FAILED",
// "4 sim pp=2 m=4  1F1B  unfinished" (a sharding-only run counts devices: "5 sim 8 devices");
// a checked schedule that can hang (`hangs`) ends in "HANGS", not a step time.
std::string run_list_text(const traces::RunRecord& run, bool hangs = false);
// The shown run's step against the compared one: "vs run 1: step +500 ns (+10.0%)", or why
// there is nothing to compare: "vs run 1: no step to compare: run 2 failed at rank 1, ...".
std::string step_comparison_text(std::int64_t shown_id, const RunSummary& shown,
                                 std::int64_t other_id, const RunSummary& other);
// "critical path: F 33% B 67%" (a share under 1% as "<1%"), or why there is none; of a step
// analysed alone, "critical path (step 1): ..."; of a run of `step_count` > 1 steps taken whole,
// "critical path (all 3 steps): ..." (`summary` gives the median step's).
std::string critical_path_text(const TimelineModel& model, std::size_t step_count);

}  // namespace pipelens::viewer
