// Experiment flags: registration and application on top of the file. A flag replaces the
// whole field (a per-stage list included), never merges into it.
#include "app/cli/experiment_options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "app/cli/input_files.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "engine/experiment/units.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "engine/schedule/schedule_csv.hpp"

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
    return options.schedule || options.schedule_file || options.notation || options.pp ||
           options.v || options.m || options.defer_recv || options.max_activations ||
           options.forward || options.input || options.weight || options.backward ||
           options.activation_bytes || options.held_activation_bytes || options.p2p_latency ||
           options.p2p_bandwidth || options.ranks_per_host || options.overlap_efficiency ||
           options.rendezvous || options.rank_slowdown || options.costs_per ||
           options.transformer.layers || options.transformer.any_but_layers();
}

// --layers edits the transformer when there is one (or the flags make one), else it is the
// model's layer count that per-layer costs multiply.
void apply_transformer_flags(const ExperimentOptions::TransformerFlags& flags,
                             Experiment& experiment) {
    if (!experiment.transformer && !flags.any_but_layers()) {
        if (flags.layers)
            experiment.model.layers = *flags.layers;
        return;
    }
    TransformerSpec& spec =
        experiment.transformer ? *experiment.transformer : experiment.transformer.emplace();
    if (flags.layers) {
        spec.layers = *flags.layers;
        spec.layers_per_stage.clear();  // the file's split was for its own layer count
    }
    spec.hidden = flags.hidden.value_or(spec.hidden);
    spec.heads = flags.heads.value_or(spec.heads);
    spec.sequence = flags.sequence.value_or(spec.sequence);
    spec.microbatch_size = flags.microbatch_size.value_or(spec.microbatch_size);
    spec.dtype = flags.dtype.value_or(spec.dtype);
    spec.device_tflops = flags.device_tflops.value_or(spec.device_tflops);
    spec.vocabulary = flags.vocabulary.value_or(spec.vocabulary);
}

// A time flag beside a model that derives the times would silently replace the model (or be
// silently ignored): refuse the mix, naming both.
void refuse_times_beside_a_model(const ExperimentOptions& options, const Experiment& experiment) {
    const char* flag = options.forward    ? "--f"
                       : options.input    ? "--i"
                       : options.weight   ? "--w"
                       : options.backward ? "--b"
                                          : nullptr;
    if (!flag || (!experiment.transformer && !experiment.layers))
        return;
    const std::string origin = options.transformer.any_but_layers() && !experiment.layers
                                   ? std::string("the transformer flags (--hidden, ...) describe")
                                   : fmt::format("{} has {}, which derives", experiment.source,
                                                 experiment.layers ? "[layers] (measured per layer)"
                                                                   : "a [transformer] section");
    throw ExperimentError(fmt::format(
        "{}: {} every stage's F, I and W; give stage times or a model, not both (drop {}, or "
        "leave the model out)",
        flag, origin, flag));
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

namespace {

CLI::Option* add_ratio_setter(CLI::App& command, const std::string& name,
                              std::function<void(double)> store, const std::string& description) {
    return command
        .add_option_function<std::string>(
            name,
            [name, store](const std::string& text) {
                try {
                    store(parse_ratio(text));
                } catch (const UnitParseError& error) {
                    throw ExperimentError(fmt::format("{}: {}", name, error.what()));
                }
            },
            description)
        ->type_name("RATIO");
}

}  // namespace

CLI::Option* add_ratio_option(CLI::App& command, const std::string& name,
                              std::optional<double>& target, const std::string& description) {
    return add_ratio_setter(
        command, name, [&target](double ratio) { target = ratio; }, description);
}

CLI::Option* add_ratio_option(CLI::App& command, const std::string& name, double& target,
                              const std::string& description) {
    return add_ratio_setter(
        command, name, [&target](double ratio) { target = ratio; }, description);
}

void add_experiment_options(CLI::App& command, ExperimentOptions& options, bool with_costs) {
    command
        .add_option("experiment", options.file,
                    "Experiment TOML file (default: the embedded 1F1B pp=4 m=8 example)")
        ->check(input_file(command.get_name(), {traces::FileKind::experiment_toml},
                           "an experiment (TOML)"));
    command.add_option(
        "--schedule", options.schedule,
        "Schedule kind: GPipe, 1F1B, Interleaved1F1B, LoopedBFS, "
        "InterleavedZeroBubble, ZBVZeroBubble, DualPipeV, ZeroBubbleH2, ZeroBubbleAuto");
    command
        .add_option("--schedule-file", options.schedule_file,
                    with_costs ? "A PyTorch CSV schedule to simulate instead of a generated kind"
                               : "A PyTorch CSV schedule to run instead of a generated kind")
        ->check(input_file(command.get_name(), {traces::FileKind::schedule_csv},
                           "a schedule (PyTorch CSV)"));
    command.add_option("--notation", options.notation,
                       "The schedule file's action notation: auto (default: inferred, noted when "
                       "legacy), current (F, I, W, B = full backward) or legacy (PyTorch's older "
                       "F, B = input backward, W, BW = full backward)");
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
    command.add_option("--b", options.backward,
                       "Full backward (B) time per stage (default I+W; given alone, I and W are "
                       "its halves)");
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
    add_ratio_option(command, "--overlap-efficiency", options.overlap_efficiency,
                     "Share of the shorter part OVERLAP_F_B hides, 0 to 1 (0.5 or 50%), never "
                     "its arithmetic where the costs come from FLOPs (default 0)");
    command.add_option("--rank-slowdown", options.rank_slowdown,
                       "A straggler: per rank, how many times its stage costs its computations "
                       "take (1,1.8: rank 1 takes 1.8 times as long)");
    command.add_option("--costs-per", options.costs_per,
                       "What --f/--i/--w/--b and --held-activation-bytes are the cost of: stage "
                       "(default), model (divided over the pp x v stages) or layer (times each "
                       "stage's layers; --layers)");
    add_transformer_options(command, options.transformer);
}

void add_transformer_options(CLI::App& command, ExperimentOptions::TransformerFlags& flags) {
    const std::string group = "Transformer ([transformer] in a file; stage times from FLOPs)";
    add_count_option(command, "--layers", flags.layers,
                     "Model layers (with --costs-per layer: the count per-layer costs multiply)", 1)
        ->group(group);
    add_count_option(command, "--hidden", flags.hidden, "Hidden size", 1)->group(group);
    add_count_option(command, "--heads", flags.heads, "Attention heads", 1)->group(group);
    add_count_option(command, "--sequence", flags.sequence, "Sequence length", 1)->group(group);
    add_count_option(command, "--microbatch-size", flags.microbatch_size,
                     "Sequences per microbatch (default 1)", 1)
        ->group(group);
    command.add_option("--dtype", flags.dtype, "fp32, bf16 (default), fp16 or fp8")->group(group);
    command.add_option("--device-tflops", flags.device_tflops, "Achieved TFLOP/s per device")
        ->group(group);
    add_count_option(command, "--vocabulary", flags.vocabulary,
                     "Output layer's vocabulary: the last stage adds its logits (default none)", 1)
        ->group(group);
}

// The note goes out once, where the experiment is loaded, not each time the schedule is read.
Experiment with_settled_notation(Experiment experiment) {
    if (const std::string note = settle_schedule_notation(experiment); !note.empty())
        fmt::print(stderr, "pipelens: note: {}\n", note);
    return experiment;
}

// An experiment's `[schedule] file` gets the check --schedule-file gets: a file of another kind
// is named as such instead of failing as a CSV on its first line, and one that cannot be opened
// is named with the experiment and the path it was read at (relative to the experiment's
// folder).
Experiment with_checked_schedule_file(const ExperimentOptions& options, Experiment experiment) {
    if (experiment.schedule_file.empty() || options.schedule || options.schedule_file)
        return experiment;
    const std::string& path = experiment.schedule_file;
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error))
        throw ExperimentError(fmt::format("{}: schedule.file: cannot open {} ({})", options.file,
                                          path,
                                          !std::filesystem::exists(path, error) ? "no such file"
                                          : std::filesystem::is_directory(path, error)
                                              ? "a directory"
                                              : "not a regular file: a FIFO, device or socket"));
    const traces::FileKind kind = traces::file_kind_of(path);
    if (kind != traces::FileKind::schedule_csv && kind != traces::FileKind::unknown)
        throw ExperimentError(
            fmt::format("{}: schedule.file: {} is {}, not a schedule (PyTorch "
                        "CSV)",
                        options.file, path, traces::file_kind_description(kind)));
    return experiment;
}

Experiment load_experiment(const ExperimentOptions& options) {
    if (!options.file.empty())
        return with_settled_notation(apply_experiment_flags(
            options, with_checked_schedule_file(options, read_experiment_file(options.file))));
    if (has_experiment_flags(options)) {
        Experiment plain = plain_experiment();
        if (options.transformer.any_but_layers())  // the model's times replace the unit times
            plain.forward_ns = plain.input_ns = plain.weight_ns = {};
        if (options.backward) {  // a B's unstated parts are derived from it, not unit times
            if (!options.input)
                plain.input_ns = {};
            if (!options.weight)
                plain.weight_ns = {};
        }
        return with_settled_notation(apply_experiment_flags(options, std::move(plain)));
    }
    return default_experiment();
}

ExperimentSweep load_experiment_sweep(const ExperimentOptions& options) {
    if (options.file.empty())
        return {load_experiment(options), {}};
    ExperimentSweep sweep = read_experiment_sweep_file(options.file);
    sweep.experiment = with_settled_notation(apply_experiment_flags(
        options, with_checked_schedule_file(options, std::move(sweep.experiment))));
    return sweep;
}

std::vector<std::string> experiment_input_files(const ExperimentOptions& options) {
    std::vector<std::string> files{options.file, options.schedule_file.value_or("")};
    if (!options.file.empty()) {
        try {
            files.push_back(read_experiment_sweep_file(options.file).experiment.schedule_file);
        } catch (const std::exception&) {
        }
    }
    return files;
}

std::string flag_setting(const ExperimentOptions& options, const std::string& key) {
    const ExperimentOptions::TransformerFlags& model = options.transformer;
    const std::pair<const char*, bool> fields[] = {
        {"schedule.kind", bool(options.schedule)},
        {"schedule.file", bool(options.schedule_file)},
        {"schedule.notation", bool(options.notation)},
        {"schedule.pp", bool(options.pp)},
        {"schedule.v", bool(options.v)},
        {"schedule.m", bool(options.m)},
        {"schedule.defer_recv", options.defer_recv},
        {"schedule.max_activations", bool(options.max_activations)},
        {"costs.f", bool(options.forward)},
        {"costs.i", bool(options.input)},
        {"costs.w", bool(options.weight)},
        {"costs.b", bool(options.backward)},
        {"costs.per", bool(options.costs_per)},
        {"costs.activation_bytes", bool(options.activation_bytes)},
        {"costs.held_activation_bytes", bool(options.held_activation_bytes)},
        {"costs.overlap_efficiency", bool(options.overlap_efficiency)},
        {"costs.rank_slowdown", bool(options.rank_slowdown)},
        {"network.latency", bool(options.p2p_latency)},
        {"network.bandwidth", bool(options.p2p_bandwidth)},
        {"network.ranks_per_host", bool(options.ranks_per_host)},
        {"network.rendezvous", options.rendezvous},
        {"transformer.layers", bool(model.layers)},
        {"transformer.hidden", bool(model.hidden)},
        {"transformer.heads", bool(model.heads)},
        {"transformer.sequence", bool(model.sequence)},
        {"transformer.microbatch_size", bool(model.microbatch_size)},
        {"transformer.dtype", bool(model.dtype)},
        {"transformer.device_tflops", bool(model.device_tflops)},
        {"transformer.vocabulary", bool(model.vocabulary)},
    };
    const std::pair<const char*, const char*> flags[] = {
        {"schedule.kind", "--schedule"},
        {"schedule.file", "--schedule-file"},
        {"schedule.defer_recv", "--defer-recv"},
        {"schedule.max_activations", "--max-activations"},
        {"costs.per", "--costs-per"},
        {"network.latency", "--p2p-latency"},
        {"network.bandwidth", "--p2p-bandwidth"},
        {"network.ranks_per_host", "--ranks-per-host"},
        {"network.rendezvous", "--rendezvous"},
    };
    for (const auto& [field, given] : fields) {
        if (key != field || !given)
            continue;
        for (const auto& [named, flag] : flags)
            if (key == named)
                return flag;
        // The rest are named after their key: schedule.pp -> --pp, costs.f -> --f,
        // transformer.microbatch_size -> --microbatch-size.
        std::string flag = "--" + key.substr(key.find('.') + 1);
        std::replace(flag.begin(), flag.end(), '_', '-');
        return flag;
    }
    return {};
}

Experiment apply_experiment_flags(const ExperimentOptions& options, Experiment experiment) {
    if (options.schedule && options.schedule_file)
        throw ExperimentError(fmt::format(
            "--schedule {} and --schedule-file {} both give the schedule: keep one (a CSV "
            "schedule says its own order; --schedule generates one)",
            *options.schedule, *options.schedule_file));
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
    if (options.notation) {
        try {
            experiment.schedule_notation = parse_notation_choice(*options.notation);
        } catch (const ScheduleFileError& error) {
            throw ExperimentError(fmt::format("--notation: {}", error.what()));
        }
        if (experiment.schedule_file.empty())
            throw ExperimentError(
                "--notation is the notation of a schedule file: give one with --schedule-file (or "
                "[schedule] file)");
    }
    if (options.pp) {
        experiment.shape.rank_count = *options.pp;
        experiment.rank_count_source = "--pp";
    }
    if (options.v) {
        experiment.shape.stages_per_rank = *options.v;
        experiment.stages_per_rank_source = "--v";
    }
    if (options.m) {
        set_microbatch_count(experiment, *options.m);
        experiment.microbatch_count_source = "--m";
    }
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
    apply_transformer_flags(options.transformer, experiment);
    refuse_times_beside_a_model(options, experiment);
    if (options.costs_per) {
        try {
            experiment.cost_scope = parse_cost_scope(*options.costs_per);
        } catch (const ExperimentError& error) {
            throw ExperimentError(fmt::format("--costs-per: {}", error.what()));
        }
    }
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
