// Experiment flags: registration and application on top of the file. A flag replaces the
// whole field (a per-stage list included), never merges into it.
#include "app/cli/experiment_options.hpp"

#include <charconv>
#include <cstdint>

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

// One --rank-slowdown factor; whether the factors fit the ranks is the experiment's validation.
double parse_slowdown_factor(std::string_view text) {
    double factor = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), factor);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
        throw UnitParseError(
            fmt::format("'{}' is not a number (give one factor per rank, e.g. 1,1.8)", text));
    return factor;
}

bool has_experiment_flags(const ExperimentOptions& options) {
    return options.schedule || options.schedule_file || options.pp || options.v || options.m ||
           options.defer_recv || options.max_activations || options.forward || options.input ||
           options.weight || options.backward || options.activation_bytes ||
           options.held_activation_bytes || options.p2p_latency || options.p2p_bandwidth ||
           options.ranks_per_host || options.overlap_efficiency || options.rendezvous ||
           options.rank_slowdown;
}

}  // namespace

// The largest count a flag takes, as in experiment files: larger is a typo, not a pipeline.
constexpr std::int64_t kLargestCount = 1'000'000'000;

// An integer flag, read here rather than by CLI11 so that a bad value is one message naming
// the flag and exit 2 (CLI11's conversion error has its own exit code), and so that a value
// below `minimum` is called invalid rather than later found "missing".
CLI::Option* add_count_option(CLI::App& command, const std::string& name,
                              std::optional<int>& target, const std::string& description,
                              int minimum) {
    return command
        .add_option_function<std::string>(
            name,
            [&target, name, minimum](const std::string& text) {
                std::int64_t value = 0;
                const char* end = text.data() + text.size();
                const auto [stop, error] = std::from_chars(text.data(), end, value);
                if (text.empty() || stop != end ||
                    (error != std::errc() && error != std::errc::result_out_of_range))
                    throw ExperimentError(fmt::format("{}: '{}' is not an integer", name, text));
                if (error == std::errc::result_out_of_range || value > kLargestCount)
                    throw ExperimentError(fmt::format("{}: {} is out of range (at most {})", name,
                                                      text, kLargestCount));
                if (value < minimum)
                    throw ExperimentError(
                        fmt::format("{} must be at least {}, got {}", name, minimum, value));
                target = static_cast<int>(value);
            },
            description)
        ->type_name("INT");
}

void add_experiment_options(CLI::App& command, ExperimentOptions& options, bool with_costs) {
    command.add_option("experiment", options.file,
                       "Experiment TOML file (default: the embedded 1F1B pp=4 m=8 example)");
    command.add_option(
        "--schedule", options.schedule,
        "Schedule kind: GPipe, 1F1B, Interleaved1F1B, LoopedBFS, "
        "InterleavedZeroBubble, ZBVZeroBubble, DualPipeV, ZeroBubbleH2, ZeroBubbleAuto");
    command.add_option("--schedule-file", options.schedule_file,
                       "A PyTorch CSV schedule to simulate instead of a generated kind");
    add_count_option(command, "--pp", options.pp, "Pipeline ranks", 1);
    add_count_option(command, "--v", options.v, "Stages per rank", 1);
    add_count_option(command, "--m", options.m, "Microbatches", 1);
    command.add_flag("--defer-recv", options.defer_recv,
                     "Lower with PyTorch's deferred receives (defer_pp_recv=True): each RECV "
                     "just before the computation that consumes it");
    command.add_option("--max-activations", options.max_activations,
                       "ZeroBubbleAuto's memory limit per stage, in microbatches of activations: "
                       "a count or a multiple of pp (p = ZB-1p, 2p = ZB-2p; default p)");
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
                       "Send/recv bandwidth, inside and across hosts (GB/s unless a unit; omit it "
                       "for unlimited links)");
    add_count_option(command, "--ranks-per-host", options.ranks_per_host, "Ranks per host", 1);
    command.add_flag("--rendezvous", options.rendezvous,
                     "A transfer starts only once its receive is posted (NCCL, Gloo), so where "
                     "the lowering puts a RECV shows in the timeline");
    command.add_option("--overlap-efficiency", options.overlap_efficiency,
                       "Share of the shorter part OVERLAP_F_B hides, 0 to 1");
    command.add_option("--rank-slowdown", options.rank_slowdown,
                       "A straggler: per rank, how many times its stage costs its computations "
                       "take (1,1.8: rank 1 takes 1.8 times as long)");
}

Experiment load_experiment(const ExperimentOptions& options) {
    if (!options.file.empty())
        return apply_experiment_flags(options, read_experiment_file(options.file));
    if (has_experiment_flags(options))
        return apply_experiment_flags(options, plain_experiment());
    return default_experiment();
}

ExperimentSweep load_experiment_sweep(const ExperimentOptions& options) {
    if (options.file.empty())
        return {load_experiment(options), {}};
    ExperimentSweep sweep = read_experiment_sweep_file(options.file);
    sweep.experiment = apply_experiment_flags(options, std::move(sweep.experiment));
    return sweep;
}

Experiment apply_experiment_flags(const ExperimentOptions& options, Experiment experiment) {
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
    if (options.schedule_file && experiment.rank_count_source.empty())
        experiment.shape.rank_count = 0;  // the file's rows decide, unless pp was given
    if (options.pp) {
        experiment.shape.rank_count = *options.pp;
        experiment.rank_count_source = "--pp";
    }
    if (options.v)
        experiment.shape.stages_per_rank = *options.v;
    if (options.m)
        experiment.shape.microbatch_count = *options.m;
    if (options.defer_recv)
        experiment.defer_receives = true;
    if (options.max_activations) {
        try {
            experiment.max_activations = parse_activation_limit(*options.max_activations);
        } catch (const ExperimentError& error) {
            throw ExperimentError(fmt::format("--max-activations: {}", error.what()));
        }
    }
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
    if (options.p2p_bandwidth) {
        const double bandwidth =
            single_flag(*options.p2p_bandwidth, "--p2p-bandwidth", parse_bandwidth_bytes_per_ns);
        if (!(bandwidth > 0))
            throw ExperimentError(
                "--p2p-bandwidth: bandwidth must be positive; omit --p2p-bandwidth for unlimited "
                "links");
        experiment.intra_host.bytes_per_ns = experiment.inter_host.bytes_per_ns = bandwidth;
    }
    if (options.ranks_per_host)
        experiment.ranks_per_host = *options.ranks_per_host;
    if (options.rendezvous)
        experiment.rendezvous = true;
    if (options.overlap_efficiency)
        experiment.overlap_efficiency = *options.overlap_efficiency;
    if (options.rank_slowdown)
        experiment.rank_slowdown =
            per_stage_flag(*options.rank_slowdown, "--rank-slowdown", parse_slowdown_factor);
    return experiment;
}

}  // namespace pipelens::cli
