// A run's outcome (run_outcome.hpp): its status, and for a failed run the root cause of its
// errors and the words that say where it failed.
#include "traces/run_outcome.hpp"

#include <fmt/format.h>

#include "traces/root_cause.hpp"
#include "traces/text/quantities.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::traces {
namespace {

// A RECV or SEND in flight was itself waiting; a computation in flight is what others wait for.
bool is_transfer_text(const std::string& action) {
    return action.find("SEND_") != std::string::npos || action.find("RECV_") != std::string::npos;
}

std::optional<ErrorRecord> longest_interrupted_computation(const std::vector<ErrorRecord>& errors) {
    std::optional<ErrorRecord> longest;
    std::int64_t longest_ns = -1;
    for (const ErrorRecord& error : errors) {
        if (error.kind != "stopped" || !error.started_ns || !error.time_ns ||
            error.action.empty() || is_transfer_text(error.action))
            continue;
        const std::int64_t ran_ns = *error.time_ns - *error.started_ns;
        if (ran_ns > longest_ns) {
            longest = error;
            longest_ns = ran_ns;
        }
    }
    return longest;
}

}  // namespace

RunOutcome run_outcome(RunStatus status, std::vector<ErrorRecord> errors,
                       std::string recorded_failure) {
    RunOutcome outcome;
    outcome.status = status;
    if (status == RunStatus::finished)
        outcome.findings = std::move(errors);
    if (status != RunStatus::failed)
        return outcome;
    outcome.failure = std::move(recorded_failure);
    errors = root_cause_first(std::move(errors));
    if (errors.empty())
        return outcome;
    outcome.first_error = errors.front();
    if (consequence_level(errors.front().kind) == 1)
        outcome.longest_interrupted = longest_interrupted_computation(errors);
    return outcome;
}

RunOutcome run_outcome(const RunRecord& run, std::vector<ErrorRecord> errors) {
    RunOutcome outcome = run_outcome(run.status, std::move(errors), run.failure);
    if (run.status == RunStatus::finished && run.schedule == kFlightRecorderSchedule)
        outcome.no_step =
            "no step: a flight recorder's dumps hold collectives and transfers, no computation";
    return outcome;
}

bool run_has_step(const RunRecord& run) {
    return run.status == RunStatus::finished && run.schedule != kFlightRecorderSchedule &&
           run.step_time_ns.has_value();
}

RunOutcome read_run_outcome(const TraceReader& reader, const RunRecord& run) {
    return run_outcome(
        run, run.status == RunStatus::running ? std::vector<ErrorRecord>{} : reader.errors(run.id));
}

std::string findings_text(const RunOutcome& outcome) {
    std::string text;
    for (const ErrorRecord& finding : outcome.findings)
        text += fmt::format("check failed: {}\n", finding.message);
    return text;
}

std::string failure_place(const ErrorRecord& error) {
    std::string place;
    const auto add = [&](const std::string& part) { place += (place.empty() ? "" : ", ") + part; };
    if (error.rank >= 0)
        add(fmt::format("rank {}", error.rank));
    if (error.stage >= 0)
        add(fmt::format("stage {}", error.stage));
    if (!error.action.empty())
        add(fmt::format("action {}", error.action));
    return place;
}

std::string outcome_text(const RunOutcome& outcome) {
    switch (outcome.status) {
        case RunStatus::finished:
            return outcome.no_step;
        case RunStatus::running:
            return "unfinished: no step time (the run was never marked finished or failed)";
        case RunStatus::failed:
            break;
    }
    if (!outcome.first_error)
        return fmt::format("failed: {}",
                           outcome.failure.empty() ? "no error was recorded" : outcome.failure);
    const ErrorRecord& error = *outcome.first_error;
    const std::string place = failure_place(error);
    const std::string& message = error.message.empty() ? error.kind : error.message;
    std::string text = place.empty() ? fmt::format("failed: {}", message)
                                     : fmt::format("failed at {}: {}", place, message);
    if (const auto& stuck = outcome.longest_interrupted)
        text += fmt::format("; rank {} had been in {} for {} when it was stopped", stuck->rank,
                            stuck->action, format_duration(*stuck->time_ns - *stuck->started_ns));
    return text;
}

}  // namespace pipelens::traces
