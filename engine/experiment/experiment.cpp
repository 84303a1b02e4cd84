// Validation of an experiment and the default one. Checks run before any simulation so a
// mistake is reported against the field a user wrote, not as a failure deep in the simulator.
#include "engine/experiment/experiment.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/experiment/experiment_toml.hpp"

namespace pipelens {
namespace {

void require(bool condition, const Experiment& experiment, std::string_view field,
             const std::string& why) {
    if (!condition)
        throw ExperimentError(fmt::format("{}: {}: {}", experiment.source, field, why));
}

template <typename Value>
void check_per_stage(const std::vector<Value>& values, int stage_count,
                     const Experiment& experiment, std::string_view field) {
    require(values.size() <= 1 || static_cast<int>(values.size()) == stage_count, experiment, field,
            fmt::format("has {} values but the schedule has {} stages (give one value for all "
                        "stages or one per stage)",
                        values.size(), stage_count));
}

void validate_transformer(const TransformerSpec& spec, int stage_count,
                          const Experiment& experiment) {
    // The dtype first: `--dtype fp3` alone was answered with the hidden size it did not give.
    try {
        dtype_bytes(spec.dtype);
    } catch (const ExperimentError& error) {
        throw ExperimentError(fmt::format("{}: {}", experiment.source, error.what()));
    }
    require(spec.hidden > 0, experiment, "transformer.hidden", "must be a positive integer");
    require(spec.sequence > 0, experiment, "transformer.sequence", "must be a positive integer");
    require(spec.microbatch_size > 0, experiment, "transformer.microbatch_size",
            "must be a positive integer");
    require(spec.heads > 0, experiment, "transformer.heads", "must be a positive integer");
    require(spec.hidden % spec.heads == 0, experiment, "transformer.heads",
            fmt::format("{} heads do not divide the hidden size {} (each head takes hidden / "
                        "heads of it)",
                        spec.heads, spec.hidden));
    // Not infinite either: an infinitely fast device made every cost 0 ns.
    require(spec.device_tflops > 0 && std::isfinite(spec.device_tflops), experiment,
            "transformer.device_tflops",
            "must be a positive finite number (achieved TFLOP/s per device)");
    if (spec.layers_per_stage.empty()) {
        require(spec.layers >= stage_count, experiment, "transformer.layers",
                fmt::format("{} layers cannot fill {} stages", spec.layers, stage_count));
        return;
    }
    require(static_cast<int>(spec.layers_per_stage.size()) == stage_count, experiment,
            "transformer.layers_per_stage",
            fmt::format("has {} values but the schedule has {} stages",
                        spec.layers_per_stage.size(), stage_count));
    for (int layers : spec.layers_per_stage)
        require(layers >= 0, experiment, "transformer.layers_per_stage",
                "layer counts cannot be negative");
    // A stage without layers computes nothing and simulates as free (all zeros made a 0 ns
    // step); only the last one still has work without them, the output layer's logits.
    for (int stage = 0; stage < stage_count; ++stage) {
        const bool keeps_output = stage + 1 == stage_count && spec.vocabulary > 0;
        require(spec.layers_per_stage[static_cast<std::size_t>(stage)] > 0 || keeps_output,
                experiment, "transformer.layers_per_stage",
                fmt::format("[{}] gives stage {} no layers, and a stage without layers computes "
                            "nothing (only the last stage may have none, when "
                            "transformer.vocabulary gives it the output layer)",
                            fmt::join(spec.layers_per_stage, ", "), stage));
    }
    const int total =
        std::accumulate(spec.layers_per_stage.begin(), spec.layers_per_stage.end(), 0);
    require(spec.layers == 0 || total == spec.layers, experiment, "transformer.layers_per_stage",
            fmt::format("[{}] adds up to {} layers but transformer.layers is {}",
                        fmt::join(spec.layers_per_stage, ", "), total, spec.layers));
}

// Per model or per layer, a figure is one number to divide, and it describes flat costs only:
// [transformer] and [layers] are already per layer and divide themselves.
void validate_cost_scope(const Experiment& experiment, int stage_count) {
    if (experiment.cost_scope == CostScope::stage)
        return;
    const std::string_view scope = cost_scope_name(experiment.cost_scope);
    require(!experiment.transformer && !experiment.layers, experiment, "costs.per",
            fmt::format("\"{}\" applies to costs.f/i/w/b; [{}] is already per layer and is "
                        "divided over the stages by its layers",
                        scope, experiment.transformer ? "transformer" : "layers"));
    const auto one_value = [&](const auto& values, std::string_view field) {
        require(values.size() <= 1, experiment, field,
                fmt::format("has {} values, but with costs.per = \"{}\" it is one figure, the "
                            "whole {}'s, which pipelens divides over the stages",
                            values.size(), scope, scope));
    };
    one_value(experiment.forward_ns, "costs.f");
    one_value(experiment.input_ns, "costs.i");
    one_value(experiment.weight_ns, "costs.w");
    one_value(experiment.backward_ns, "costs.b");
    one_value(experiment.held_activation_bytes, "costs.held_activation_bytes");
    if (experiment.cost_scope == CostScope::layer)
        require(experiment.model.layers >= stage_count, experiment, "model.layers",
                experiment.model.layers == 0
                    ? std::string("missing: costs.per = \"layer\" needs the model's layer count "
                                  "([model] layers, or --layers)")
                    : fmt::format("{} layers cannot fill {} stages", experiment.model.layers,
                                  stage_count));
}

void validate_layers(const LayerCosts& layers, const Experiment& experiment) {
    require(!layers.names.empty(), experiment, "layers.names",
            "missing: name every model layer, in order (\"layers.0\", ...)");
    // A split point is a layer's name: a name given twice would split at the first of them.
    std::map<std::string_view, std::size_t> first_named;
    for (std::size_t index = 0; index < layers.names.size(); ++index) {
        const auto [seen, fresh] = first_named.emplace(layers.names[index], index);
        if (!fresh)
            require(false, experiment, "layers.names",
                    fmt::format("\"{}\" names layers {} and {}: give each layer its own name",
                                layers.names[index], seen->second, index));
    }
    const auto one_per_layer = [&](const std::vector<std::int64_t>& values, std::string_view key) {
        require(values.size() == layers.names.size(), experiment, fmt::format("layers.{}", key),
                fmt::format("has {} values but layers.names has {} layers: give one per layer",
                            values.size(), layers.names.size()));
    };
    one_per_layer(layers.forward_ns, "f");
    one_per_layer(layers.input_ns, "i");
    one_per_layer(layers.weight_ns, "w");
    one_per_layer(layers.backward_ns, "b");
    one_per_layer(layers.held_bytes, "held_bytes");
    one_per_layer(layers.output_bytes, "output_bytes");
    one_per_layer(layers.gradient_bytes, "gradient_bytes");
    one_per_layer(layers.backward_peak_bytes, "backward_peak_bytes");
    if (!layers.input_kept_bytes.empty())
        one_per_layer(layers.input_kept_bytes, "input_kept_bytes");
    require(experiment.model.layers == 0 ||
                experiment.model.layers == static_cast<int>(layers.names.size()),
            experiment, "model.layers",
            fmt::format("is {} but [layers] measured {} layers", experiment.model.layers,
                        layers.names.size()));
    require(!experiment.transformer && experiment.forward_ns.empty() &&
                experiment.input_ns.empty() && experiment.weight_ns.empty() &&
                experiment.backward_ns.empty() && experiment.held_activation_bytes.empty(),
            experiment, "layers",
            "give either [layers] or per-stage costs (costs.f/i/w/b/held_activation_bytes, "
            "[transformer]), not both: the layers derive every stage's costs");
}

}  // namespace

std::string ActivationLimit::text() const {
    if (!times_pp)
        return std::to_string(count);
    return count == 1 ? "p" : fmt::format("{}p", count);
}

ActivationLimit parse_activation_limit(std::string_view text) {
    ActivationLimit limit;
    std::string_view digits = text;
    if (digits.ends_with('p')) {
        limit.times_pp = true;
        digits.remove_suffix(1);
    }
    if (digits.empty() && limit.times_pp) {
        limit.count = 1;
        return limit;
    }
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), limit.count);
    if (error != std::errc{} || end != digits.data() + digits.size() || limit.count < 1 ||
        limit.count > 1'000'000)
        throw ExperimentError(fmt::format(
            "'{}' is not a memory limit: give microbatches of activations per stage, a count "
            "from 1 to 1000000 (\"12\") or a multiple of pp (\"p\", \"2p\")",
            text));
    return limit;
}

CostScope parse_cost_scope(std::string_view text) {
    for (CostScope scope : {CostScope::stage, CostScope::model, CostScope::layer})
        if (text == cost_scope_name(scope))
            return scope;
    throw ExperimentError(fmt::format(
        "'{}' is not a cost scope: give \"stage\" (each figure is one stage's), \"model\" (the "
        "whole model's, divided over the pp x v stages) or \"layer\" (one layer's, times the "
        "layers of each stage)",
        text));
}

std::string_view cost_scope_name(CostScope scope) {
    switch (scope) {
        case CostScope::stage:
            return "stage";
        case CostScope::model:
            return "model";
        case CostScope::layer:
            return "layer";
    }
    return "stage";
}

std::string cost_scope_note(const Experiment& experiment, int stages_per_rank) {
    const auto flat = [](const std::vector<std::int64_t>& values) { return values.size() <= 1; };
    if (experiment.cost_scope != CostScope::stage || stages_per_rank <= 1 ||
        experiment.transformer || experiment.layers || !flat(experiment.forward_ns) ||
        !flat(experiment.input_ns) || !flat(experiment.weight_ns) || !flat(experiment.backward_ns))
        return {};
    return fmt::format(
        "costs are per stage: with v={0} each rank runs {0} stages, so a rank computes {0} x the "
        "given F, I and W, a model {0} times the size of the same pp at v=1; to compare one model "
        "across schedules give --costs-per model (costs.per = \"model\")",
        stages_per_rank);
}

Experiment default_experiment() {
    return parse_experiment_toml(default_experiment_toml(), "default experiment");
}

Experiment plain_experiment() {
    Experiment experiment;
    experiment.source = "command line";
    experiment.shape = {ScheduleKind::one_f_one_b, 4, 1, 8};
    experiment.forward_ns = experiment.input_ns = experiment.weight_ns = {1000};
    return experiment;
}

void set_microbatch_count(Experiment& experiment, int microbatch_count) {
    const int measured_count = experiment.shape.microbatch_count;
    ModelDescription& model = experiment.model;
    experiment.shape.microbatch_count = microbatch_count;
    if (!experiment.layers || measured_count < 1 || model.batch_size % measured_count != 0)
        return;
    const std::int64_t batch =
        std::int64_t{model.batch_size / measured_count} * std::int64_t{microbatch_count};
    if (batch <= std::numeric_limits<int>::max())
        model.batch_size = static_cast<int>(batch);
}

int dtype_bytes(const std::string& dtype) {
    if (dtype == "fp32" || dtype == "f32" || dtype == "float32")
        return 4;
    if (dtype == "bf16" || dtype == "bfloat16" || dtype == "fp16" || dtype == "f16" ||
        dtype == "float16")
        return 2;
    if (dtype == "fp8" || dtype == "f8")
        return 1;
    throw ExperimentError(
        fmt::format("transformer.dtype: unknown dtype '{}' (use fp32, bf16, fp16 or fp8)", dtype));
}

void validate_experiment(const Experiment& experiment) {
    // A file allows pp and v up to 10^9 each, whose product overflows int (found by fuzzing).
    constexpr std::int64_t kMaxStages = kMaxStageMicrobatches;  // validate_shape's, m = 1
    const std::int64_t stages =
        std::int64_t{experiment.shape.rank_count} * experiment.shape.stages_per_rank;
    require(stages <= kMaxStages, experiment, "schedule",
            fmt::format("pp*v = {}*{} stages is too large (the limit is {})",
                        experiment.shape.rank_count, experiment.shape.stages_per_rank, kMaxStages));
    validate_experiment(experiment, static_cast<int>(stages));
}

namespace {

// Ratios of a time to a typical one: positive, finite, ascending, at most kWidestJitter apart.
void check_ratio_quantiles(const std::vector<double>& quantiles, const Experiment& experiment,
                           const std::string& field) {
    for (std::size_t index = 0; index < quantiles.size(); ++index) {
        const double value = quantiles[index];
        if (!(std::isfinite(value) && value > 0 && value <= 1e6))
            require(false, experiment, field,
                    fmt::format("value {} is {}: each is a time over a typical one, above 0 "
                                "and at most 1000000",
                                index + 1, value));
        if (index > 0 && value < quantiles[index - 1])  // (the message reads the one before)
            require(false, experiment, field,
                    fmt::format("value {} ({}) is below the one before it ({}): quantiles ascend",
                                index + 1, value, quantiles[index - 1]));
    }
    if (!quantiles.empty() && quantiles.back() > kWidestJitter * quantiles.front())
        require(false, experiment, field,
                fmt::format("the most ({}) is over {} times the fewest ({}): no machine's noise "
                            "is that wide",
                            quantiles.back(), kWidestJitter, quantiles.front()));
}

void validate_jitter(const JitterSpec& jitter, const Experiment& experiment) {
    require(jitter.quantiles.size() >= 2, experiment, "jitter.quantiles",
            fmt::format("has {} value{}; give at least two (what a computation takes of its "
                        "group's centre, from the fewest to the most)",
                        jitter.quantiles.size(), jitter.quantiles.size() == 1 ? "" : "s"));
    check_ratio_quantiles(jitter.quantiles, experiment, "jitter.quantiles");
    require(jitter.step_quantiles.empty() || jitter.step_quantiles.size() >= 2, experiment,
            "jitter.step_quantiles",
            "has 1 value; give at least two (what a step's computations took of the median "
            "step's, from the fewest to the most), or leave the key out");
    check_ratio_quantiles(jitter.step_quantiles, experiment, "jitter.step_quantiles");
    require(jitter.draws >= 1 && jitter.draws <= kMostJitterDraws, experiment, "jitter.draws",
            fmt::format("{} draws: give 1 to {}", jitter.draws, kMostJitterDraws));
    require(jitter.seed >= 0, experiment, "jitter.seed",
            fmt::format("{} is below 0: give a seed from 0 to 1000000000", jitter.seed));
}

}  // namespace

JitterCentre parse_jitter_centre(std::string_view text) {
    if (text == "mean")
        return JitterCentre::mean;
    if (text == "median")
        return JitterCentre::median;
    throw ExperimentError(fmt::format("'{}' is not a centre: use \"mean\" or \"median\"", text));
}

void check_transport_name(std::string_view transport) {
    if (transport != "local" && transport != "gloo" && transport != "nccl")
        throw ExperimentError(
            fmt::format("'{}' is no transport: use local, gloo or nccl", transport));
}

std::string_view jitter_centre_name(JitterCentre centre) {
    return centre == JitterCentre::median ? "median" : "mean";
}

// B is the whole backward, I + W: a B stated with only one of its parts is split as the rest
// of B beside that part (sim/experiment_costs.cpp), and a part larger than B left the other one
// negative, which was clamped to 0 without a word (--b 1 --w 5 made ZeroBubbleH2 three times
// slower than 1F1B on the same model).
void validate_backward_split(const Experiment& experiment, int stage_count) {
    const bool input_stated = !experiment.input_ns.empty();
    const bool weight_stated = !experiment.weight_ns.empty();
    if (experiment.backward_ns.empty() || input_stated == weight_stated)
        return;
    const std::vector<std::int64_t>& part =
        input_stated ? experiment.input_ns : experiment.weight_ns;
    const auto at = [](const std::vector<std::int64_t>& values, int stage) {
        return values.size() == 1 ? values.front() : values.at(static_cast<std::size_t>(stage));
    };
    for (int stage = 0; stage < stage_count; ++stage) {
        const std::int64_t backward = at(experiment.backward_ns, stage);
        const std::int64_t stated = at(part, stage);
        require(stated <= backward, experiment, input_stated ? "costs.i" : "costs.w",
                fmt::format("{} ns{} is more than costs.b, {} ns: B is the whole backward, I + W, "
                            "so {} would be negative; give a B of at least {}, or give {} too",
                            stated, part.size() == 1 ? "" : fmt::format(" (stage {})", stage),
                            backward, input_stated ? "W" : "I", input_stated ? "I" : "W",
                            input_stated ? "costs.w" : "costs.i"));
    }
}

void validate_experiment(const Experiment& experiment, int stage_count) {
    require(experiment.shape.rank_count > 0, experiment, "schedule.pp",
            "missing: give the number of pipeline ranks in [schedule] or with --pp");
    require(experiment.shape.microbatch_count > 0, experiment, "schedule.m",
            "missing: give the number of microbatches in [schedule] or with --m");
    require(experiment.max_activations.count == 0 ||
                (experiment.schedule_file.empty() &&
                 experiment.shape.kind == ScheduleKind::zero_bubble_auto),
            experiment, "schedule.max_activations",
            fmt::format("only ZeroBubbleAuto takes a memory limit (the schedule is {}); "
                        "the other kinds' memory follows from their order",
                        experiment.schedule_file.empty()
                            ? std::string(schedule_kind_name(experiment.shape.kind))
                            : experiment.schedule_file));
    if (experiment.schedule_file.empty()) {
        try {
            validate_shape(experiment.shape);
        } catch (const ScheduleConfigError& error) {
            throw ExperimentError(fmt::format("{}: schedule: {}", experiment.source, error.what()));
        }
    }
    check_per_stage(experiment.forward_ns, stage_count, experiment, "costs.f");
    check_per_stage(experiment.input_ns, stage_count, experiment, "costs.i");
    check_per_stage(experiment.weight_ns, stage_count, experiment, "costs.w");
    check_per_stage(experiment.backward_ns, stage_count, experiment, "costs.b");
    check_per_stage(experiment.activation_bytes, stage_count, experiment, "costs.activation_bytes");
    check_per_stage(experiment.held_activation_bytes, stage_count, experiment,
                    "costs.held_activation_bytes");
    validate_cost_scope(experiment, stage_count);
    validate_backward_split(experiment, stage_count);
    if (experiment.transformer)
        validate_transformer(*experiment.transformer, stage_count, experiment);
    if (experiment.layers)
        validate_layers(*experiment.layers, experiment);
    require(experiment.overlap_efficiency >= 0 && experiment.overlap_efficiency <= 1, experiment,
            "costs.overlap_efficiency", "must be between 0 (no overlap) and 1 (full overlap)");
    require(experiment.rank_slowdown.empty() ||
                static_cast<int>(experiment.rank_slowdown.size()) == experiment.shape.rank_count,
            experiment, "costs.rank_slowdown",
            fmt::format("has {} values but the schedule has {} ranks (give one factor per rank)",
                        experiment.rank_slowdown.size(), experiment.shape.rank_count));
    for (double factor : experiment.rank_slowdown)
        require(std::isfinite(factor) && factor > 0 && factor <= 1e6, experiment,
                "costs.rank_slowdown",
                fmt::format("{} is not a slowdown factor (give a number above 0, 1 for a rank at "
                            "its stage costs, 2 for one taking twice as long)",
                            factor));
    if (experiment.jitter)
        validate_jitter(*experiment.jitter, experiment);
    require(experiment.ranks_per_host > 0, experiment, "network.ranks_per_host",
            "must be a positive integer");
    require(
        !experiment.transformer || (experiment.forward_ns.empty() && experiment.input_ns.empty() &&
                                    experiment.weight_ns.empty() && experiment.backward_ns.empty()),
        experiment, "transformer",
        "give either [transformer] or costs.f/i/w/b, not both (the transformer description "
        "derives the times)");
}

}  // namespace pipelens
