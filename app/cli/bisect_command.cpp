// `pipelens bisect A.db [B.db] [--run N] [--rank R] [--other-run N] [--other-rank R]`: the
// first recorded event after which two runs' (or two ranks') engine states differ, found by
// binary search over replayed prefixes. `--until-error` instead finds the first event after
// which one stream's state fails validation. Exits 1 when it finds one (like diff), 0 when the
// states agree throughout.
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/input_files.hpp"
#include "engine/recorder/recorded_trace.hpp"
#include "engine/recorder/state_bisect.hpp"

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
};

Stream read_stream(const traces::TraceReader& reader, std::optional<std::int64_t> run,
                   std::optional<int> rank) {
    const std::string path = reader.path().string();
    const std::int64_t run_id = run.value_or(reader.latest_run_id());
    reader.run(run_id);
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
                recorded.stream(chosen)};
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: {}", error.what()));
    }
}

int replay_bound(std::size_t events) {
    return events <= 1 ? 1 : static_cast<int>(std::ceil(std::log2(events))) + 1;
}

void bisect_error(const BisectOptions& options) {
    const Stream stream =
        read_stream(traces::TraceReader(options.left_path), options.run, options.rank);
    const recorder::ErrorBisection result = recorder::bisect_until_error(stream.events);
    if (options.json) {
        nlohmann::json json = {
            {"found", result.found}, {"events", result.event_count}, {"replays", result.replays}};
        if (result.found) {
            json["event"] = {{"sequence", result.event->sequence},
                             {"name", result.event->name},
                             {"arguments", result.event->arguments}};
            json["problems"] = result.problems;
        }
        fmt::print("{}\n", json.dump());
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
        fmt::print("bisect: {} replays for {} events (bound {})\n", result.replays,
                   result.event_count, replay_bound(result.event_count));
    if (result.found)
        throw CommandFailure(kExitCheckFailed, "");
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
        } catch (const std::exception& error) {
            throw CommandFailure(kExitCheckFailed, fmt::format("pipelens: {}", error.what()));
        }
    }();
    if (options.json) {
        nlohmann::json json = {
            {"found", result.found}, {"events", result.event_count}, {"replays", result.replays}};
        if (result.found) {
            json["event"] = {{"sequence", result.left_event->sequence},
                             {"name", result.left_event->name},
                             {"left_arguments", result.left_event->arguments},
                             {"right_arguments", result.right_event->arguments}};
            nlohmann::json fields = nlohmann::json::array();
            for (const auto& mismatch : result.difference->mismatches)
                fields.push_back(
                    {{"field", mismatch.what}, {"left", mismatch.left}, {"right", mismatch.right}});
            json["fields"] = std::move(fields);
        }
        if (!result.note.empty())
            json["note"] = result.note;
        fmt::print("{}\n", json.dump());
    } else if (!result.found) {
        fmt::print("the states agree after every event ({} events)\n", result.event_count);
        if (!result.note.empty())
            fmt::print("{}\n", result.note);
    } else {
        fmt::print("first divergence after event {} ({})\n", result.left_event->sequence,
                   result.left_event->name);
        fmt::print("   Left: {}: {}\n", left.description, recorder::to_string(*result.left_event));
        fmt::print("  Right: {}: {}\n", right.description,
                   recorder::to_string(*result.right_event));
        fmt::print("{}\n", recorder::format_state_difference(*result.difference));
    }
    if (!options.json)
        fmt::print("bisect: {} replays for {} events (bound {})\n", result.replays,
                   result.event_count, replay_bound(result.event_count));
    if (result.found)
        throw CommandFailure(kExitCheckFailed, "");
}

}  // namespace

void add_bisect_command(CLI::App& app) {
    auto options = std::make_shared<BisectOptions>();
    CLI::App* command = app.add_subcommand(
        "bisect", "Find the first recorded event after which two runs' states differ");
    command->add_option("trace", options->left_path, "Trace file (SQLite)")
        ->required()
        ->check(trace_file("bisect"));
    command
        ->add_option("other", options->right_path,
                     "Second trace (default: the first, with --other-run/--other-rank)")
        ->check(trace_file("bisect"));
    command->add_option("--run", options->run, "Run id in the first trace (default: latest)");
    command->add_option("--rank", options->rank,
                        "Rank whose events to compare (default: the first recorded)");
    command->add_option("--other-run", options->other_run,
                        "Run id in the second trace (default: --run, else latest)");
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
