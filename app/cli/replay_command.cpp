// `pipelens replay TRACE.db [--run N] [--rank R] [--upto K] [--check] [--events] [--json]`:
// rebuilds a rank's engine state from its recorded events on a fresh engine and prints it.
// --check compares the replay with the state the run ended in (its snapshot) and the replayed
// event stream with the recorded one; a difference exits 1 with an upstream-style report.
#include <algorithm>
#include <iterator>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/error_policy.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/validators.hpp"
#include "engine/recorder/recorded_trace.hpp"
#include "engine/recorder/state_equality.hpp"
#include "engine/recorder/state_replay.hpp"

namespace pipelens::cli {
namespace {

struct ReplayOptions {
    std::string path;
    std::optional<std::int64_t> run;
    std::optional<int> rank;
    std::optional<std::int64_t> upto;
    bool check = false;
    bool list_events = false;
    bool json = false;
};

// Returns the check's failure text, empty when the rank's replay matches its recording.
std::string check_rank(const traces::TraceReader& reader, std::int64_t run_id, int rank,
                       const std::vector<recorder::Event>& events,
                       const recorder::StateRecorder& replayed) {
    const auto snapshot = [&] {
        try {
            return recorder::read_snapshot(reader, run_id, rank);
        } catch (const std::invalid_argument& error) {  // a snapshot no writer produces
            throw CommandFailure(
                kExitUsage,
                fmt::format("pipelens: {}: trace is corrupt: run {} {}: {}", reader.path().string(),
                            run_id, recorder::stream_name(rank), error.what()));
        }
    }();
    if (!snapshot)
        throw CommandFailure(
            kExitUsage,
            fmt::format("pipelens: {}: run {} {}: no state snapshot was recorded to check against "
                        "(traces written before pipelens recorded snapshots have none; replay "
                        "without --check)",
                        reader.path().string(), run_id, recorder::stream_name(rank)));
    // A run writes its snapshot after its last event; one taken elsewhere describes no state
    // this stream ends in, and comparing with it would report a difference the run never had.
    if (snapshot->after_sequence != events.back().sequence)
        throw CommandFailure(
            kExitUsage,
            fmt::format("pipelens: {}: trace is corrupt: run {} {}: its state snapshot is taken "
                        "after event {}, but its events end at event {}",
                        reader.path().string(), run_id, recorder::stream_name(rank),
                        snapshot->after_sequence, events.back().sequence));
    const auto difference =
        recorder::compare_states(snapshot->fields, recorder::state_fields(replayed.state()));
    if (difference)
        return fmt::format(
            "{}: run {} {}: the replay of {} events does not rebuild the recorded "
            "state\n{}",
            reader.path().string(), run_id, recorder::stream_name(rank), events.size(),
            recorder::format_state_difference(*difference));
    if (auto stream = recorder::compare_event_streams(events, replayed.events()))
        return fmt::format("{}: run {} {}: {}", reader.path().string(), run_id,
                           recorder::stream_name(rank), *stream);
    return {};
}

// A replay applies top-level events whole (the events they nest are made again by them), so it
// cannot stop at a nested event: `--upto` naming one is refused, with the two places it can stop.
void refuse_nested_upto(const std::vector<recorder::Event>& events, std::int64_t upto, int rank) {
    const auto at = [&](std::int64_t sequence) {
        return std::find_if(events.begin(), events.end(), [&](const recorder::Event& event) {
            return event.sequence == sequence;
        });
    };
    auto event = at(upto);
    if (event == events.end() || event->top_level())
        return;
    auto top = event;
    while (!top->top_level()) {
        const auto parent = at(*top->parent);
        if (parent == events.end())
            return;  // a dangling parent: the replay names the damage
        top = parent;
    }
    auto last_made = top;
    for (auto later = std::next(top); later != events.end() && !later->top_level(); ++later)
        last_made = later;
    throw CommandFailure(
        kExitUsage,
        fmt::format("pipelens: --upto {}: event {} ({}, {}) is made by event {} ({}), which a "
                    "replay applies whole: give --upto {} (after it and the events it makes, up to "
                    "{}) or --upto {} (before it)",
                    upto, upto, event->name, recorder::stream_name(rank), top->sequence, top->name,
                    top->sequence, last_made->sequence, top->sequence - 1));
}

// The replayed events as the trace stores them: nested ones name their parent.
nlohmann::json events_json(const std::vector<recorder::Event>& events) {
    nlohmann::json list = nlohmann::json::array();
    for (const recorder::Event& event : events) {
        nlohmann::json entry = {
            {"sequence", event.sequence}, {"name", event.name}, {"arguments", event.arguments}};
        entry["parent"] = event.parent ? nlohmann::json(*event.parent) : nlohmann::json();
        list.push_back(std::move(entry));
    }
    return list;
}

void run_replay(const ReplayOptions& options) {
    const traces::TraceReader reader(options.path);
    const std::int64_t run_id = options.run.value_or(reader.latest_run_id());
    reader.run(run_id);  // names the trace and the run when there is no such run
    const recorder::RecordedEvents recorded(reader, run_id);
    std::vector<int> ranks = options.rank ? std::vector<int>{*options.rank} : recorded.ranks();
    if (ranks.empty())
        ranks.push_back(0);  // stream() explains that nothing was recorded
    if (options.upto && *options.upto < 0)
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens: --upto {}: events are numbered from 0 (the "
                                         "constructor); give 0 or more",
                                         *options.upto));
    if (options.check && options.upto)
        throw CommandFailure(kExitUsage,
                             "pipelens: --check compares the state a run ended in; "
                             "it cannot be combined with --upto");
    nlohmann::json json = nlohmann::json::array();
    std::vector<std::string> failures;
    for (int rank : ranks) {
        std::vector<recorder::Event> events;
        try {
            events = recorded.stream(rank);
        } catch (const std::invalid_argument& error) {
            throw CommandFailure(kExitUsage, fmt::format("pipelens: {}", error.what()));
        }
        if (options.upto)
            refuse_nested_upto(events, *options.upto, rank);
        const recorder::StateRecorder replayed = [&] {
            try {
                return recorder::replay_events(events, options.upto);
            } catch (const std::exception& error) {
                throw CommandFailure(
                    error_policy(error).exit_code,
                    fmt::format("pipelens: {}: run {} {}: {}", options.path, run_id,
                                recorder::stream_name(rank), error.what()));
            }
        }();
        const auto fields = recorder::state_fields(replayed.state());
        const std::string failure =
            options.check ? check_rank(reader, run_id, rank, events, replayed) : "";
        if (!failure.empty())
            failures.push_back(failure);
        if (options.json) {
            nlohmann::json state = nlohmann::json::object();
            for (const auto& field : fields)
                state[field.name] = field.value;
            nlohmann::json entry = {{"rank", rank},
                                    {"events_recorded", events.size()},
                                    {"events_replayed", replayed.events().size()},
                                    {"state", std::move(state)}};
            if (options.check)
                entry["check"] = failure.empty() ? "equal" : failure;
            if (options.list_events)
                entry["events"] = events_json(replayed.events());
            json.push_back(std::move(entry));
            continue;
        }
        // An --upto past the stream's end replays all of it: said, not left to be inferred.
        const bool past_end = options.upto && *options.upto > events.back().sequence;
        fmt::print(
            "run {} {}: replayed {} events{} ({} recorded{})\n", run_id,
            recorder::stream_name(rank), replayed.events().size(),
            options.upto ? fmt::format(" up to event {}", *options.upto) : "", events.size(),
            past_end ? fmt::format("; the stream ends at event {}", events.back().sequence) : "");
        if (options.list_events)
            for (const recorder::Event& event : replayed.events())
                fmt::print("  {}{}\n", event.parent ? "    " : "", recorder::to_string(event));
        if (!options.check)
            for (const auto& field : fields)
                fmt::print("  {}: {}\n", field.name, field.value);
        if (options.check && failure.empty())
            fmt::print("  check: equal to the recorded state ({} fields, {} events)\n",
                       fields.size(), events.size());
    }
    if (options.json)
        fmt::print("{}\n", json_text(json));
    if (!failures.empty())
        throw CommandFailure(kExitCheckFailed, fmt::format("{}", fmt::join(failures, "\n")));
}

}  // namespace

void add_replay_command(CLI::App& app) {
    auto options = std::make_shared<ReplayOptions>();
    CLI::App* command = app.add_subcommand(
        "replay", "Rebuild a run's engine state from its recorded events and print it");
    add_trace_argument(*command, options->path, "Trace file (SQLite)");
    command->add_option("--run", options->run, "Run id (default: the latest)")
        ->check(int64_number());
    command->add_option("--rank", options->rank,
                        "Rank whose events to replay (default: every rank; -1 is a simulation's "
                        "whole-pipeline stream)");
    command
        ->add_option("--upto", options->upto, "Replay only the events up to this sequence number")
        ->check(int64_number());
    command->add_flag("--check", options->check,
                      "Compare the replay with the state the run ended in; exit 1 on a difference");
    command->add_flag("--events", options->list_events, "List the replayed events too");
    command->add_flag("--json", options->json, "Print JSON instead of text");
    command->callback([options] { run_replay(*options); });
}

}  // namespace pipelens::cli
