// `pipelens merge`: joins what the shards of a sweep wrote. Results files (--json of each
// `pipelens sweep --shard I/N`) become the whole grid's results, re-ranked, printed, written and
// drawn as a single sweep would have them; trace files have their runs copied into --out.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "app/cli/ci_gates.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/sweep_outputs.hpp"
#include "engine/text/text_file.hpp"
#include "traces/trace_merge.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::cli {
namespace {

struct MergeOptions {
    std::vector<std::string> inputs;
    std::optional<std::string> out;
    SweepOutputOptions outputs;
    GateOptions gates;
};

// An SQLite file starts with these 16 bytes (the text and its terminating zero); only they are
// read, since a trace may be large.
bool is_sqlite_file(const std::string& path) {
    static constexpr char kMagic[] = "SQLite format 3";
    char start[sizeof kMagic] = {};
    std::error_code error;
    if (std::filesystem::is_directory(path, error))
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens merge: {}: is a directory, not a trace or a "
                                         "sweep's results file",
                                         path));
    std::ifstream file(path, std::ios::binary);
    if (!file)
        throw CommandFailure(kExitUsage, fmt::format("pipelens merge: {}: cannot open it", path));
    file.read(start, sizeof start);
    if (file.bad())
        throw CommandFailure(kExitUsage, fmt::format("pipelens merge: {}: cannot read it", path));
    if (file.gcount() == 0)
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens merge: {}: is empty (0 bytes): neither a trace "
                                         "nor a sweep's results file",
                                         path));
    return file.gcount() == sizeof start && std::equal(start, start + sizeof start, kMagic);
}

// A results file that is not one is a usage error (exit 2); shards that do not make one whole
// grid are a failed check (exit 1).
sim::SweepResults read_sweep_results(const std::string& path) {
    try {
        return sim::sweep_results_from_json(read_text_file(path), path);
    } catch (const sim::SweepResultsError& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens merge: {}", error.what()));
    }
}

sim::SweepResults merge_shards(
    const std::vector<std::pair<std::string, sim::SweepResults>>& shards) {
    try {
        return sim::merge_sweep_results(shards);
    } catch (const sim::SweepMergeError& error) {
        throw CommandFailure(kExitCheckFailed, fmt::format("pipelens merge: {}", error.what()));
    }
}

// The shard whose sweep recorded `run` (I and N of "sweep shard I/N place K: ..." in its name;
// 1/1 for "sweep place K: ..."), none for a run no sweep recorded.
std::optional<SweepShard> recorded_by_shard(const traces::RunRecord& run) {
    static const std::regex kName(
        R"(^name = '(?:sweep shard (\d+)/(\d+) place|sweep place) \d+: )");
    std::smatch match;
    if (!std::regex_search(run.config, match, kName))
        return std::nullopt;
    if (!match[1].matched)
        return SweepShard{1, 1};
    return SweepShard{std::stoul(match[1].str()), std::stoul(match[2].str())};
}

// Given with results files, the traces are those shards' own: each holds the runs of one of
// the shards, no two the same, one for each. Copying any trace's runs once put an unrelated
// run, one shard's runs twice, or none of a shard's, into --out beside merged results without a
// word. (Traces alone are any traces, joined.)
void check_shard_traces(const std::vector<std::string>& traces,
                        const std::vector<std::pair<std::string, sim::SweepResults>>& shards) {
    if (shards.empty())
        return;
    std::map<std::size_t, std::string> holder;  // shard index -> trace
    // Each trace's shard, 0 until a run names it (a shard's index is at least 1).
    const std::size_t count = shards.front().second.shard.count;
    for (const std::string& trace : traces) {
        std::size_t index = 0;
        for (const traces::RunRecord& run : traces::TraceReader(trace).runs()) {
            const std::optional<SweepShard> shard = recorded_by_shard(run);
            const auto refuse = [&](const std::string& why) {
                return CommandFailure(
                    kExitCheckFailed,
                    fmt::format("pipelens merge: {}: run {} ({}) {}: merge copies the runs the "
                                "shards of one sweep recorded",
                                trace, run.id, run.schedule, why));
            };
            if (!shard)
                throw refuse("was not recorded by a sweep");
            if (shard->count != count)
                throw refuse(fmt::format("was recorded by shard {}/{}, not one of {} shards",
                                         shard->index, shard->count, count));
            if (index != 0 && shard->index != index)
                throw refuse(
                    fmt::format("was recorded by shard {}/{}, the trace's others by "
                                "shard {}/{}",
                                shard->index, shard->count, index, shard->count));
            index = shard->index;
        }
        if (index == 0)
            continue;
        if (const auto [at, fresh] = holder.emplace(index, trace); !fresh)
            throw CommandFailure(kExitCheckFailed,
                                 fmt::format("pipelens merge: {} and {} both hold the runs of "
                                             "shard {}/{}: its runs would be copied twice",
                                             at->second, trace, index, count));
    }
    if (holder.empty())
        return;
    for (const auto& [name, results] : shards)
        if (!holder.contains(results.shard.index))
            throw CommandFailure(
                kExitCheckFailed,
                fmt::format("pipelens merge: no trace holds the runs of shard {}/{} ({}): give "
                            "every shard's trace, or none",
                            results.shard.index, results.shard.count, name));
}

// What only results files feed (their outputs and gates) or only traces feed (--out) is refused
// when none of those inputs was given: a gate with nothing to look at once passed without a word.
void refuse_options_without_their_inputs(const MergeOptions& options, const GateLimits& limits,
                                         bool has_results, bool has_traces) {
    const SweepOutputOptions& outputs = options.outputs;
    if (!has_results)
        for (const auto& [flag, given] : {std::pair("--json", outputs.json.has_value()),
                                          {"--csv", outputs.csv.has_value()},
                                          {"--png", outputs.png.has_value()},
                                          {"--svg", outputs.svg.has_value()},
                                          {"a gate", limits.any()},
                                          {"--junit", !options.gates.junit.empty()}})
            if (given)
                throw CommandFailure(kExitUsage,
                                     fmt::format("pipelens merge: {} needs sweep results files "
                                                 "(pipelens sweep --shard I/N --json) among the "
                                                 "inputs; only traces were given",
                                                 flag));
    if (!has_traces && options.out)
        throw CommandFailure(kExitUsage,
                             "pipelens merge: --out copies the runs of input traces; none was "
                             "given (the shards' --out files)");
}

// Runs already in --out would sit beside the copies: a merge retried after a failure, or run
// twice, once doubled every run without a word.
void refuse_merged_trace_that_holds_runs(const std::string& out) {
    if (!std::filesystem::exists(out))
        return;
    const std::size_t held = traces::TraceReader(out).runs().size();
    if (held > 0)
        throw CommandFailure(
            kExitUsage,
            fmt::format("pipelens merge: --out {} already holds {} run{}; merging into it would "
                        "put the shards' runs beside them (a merge run twice copies every run "
                        "twice): name a new file, or remove it first",
                        out, held, held == 1 ? "" : "s"));
}

void run_merge(const MergeOptions& options) {
    const GateLimits limits = gate_limits(options.gates);
    check_sweep_outputs(options.outputs, "pipelens merge", options.inputs);
    std::vector<std::pair<std::string, sim::SweepResults>> shards;
    std::vector<std::string> traces;
    for (const std::string& input : options.inputs) {
        if (is_sqlite_file(input))
            traces.push_back(input);
        else
            shards.emplace_back(input, read_sweep_results(input));
    }
    if (!traces.empty() && !options.out)
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens merge: {} is a trace: name the trace to copy "
                                         "its runs into with --out",
                                         traces.front()));
    refuse_options_without_their_inputs(options, limits, !shards.empty(), !traces.empty());
    // Checked before any trace is written, so shards that do not fit change nothing.
    std::optional<sim::SweepResults> merged;
    if (!shards.empty())
        merged = merge_shards(shards);
    for (std::size_t first = 0; first < traces.size(); ++first)
        for (std::size_t second = first + 1; second < traces.size(); ++second)
            if (std::filesystem::equivalent(traces[first], traces[second]))
                throw CommandFailure(
                    kExitUsage,
                    fmt::format("pipelens merge: {} and {} are the same trace: its runs would be "
                                "copied twice",
                                traces[first], traces[second]));
    check_shard_traces(traces, shards);
    // Every input trace is checked, rows included, before anything is copied: a damaged second
    // trace once left the first one's runs in --out, and a damaged run was copied on.
    for (const std::string& trace : traces) {
        if (options.out && std::filesystem::exists(*options.out) &&
            std::filesystem::equivalent(trace, *options.out))
            throw CommandFailure(
                kExitUsage, fmt::format("pipelens merge: {} is both an input and --out", trace));
        const traces::TraceReader reader(trace);
        for (const traces::RunRecord& run : reader.runs())
            reader.actions(run.id);
    }
    if (options.out) {
        traces::check_trace_destination(*options.out);
        refuse_merged_trace_that_holds_runs(*options.out);
    }
    for (const std::string& trace : traces) {
        const std::vector<std::int64_t> runs = traces::copy_trace_runs(trace, *options.out);
        fmt::print(stderr, "copied {} run{} of {} into {}\n", runs.size(),
                   runs.size() == 1 ? "" : "s", trace, *options.out);
    }
    if (!merged)
        return;
    write_sweep_outputs(
        *merged, options.outputs,
        fmt::format("merged {} shard{} of a sweep of {} configurations\nranked by {}",
                    shards.size(), shards.size() == 1 ? "" : "s", merged->grid_size,
                    sim::sweep_ranking_name(merged->ranking)));
    refuse_empty_ranking(*merged, "pipelens merge");
    enforce_sweep_gates(*merged, limits, options.gates, "pipelens merge");
}

}  // namespace

void add_merge_command(CLI::App& app) {
    auto options = std::make_shared<MergeOptions>();
    CLI::App* command = app.add_subcommand(
        "merge", "Join the shards of a sweep: their results (JSON) and their traces");
    command
        ->add_option("inputs", options->inputs,
                     "Results files of `pipelens sweep --shard I/N --json` and trace files")
        ->required()
        ->check(trace_file("merge"));
    command->add_option("--out", options->out, "Trace file to copy the input traces' runs into");
    add_sweep_output_options(*command, options->outputs);
    add_gate_options(*command, options->gates);
    command->callback([options] {
        run_with_junit_report(options->gates, "pipelens merge", options->inputs,
                              sweep_output_files(options->outputs, options->out),
                              [&] { run_merge(*options); });
    });
}

}  // namespace pipelens::cli
