// How a run ended: the one reading of it that every surface shows (`run`, `summary`, `import`,
// `export`, `bisect`, the viewer). A run has a step time only when it finished; a failed run
// has none, and is described instead by where it failed: the root cause among its errors
// (traces/root_cause.hpp), with its rank, stage and action.
//
// Invariants: a finished run's outcome has no first error (a finished run's errors, such as an
// accuracy mismatch, are checks on its results, not why it stopped: its findings); a failed run's
// first error is the root cause of the errors recorded for it, or none when nothing was recorded
// (then `failure`, the runs table's text, is all there is to say). Figures measured against the
// step (step time, bubble ratios, cool-down) are shown only where step_figures_apply() is true.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "traces/trace_records.hpp"

namespace pipelens::traces {

class TraceReader;

struct RunOutcome {
    RunStatus status = RunStatus::finished;
    std::optional<ErrorRecord> first_error;  // failed runs: the root cause
    std::string failure;                     // failed runs: the recorded reason (runs.failure)
    // When the root cause is a timeout: the computation that was running longest on another
    // rank when the run stopped (a stopped error with the action's start), which is most likely
    // what the timed-out rank was waiting for: a stuck or very slow rank.
    std::optional<ErrorRecord> longest_interrupted;
    // Finished runs: the checks on its results that failed (an accuracy or reference mismatch),
    // in the order recorded. The step's figures stand; the numbers computed do not.
    std::vector<ErrorRecord> findings;
    // Finished runs recorded without computation (a flight recorder's dumps): why there is no
    // step, which outcome_text says in place of the step's figures. Empty for others.
    std::string no_step;
};

// From a run's status and every error recorded for it (in any order).
RunOutcome run_outcome(RunStatus status, std::vector<ErrorRecord> errors,
                       std::string recorded_failure = {});
RunOutcome run_outcome(const RunRecord& run, std::vector<ErrorRecord> errors);
RunOutcome read_run_outcome(const TraceReader& reader, const RunRecord& run);

// Whether the run has a step: a step time, and bubbles and cool-downs measured against it.
inline bool step_figures_apply(const RunOutcome& outcome) {
    return outcome.status == RunStatus::finished && outcome.no_step.empty();
}

// Whether the runs table's step time and bubble ratio of `run` are a step's: it finished, with
// computation recorded (a flight recorder's run stores its dumps' span there, not a step).
bool run_has_step(const RunRecord& run);

// Where a failed run failed, as far as its first error says: "rank 1, stage 1, action 1F0";
// empty when the error names none of them.
std::string failure_place(const ErrorRecord& error);

// What to print in place of the step's figures for a run without a step:
//   "failed at rank 1, stage 1, action 1F0: Stage 1 forward outputs[0] has a dtype mismatch..."
//   "failed at rank 2, stage 2, action 2RECV_F0: rank 2 timed out waiting for 2RECV_F0: ...;
//    rank 1 had been in 1F0 for 2.001 s when it was stopped"   (a timeout, longest_interrupted)
//   "failed: <recorded reason>"                   (no error row says where)
//   "unfinished: no step time (the run was never marked finished or failed)"
//   "no step: a flight recorder's dumps hold collectives and transfers, no computation"
// Empty for a finished run with a step.
std::string outcome_text(const RunOutcome& outcome);

// A finished run's failed checks, a line each: "check failed: <message>\n"; empty otherwise.
std::string findings_text(const RunOutcome& outcome);

}  // namespace pipelens::traces
