// Which layouts a plan prices: every tensor x pipeline x data parallel split of the GPUs, with
// each microbatch size that divides the global batch and each schedule kind and v that can run
// it, pins applied (sim/training_plan.hpp declares these).
//
// Invariants: a pin that breaks a rule is refused by name (PlanError), never reported as "no
// layout"; a layout past the schedule size limit, or whose schedule a pricing worker cannot
// hold, is refused as too large (ScheduleTooLargeError) before any schedule is built.
#include <algorithm>
#include <climits>
#include <functional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/run_record/parallel_for.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "sim/training_plan.hpp"

namespace pipelens::sim {
namespace {

std::vector<int> divisors(int n) {
    std::vector<int> result;
    for (int d = 1; d <= n; ++d)
        if (n % d == 0)
            result.push_back(d);
    return result;
}

template <typename T>
bool allowed(const std::optional<T>& pin, T value) {
    return !pin || *pin == value;
}

// The pins checked against the model and the cluster one by one, so an impossible one is
// named by its rule rather than reported as "no layout".
void check_pins(const ModelSpec& model, const ClusterSpec& cluster, const PlanPins& pins,
                bool pp_from_layout) {
    const GptShape& shape = model.shape;
    if (cluster.gpus_per_host > 0 && cluster.gpus > cluster.gpus_per_host &&
        cluster.gpus % cluster.gpus_per_host != 0)
        throw PlanError(
            fmt::format("--gpus-per-host {}: must divide the GPUs ({}): every host "
                        "holds as many GPUs",
                        cluster.gpus_per_host, cluster.gpus));
    if (pins.v && *pins.v != 1 && pins.schedule && !is_multi_stage(*pins.schedule))
        throw PlanError(fmt::format(
            "{}: {} runs one stage per rank (v = 1); give {} or a schedule of several stages per "
            "rank (Interleaved1F1B, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV, LoopedBFS)",
            pins.layers_per_stage.empty()
                ? fmt::format("--v {}", *pins.v)
                : fmt::format("--layout has {} stages on pp={}, so v is {}",
                              pins.layers_per_stage.size(), pins.pp.value_or(0), *pins.v),
            schedule_kind_name(*pins.schedule),
            pins.layers_per_stage.empty() ? "--v 1" : "a layout of pp stages"));
    if (pins.tp && (cluster.gpus % *pins.tp != 0 || shape.hidden % *pins.tp != 0 ||
                    shape.heads % *pins.tp != 0))
        throw PlanError(
            fmt::format("--tp {}: must divide the GPUs ({}), the hidden size ({}) "
                        "and the heads ({})",
                        *pins.tp, cluster.gpus, shape.hidden, shape.heads));
    const bool split = !pins.layers_per_stage.empty();  // any pp may split its layers then
    if (pins.pp && pp_from_layout && cluster.gpus % *pins.pp != 0)
        throw PlanError(
            fmt::format("--layout has {} stages, so pp is {}: it must divide the GPUs "
                        "({}; give --pp to run the stages as pp x v)",
                        pins.layers_per_stage.size(), *pins.pp, cluster.gpus));
    if (pins.pp && cluster.gpus % *pins.pp != 0)
        throw PlanError(fmt::format("--pp {}: must divide the GPUs ({})", *pins.pp, cluster.gpus));
    if (pins.pp && !split && shape.layers % *pins.pp != 0)
        throw PlanError(
            fmt::format("--pp {}: must divide the layers ({}; a --layout splits them "
                        "unevenly)",
                        *pins.pp, shape.layers));
    if (pins.dp && (cluster.gpus % *pins.dp != 0 || model.global_batch % *pins.dp != 0))
        throw PlanError(fmt::format("--dp {}: must divide the GPUs ({}) and the global batch ({})",
                                    *pins.dp, cluster.gpus, model.global_batch));
    if (pins.tp && pins.pp && pins.dp && *pins.tp * *pins.pp * *pins.dp != cluster.gpus)
        throw PlanError(fmt::format("--tp {} x --pp {} x --dp {} must equal the GPUs ({})",
                                    *pins.tp, *pins.pp, *pins.dp, cluster.gpus));
    if (pins.dp && pins.microbatch_size && pins.m &&
        *pins.dp * *pins.microbatch_size * *pins.m != model.global_batch)
        throw PlanError(
            fmt::format("--dp {} x --microbatch-size {} x --m {} must equal the global batch ({})",
                        *pins.dp, *pins.microbatch_size, *pins.m, model.global_batch));
}

// The pins with a pinned split's pp and v (its stage count is pp x v; pp is that count unless
// pinned), checked against the model's layers and the other pins.
PlanPins with_split_pins(const ModelSpec& model, PlanPins pins) {
    if (pins.layers_per_stage.empty())
        return pins;
    const int stages = static_cast<int>(pins.layers_per_stage.size());
    int layers = 0;
    for (const int count : pins.layers_per_stage)
        layers += count;
    if (layers != model.shape.layers)
        throw PlanError(fmt::format("--layout has {} transformer layers, the model {} (--layers)",
                                    layers, model.shape.layers));
    const int pp = pins.pp.value_or(stages);
    if (stages % pp != 0)
        throw PlanError(fmt::format(
            "--layout has {} stages: --pp {} must divide them (pp x v stages)", stages, pp));
    if (pins.v && *pins.v * pp != stages)
        throw PlanError(
            fmt::format("--layout has {} stages, not --pp {} x --v {}", stages, pp, *pins.v));
    pins.pp = pp;
    pins.v = stages / pp;
    return pins;
}

// Whether `pp` x `v` stages can hold the model: a pinned split's stage count exactly, else the
// layers spread evenly.
bool stages_fit(const ModelSpec& model, const PlanPins& pins, int pp, int v) {
    if (!pins.layers_per_stage.empty())
        return static_cast<int>(pins.layers_per_stage.size()) == pp * v;
    return model.shape.layers % (pp * v) == 0;
}

// The schedule shapes a (tp, pp, dp, microbatch size) can run, pins applied.
void add_schedules(PlanLayout layout, const ModelSpec& model, const PlanOptions& options,
                   std::vector<PlanLayout>& out) {
    std::vector<ScheduleKind> kinds = options.schedules;
    if (options.pins.schedule)
        kinds = {*options.pins.schedule};
    for (const ScheduleKind kind : kinds) {
        std::vector<int> vs = {1};
        if (is_multi_stage(kind) && layout.pp == 1)
            continue;  // v stages on one GPU are one stage run in pieces
        if (!is_multi_stage(kind) && options.pins.v && *options.pins.v != 1)
            continue;  // a pinned v > 1 asks for stages this kind cannot take
        if (is_multi_stage(kind))
            vs = options.pins.v ? std::vector<int>{*options.pins.v} : options.virtual_stages;
        for (const int v : vs) {
            // A pinned split of pp stages runs single-stage kinds, not v = 1 of a multi-stage one.
            const bool one_stage_interleaved =
                !options.pins.layers_per_stage.empty() && is_multi_stage(kind) && v == 1;
            if (!stages_fit(model, options.pins, layout.pp, v) || one_stage_interleaved)
                continue;
            try {
                validate_shape({kind, layout.pp, v, layout.m});
            } catch (const ScheduleConfigError& error) {
                // Past the limit no kind could run it: the global batch is what is too large.
                if (std::int64_t{layout.pp} * v * layout.m > kMaxStageMicrobatches)
                    throw ScheduleTooLargeError(fmt::format(
                        "layout tp={} pp={} dp={} microbatch size {}: {}; m is the global batch "
                        "(in sequences) over dp x microbatch size",
                        layout.tp, layout.pp, layout.dp, layout.microbatch_size, error.what()));
                continue;
            }
            layout.schedule = kind;
            layout.v = v;
            out.push_back(layout);
        }
    }
}

// Every layout the pins allow; none (not an error) when they allow none.
std::vector<PlanLayout> allowed_layouts(const ModelSpec& model, const ClusterSpec& cluster,
                                        const PlanOptions& given) {
    PlanOptions options = given;
    options.pins = with_split_pins(model, given.pins);
    const PlanPins& pins = options.pins;
    check_pins(model, cluster, pins, !given.pins.pp && !given.pins.layers_per_stage.empty());
    std::vector<PlanLayout> layouts;
    for (const int tp : divisors(cluster.gpus)) {
        // Unpinned, tp is at most a host's GPUs (Megatron's rule keeps a group in one host; one
        // that does not divide them has groups straddling two, priced across hosts,
        // sim/rank_hosts.hpp); pinned, it may span hosts.
        const bool tp_fits = pins.tp || tp <= cluster.gpus_per_host;
        if (!allowed(pins.tp, tp) || !tp_fits || model.shape.hidden % tp != 0 ||
            model.shape.heads % tp != 0)
            continue;
        for (const int pp : divisors(cluster.gpus / tp)) {
            const int dp = cluster.gpus / (tp * pp);
            const bool layers_fit = !pins.layers_per_stage.empty() || model.shape.layers % pp == 0;
            if (!allowed(pins.pp, pp) || !allowed(pins.dp, dp) || !layers_fit)
                continue;
            std::vector<int> sizes = options.microbatch_sizes;
            if (pins.microbatch_size)
                sizes = {*pins.microbatch_size};
            for (const int size : sizes) {
                if (model.global_batch % (static_cast<std::int64_t>(dp) * size) != 0)
                    continue;
                const std::int64_t microbatches = model.global_batch / (dp * size);
                if (microbatches > INT_MAX)
                    throw ScheduleTooLargeError(fmt::format(
                        "the global batch ({}) is {} microbatches of {} on dp={}: more than a "
                        "schedule holds ({}); the global batch counts sequences, not tokens",
                        model.global_batch, microbatches, size, dp, INT_MAX));
                const auto m = static_cast<int>(microbatches);
                if (allowed(pins.m, m))
                    add_schedules({tp, pp, dp, ScheduleKind::one_f_one_b, 1, size, m}, model,
                                  options, layouts);
            }
        }
    }
    return layouts;
}

// One pin given, by its flag, with the rule it takes part in.
struct PinRule {
    std::string flag;  // "--m 7"
    std::string rule;
};

// The pins each of which, left out, lets some layout through: they are what allows none.
std::vector<PinRule> blocking_pins(const ModelSpec& model, const ClusterSpec& cluster,
                                   const PlanOptions& options) {
    const PlanPins& pins = options.pins;
    const std::string batch = fmt::format(
        "m is the global batch ({}) over dp x microbatch size, so dp x microbatch size must divide "
        "it",
        model.global_batch);
    const std::string accepts =
        "the schedule must accept pp, v and m (GPipe, 1F1B and ZeroBubbleH2 run one stage per "
        "rank; the interleaved ones need the layers to split into pp x v stages)";
    std::vector<std::pair<PinRule, std::function<void(PlanPins&)>>> candidates;
    const auto add = [&](const auto& pin, const char* flag, std::string rule, auto clear) {
        if (pin)
            candidates.push_back({{fmt::format("{} {}", flag, *pin), std::move(rule)}, clear});
    };
    add(pins.m, "--m", batch, [](PlanPins& p) { p.m.reset(); });
    add(pins.microbatch_size, "--microbatch-size", batch,
        [](PlanPins& p) { p.microbatch_size.reset(); });
    add(pins.dp, "--dp", batch, [](PlanPins& p) { p.dp.reset(); });
    add(pins.v, "--v", accepts, [](PlanPins& p) { p.v.reset(); });
    if (pins.schedule)
        candidates.push_back(
            {{fmt::format("--schedule {}", schedule_kind_name(*pins.schedule)), accepts},
             [](PlanPins& p) { p.schedule.reset(); }});
    add(pins.pp, "--pp", accepts, [](PlanPins& p) { p.pp.reset(); });
    add(pins.tp, "--tp", "tp x pp x dp must equal the GPUs", [](PlanPins& p) { p.tp.reset(); });
    std::vector<PinRule> blocking;
    for (const auto& [pin, clear] : candidates) {
        PlanOptions without = options;
        clear(without.pins);
        try {
            if (!allowed_layouts(model, cluster, without).empty())
                blocking.push_back(pin);
        } catch (const PlanError&) {
            // Another rule breaks without this pin: it is not the one to name.
        }
    }
    return blocking;
}

std::string no_layout_message(const ModelSpec& model, const ClusterSpec& cluster,
                              const PlanOptions& options) {
    const std::vector<PinRule> blocking = blocking_pins(model, cluster, options);
    if (blocking.empty())
        return fmt::format(
            "no layout of {} GPUs fits: tp must divide the hidden size ({}) and heads ({}), pp "
            "the layers ({}), and dp x microbatch size the global batch ({}); the schedule must "
            "accept pp and m",
            cluster.gpus, model.shape.hidden, model.shape.heads, model.shape.layers,
            model.global_batch);
    std::vector<std::string> flags;
    std::vector<std::string> rules;
    for (const PinRule& pin : blocking) {
        flags.push_back(pin.flag);
        if (std::find(rules.begin(), rules.end(), pin.rule) == rules.end())
            rules.push_back(pin.rule);
    }
    return fmt::format(
        "{}: no layout of {} GPUs takes {} with the other pins, and leaving {} "
        "out would give some: {}",
        fmt::join(flags, ", "), cluster.gpus, blocking.size() == 1 ? "it" : "them together",
        blocking.size() == 1 ? "it" : "one of them", fmt::join(rules, "; "));
}

}  // namespace

std::vector<PlanLayout> plan_layouts(const ModelSpec& model, const ClusterSpec& cluster,
                                     const PlanOptions& options) {
    std::vector<PlanLayout> layouts = allowed_layouts(model, cluster, options);
    if (layouts.empty())
        throw PlanError(no_layout_message(model, cluster, options));
    return layouts;
}

// Pricing a layout builds and simulates its schedule, one per worker at a time: the largest
// must fit in a worker's share of the memory, or the plan is refused before anything is built
// (a global batch given in tokens would otherwise allocate until the machine gives out).
void check_layouts_fit(const std::vector<PlanLayout>& layouts) {
    const auto bytes = [](const PlanLayout& layout) {
        return estimate_schedule_size({layout.schedule, layout.pp, layout.v, layout.m}).bytes;
    };
    const auto largest = std::max_element(
        layouts.begin(), layouts.end(),
        [&](const PlanLayout& a, const PlanLayout& b) { return bytes(a) < bytes(b); });
    const unsigned workers = run_record::worker_count(layouts.size());
    try {
        check_schedule_fits({largest->schedule, largest->pp, largest->v, largest->m},
                            available_memory_bytes() / workers);
    } catch (const ScheduleTooLargeError& error) {
        throw ScheduleTooLargeError(
            fmt::format("layout tp={} pp={} dp={} microbatch size {} (one of {}, priced {} at a "
                        "time): {}; m is "
                        "the global batch (in sequences) over dp x microbatch size",
                        largest->tp, largest->pp, largest->dp, largest->microbatch_size,
                        layouts.size(), workers, error.what()));
    }
}

}  // namespace pipelens::sim
