// Experiment flags: registration and application on top of the file. A flag replaces the
// whole field (a per-stage list included), never merges into it.
#include "app/cli/experiment_options.hpp"

#include <fmt/format.h>

#include "engine/experiment/experiment_toml.hpp"
#include "engine/experiment/units.hpp"

namespace pipelens::cli {
namespace {

template <typename Result>
std::vector<Result> per_stage_flag(const std::string& text, std::string_view flag,
                                   Result (*parse)(std::string_view)) {
    std::vector<Result> values;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t comma = std::min(text.find(',', begin), text.size());
        try {
            values.push_back(parse(std::string_view(text).substr(begin, comma - begin)));
        } catch (const UnitParseError& error) {
            throw ExperimentError(fmt::format("{}: {}", flag, error.what()));
        }
        begin = comma + 1;
    }
    return values;
}

template <typename Result>
Result single_flag(const std::string& text, std::string_view flag,
                   Result (*parse)(std::string_view)) {
    try {
        return parse(text);
    } catch (const UnitParseError& error) {
        throw ExperimentError(fmt::format("{}: {}", flag, error.what()));
    }
}

bool has_experiment_flags(const ExperimentOptions& options) {
    return options.schedule || options.schedule_file || options.pp || options.v || options.m ||
           options.forward || options.input || options.weight || options.backward ||
           options.activation_bytes || options.held_activation_bytes || options.p2p_latency ||
           options.p2p_bandwidth || options.ranks_per_host || options.overlap_efficiency;
}

}  // namespace

void add_experiment_options(CLI::App& command, ExperimentOptions& options, bool with_costs) {
    command.add_option("experiment", options.file,
                       "Experiment TOML file (default: the embedded 1F1B pp=4 m=8 example)");
    command.add_option("--schedule", options.schedule,
                       "Schedule kind: GPipe, 1F1B, Interleaved1F1B, LoopedBFS, "
                       "InterleavedZeroBubble, ZBVZeroBubble, DualPipeV");
    command.add_option("--schedule-file", options.schedule_file,
                       "A PyTorch CSV schedule to simulate instead of a generated kind");
    command.add_option("--pp", options.pp, "Pipeline ranks");
    command.add_option("--v", options.v, "Stages per rank");
    command.add_option("--m", options.m, "Microbatches");
    if (!with_costs)
        return;
    command.add_option("--f", options.forward,
                       "Forward time per stage: one value or a comma list (us unless a unit: "
                       "1.5ms, 20us, 300ns)");
    command.add_option("--i", options.input, "Input-gradient (I) time per stage");
    command.add_option("--w", options.weight, "Weight-gradient (W) time per stage");
    command.add_option("--b", options.backward, "Full backward (B) time per stage (default I+W)");
    command.add_option("--activation-bytes", options.activation_bytes,
                       "Bytes sent across a stage boundary per microbatch (16MiB, ...)");
    command.add_option("--held-activation-bytes", options.held_activation_bytes,
                       "Bytes a stage keeps per microbatch from F to B/W");
    command.add_option("--p2p-latency", options.p2p_latency,
                       "Send/recv latency, inside and across hosts (us unless a unit)");
    command.add_option("--p2p-bandwidth", options.p2p_bandwidth,
                       "Send/recv bandwidth, inside and across hosts (GB/s unless a unit)");
    command.add_option("--ranks-per-host", options.ranks_per_host, "Ranks per host");
    command.add_option("--overlap-efficiency", options.overlap_efficiency,
                       "Share of the shorter part OVERLAP_F_B hides, 0 to 1");
}

Experiment load_experiment(const ExperimentOptions& options) {
    Experiment experiment;
    if (!options.file.empty())
        experiment = read_experiment_file(options.file);
    else if (has_experiment_flags(options))
        experiment = plain_experiment();
    else
        return default_experiment();
    if (options.schedule) {
        try {
            experiment.shape.kind = parse_schedule_kind(*options.schedule);
        } catch (const ScheduleConfigError& error) {
            throw ExperimentError(fmt::format("--schedule: {}", error.what()));
        }
        experiment.shape.stages_per_rank = is_multi_stage(experiment.shape.kind) ? 2 : 1;
        experiment.schedule_file.clear();
    }
    if (options.schedule_file)
        experiment.schedule_file = *options.schedule_file;
    if (options.pp)
        experiment.shape.rank_count = *options.pp;
    if (options.v)
        experiment.shape.stages_per_rank = *options.v;
    if (options.m)
        experiment.shape.microbatch_count = *options.m;
    if (options.forward)
        experiment.forward_ns = per_stage_flag(*options.forward, "--f", parse_duration_ns);
    if (options.input)
        experiment.input_ns = per_stage_flag(*options.input, "--i", parse_duration_ns);
    if (options.weight)
        experiment.weight_ns = per_stage_flag(*options.weight, "--w", parse_duration_ns);
    if (options.backward)
        experiment.backward_ns = per_stage_flag(*options.backward, "--b", parse_duration_ns);
    if (options.forward || options.input || options.weight || options.backward)
        experiment.transformer.reset();  // explicit times replace derived ones
    if (options.activation_bytes)
        experiment.activation_bytes =
            per_stage_flag(*options.activation_bytes, "--activation-bytes", parse_byte_count);
    if (options.held_activation_bytes)
        experiment.held_activation_bytes = per_stage_flag(
            *options.held_activation_bytes, "--held-activation-bytes", parse_byte_count);
    if (options.p2p_latency)
        experiment.intra_host.latency_ns = experiment.inter_host.latency_ns =
            single_flag(*options.p2p_latency, "--p2p-latency", parse_duration_ns);
    if (options.p2p_bandwidth)
        experiment.intra_host.bytes_per_ns = experiment.inter_host.bytes_per_ns =
            single_flag(*options.p2p_bandwidth, "--p2p-bandwidth", parse_bandwidth_bytes_per_ns);
    if (options.ranks_per_host)
        experiment.ranks_per_host = *options.ranks_per_host;
    if (options.overlap_efficiency)
        experiment.overlap_efficiency = *options.overlap_efficiency;
    return experiment;
}

}  // namespace pipelens::cli
