// `pipelens bisect A.db [B.db] [--run N] [--rank R] [--other-run N] [--other-rank R]`: the
// first recorded event after which two runs' (or two ranks') engine states differ, found by
// binary search over replayed prefixes. `--until-error` instead finds the first event after
// which one stream's state fails validation. Exits 1 when it finds one (like diff), 0 when the
// states agree throughout. The recorded states are metadata: two runs can agree in every one and
// still end differently (a tensor of the wrong dtype is data, not state), so when the runs
// compared did not end the same way (one failed, or they failed at different places) bisect
// says so, naming each failed run's first error, and exits 1: exit 0 promises that nothing told
// the two runs apart.
#include <cmath>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/error_policy.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/validators.hpp"
#include "engine/recorder/recorded_trace.hpp"
#include "engine/recorder/state_bisect.hpp"
#include "engine/recorder/state_replay.hpp"
#include "traces/run_outcome.hpp"

namespace pipelens::cli {
namespace {

struct BisectOptions {
    std::string left_path;
    std::string right_path;
    std::optional<std::int64_t> run;
    std::optional<int> rank;
    std::optional<std::int64_t> other_run;
    std::optional<int> other_rank;
    bool until_error = false;
    bool json = false;
};

struct Stream {
    std::string description;  // "a.db run 1 rank 0"
    std::vector<recorder::Event> events;
    std::string run_description;  // "a.db run 1"
    traces::RunOutcome outcome;   // how the run the events belong to ended
};

Stream read_stream(const traces::TraceReader& reader, std::optional<std::int64_t> run,
                   std::optional<int> rank) {
    const std::string path = reader.path().string();
    const std::int64_t run_id = run.value_or(reader.latest_run_id());
    const traces::RunOutcome outcome = traces::read_run_outcome(reader, reader.run(run_id));
    const recorder::RecordedEvents recorded(reader, run_id);
    int chosen = 0;
    if (rank) {
        chosen = *rank;
    } else {
        const std::vector<int> ranks = recorded.ranks();
        chosen = ranks.empty() ? 0 : ranks.front();
    }
    try {
        return {fmt::format(
                    "{} run {} {}", path, run_id,
                    chosen < 0 ? std::string("(whole pipeline)") : fmt::format("rank {}", chosen)),
                recorded.stream(chosen), fmt::format("{} run {}", path, run_id), outcome};
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: {}", error.what()));
    }
}

// An event of `stream` that failed to replay, named with its trace, run and rank; the exit
// code says whether that is a finding, a damaged trace or a machine limit (error_policy.hpp).
CommandFailure replay_failure(const Stream& stream, const recorder::ReplayError& error) {
    return CommandFailure(error_policy(error).exit_code,
                          fmt::format("pipelens: {}: {}", stream.description, error.what()));
}

int ceil_log2(std::size_t count) {
    return count <= 1 ? 0 : static_cast<int>(std::ceil(std::log2(static_cast<double>(count))));
}

// The most replays a bisection takes (state_bisect.hpp): the whole stream, then a binary search.
int replay_bound(const recorder::ErrorBisection& result) {
    return 1 + ceil_log2(result.event_count);
}

// Two streams: their first differing event too, and a longer stream's further events' search.
int replay_bound(const recorder::DivergenceBisection& result) {
    const std::size_t further = result.further_event_count;
    return 2 + ceil_log2(result.event_count) + (further > 0 ? 3 + ceil_log2(further) : 0);
}

// What both bisections (until an error, between two runs) report alike: whether an event was
// found, among how many, and how many replays that took.
template <typename Bisection>
nlohmann::json bisection_counts(const Bisection& result) {
    return {{"found", result.found}, {"events", result.event_count}, {"replays", result.replays}};
}

template <typename Bisection>
void print_replay_count(const Bisection& result) {
    fmt::print("bisect: {} replays for {} events (bound {})\n", result.replays, result.event_count,
               replay_bound(result));
}

void bisect_error(const BisectOptions& options) {
    // One stream is checked: a second trace or run given beside it was silently left unchecked.
    if (!options.right_path.empty() || options.other_run || options.other_rank)
        throw CommandFailure(kExitUsage,
                             "pipelens: bisect --until-error checks one stream (the first trace's "
                             "--run and --rank): leave out the second trace, --other-run and "
                             "--other-rank, or run it once per stream");
    const Stream stream =
        read_stream(traces::TraceReader(options.left_path), options.run, options.rank);
    const recorder::ErrorBisection result = [&] {
        try {
            return recorder::bisect_until_error(stream.events);
        } catch (const recorder::ReplayError& error) {
            throw replay_failure(stream, error);
        }
    }();
    if (options.json) {
        nlohmann::json json = bisection_counts(result);
        if (result.found) {
            json["event"] = {{"sequence", result.event->sequence},
                             {"name", result.event->name},
                             {"arguments", result.event->arguments}};
            json["problems"] = result.problems;
        }
        fmt::print("{}\n", json_text(json));
    } else if (!result.found) {
        fmt::print("{}: the state validates after every one of its {} events\n", stream.description,
                   result.event_count);
    } else {
        fmt::print("{}: validation first fails after {}\n", stream.description,
                   recorder::to_string(*result.event));
        for (const std::string& problem : result.problems)
            fmt::print("  {}\n", problem);
    }
    if (!options.json)
        print_replay_count(result);
    if (result.found)
        throw CommandFailure(kExitCheckFailed, "");
}

// Whether two runs ended alike: both finished, or both failed with the same first error (its
// kind and where it struck; messages may differ in what they quote).
bool same_ending(const traces::RunOutcome& left, const traces::RunOutcome& right) {
    if (left.status != right.status)
        return false;
    if (!left.first_error || !right.first_error)
        return left.first_error.has_value() == right.first_error.has_value();
    const auto where = [](const traces::ErrorRecord& error) {
        return std::tie(error.kind, error.rank, error.stage, error.microbatch, error.action);
    };
    return where(*left.first_error) == where(*right.first_error);
}

// The runs compared that did not finish, each once (comparing two ranks of one run names it once).
std::vector<const Stream*> runs_without_step(const Stream& left, const Stream& right) {
    std::vector<const Stream*> runs;
    for (const Stream* stream : {&left, &right})
        if (!traces::step_figures_apply(stream->outcome) &&
            (runs.empty() || runs.front()->run_description != stream->run_description))
            runs.push_back(stream);
    return runs;
}

// What the compared runs' endings add to the bisection's answer: each run without a step, with
// its first error. When the states agree but the runs ended differently, the states do not
// explain the difference, and that is said first.
void print_outcomes(const Stream& left, const Stream& right, bool states_agree) {
    const std::vector<const Stream*> ended = runs_without_step(left, right);
    if (ended.empty())
        return;
    std::string heading;
    if (same_ending(left.outcome, right.outcome))
        heading = ended.size() == 2 ? "both runs ended the same way"
                  : ended.front()->outcome.status == traces::RunStatus::failed
                      ? "the run compared failed"
                      : "the run compared did not finish";
    else if (ended.size() == 2)
        heading = "the runs ended differently";
    else
        heading = ended.front()->outcome.status == traces::RunStatus::failed
                      ? "one run failed and the other did not"
                      : "one run did not finish and the other did";
    if (states_agree && !same_ending(left.outcome, right.outcome))
        heading = "but " + heading + ", which the recorded states do not show";
    fmt::print("{}:\n", heading);
    for (const Stream* stream : ended)
        fmt::print("  {} {}\n", stream->run_description, traces::outcome_text(stream->outcome));
}

nlohmann::json outcome_json(const Stream& stream) {
    nlohmann::json json = {{"run", stream.run_description},
                           {"finished", traces::step_figures_apply(stream.outcome)}};
    if (!traces::step_figures_apply(stream.outcome))
        json["ended"] = traces::outcome_text(stream.outcome);
    if (const auto& error = stream.outcome.first_error)
        json["first_error"] = {{"rank", error->rank},
                               {"stage", error->stage},
                               {"action", error->action},
                               {"kind", error->kind},
                               {"message", error->message}};
    return json;
}

// The event after which the states part: the left stream's, or the right's where only it goes
// on.
const recorder::Event& parting_event(const recorder::DivergenceBisection& result) {
    return result.left_event ? *result.left_event : *result.right_event;
}

nlohmann::json arguments_or_null(const std::optional<recorder::Event>& event) {
    return event ? nlohmann::json(event->arguments) : nlohmann::json(nullptr);
}

std::string event_text(const std::optional<recorder::Event>& event) {
    return event ? recorder::to_string(*event) : "(its stream has ended)";
}

// The fields whose values differ, by name with both values (none when the states differ in
// which fields they have: unique_fields_json names those).
nlohmann::json fields_json(const recorder::StateDifference& difference) {
    nlohmann::json fields = nlohmann::json::array();
    for (const auto& mismatch : difference.mismatches)
        if (!mismatch.field.empty())
            fields.push_back(
                {{"field", mismatch.field}, {"left", mismatch.left}, {"right", mismatch.right}});
    return fields;
}

void bisect_divergence(const BisectOptions& options) {
    const std::string& right_path =
        options.right_path.empty() ? options.left_path : options.right_path;
    if (options.right_path.empty() && !options.other_run && !options.other_rank)
        throw CommandFailure(kExitUsage,
                             "pipelens: bisect needs a second trace, or --other-run / --other-rank "
                             "to compare within one trace (or --until-error)");
    // One reader when both streams come from one file: opening checks the whole file.
    const traces::TraceReader left_reader(options.left_path);
    const std::optional<traces::TraceReader> other_reader =
        right_path == options.left_path
            ? std::nullopt
            : std::optional<traces::TraceReader>(std::in_place, right_path);
    const Stream left = read_stream(left_reader, options.run, options.rank);
    const Stream right = read_stream(other_reader ? *other_reader : left_reader,
                                     options.other_run ? options.other_run : options.run,
                                     options.other_rank ? options.other_rank : options.rank);
    const recorder::DivergenceBisection result = [&] {
        try {
            return recorder::bisect_divergence(left.events, right.events);
        } catch (const recorder::ReplayError& error) {
            throw replay_failure(error.stream == 0 ? left : right, error);
        }
    }();
    const bool ends_alike = same_ending(left.outcome, right.outcome);
    if (options.json) {
        nlohmann::json json = bisection_counts(result);
        if (result.found) {
            const recorder::Event& event = parting_event(result);
            json["event"] = {{"sequence", event.sequence},
                             {"name", event.name},
                             {"left_arguments", arguments_or_null(result.left_event)},
                             {"right_arguments", arguments_or_null(result.right_event)}};
            json["fields"] = fields_json(*result.difference);
            json["unique_fields"] = {{"left", result.difference->left_only},
                                     {"right", result.difference->right_only}};
        }
        if (!result.note.empty())
            json["note"] = result.note;
        json["same_ending"] = ends_alike;
        json["runs"] = {outcome_json(left), outcome_json(right)};
        fmt::print("{}\n", json_text(json));
    } else if (!result.found) {
        fmt::print("the states agree after every event ({} events)\n", result.event_count);
        if (!result.note.empty())
            fmt::print("{}\n", result.note);
        print_outcomes(left, right, true);
    } else {
        const recorder::Event& event = parting_event(result);
        if (!result.note.empty())
            fmt::print("{}\n", result.note);
        fmt::print("first divergence after event {} ({})\n", event.sequence, event.name);
        fmt::print("   Left: {}: {}\n", left.description, event_text(result.left_event));
        fmt::print("  Right: {}: {}\n", right.description, event_text(result.right_event));
        fmt::print("{}\n", recorder::format_state_difference(*result.difference));
        print_outcomes(left, right, false);
    }
    if (!options.json)
        print_replay_count(result);
    if (result.found || !ends_alike)
        throw CommandFailure(kExitCheckFailed, "");
}

}  // namespace

void add_bisect_command(CLI::App& app) {
    auto options = std::make_shared<BisectOptions>();
    CLI::App* command = app.add_subcommand(
        "bisect", "Find the first recorded event after which two runs' states differ");
    add_trace_argument(*command, options->left_path, "Trace file (SQLite)");
    command
        ->add_option("other", options->right_path,
                     "Second trace (default: the first, with --other-run/--other-rank)")
        ->check(trace_file("bisect"));
    command->add_option("--run", options->run, "Run id in the first trace (default: latest)")
        ->check(int64_number());
    command->add_option("--rank", options->rank,
                        "Rank whose events to compare (default: the first recorded)");
    command
        ->add_option("--other-run", options->other_run,
                     "Run id in the second trace (default: --run, else latest)")
        ->check(int64_number());
    command->add_option("--other-rank", options->other_rank,
                        "Rank in the second run (default: --rank)");
    command->add_flag("--until-error", options->until_error,
                      "Find the first event after which the first trace's state fails validation");
    command->add_flag("--json", options->json, "Print one JSON object");
    command->callback([options] {
        if (options->until_error)
            bisect_error(*options);
        else
            bisect_divergence(*options);
    });
}

}  // namespace pipelens::cli
