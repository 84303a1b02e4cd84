// Schedule family names and the (pp, v, m) rules each family enforces, mirroring the checks
// in the constructors of PyTorch's schedule classes.
#include "engine/schedule/schedule_kind.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "engine/text/nearest_names.hpp"
#include "engine/text/shortened.hpp"

namespace pipelens {
namespace {

std::string lowercase(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::vector<std::string> kind_names() {
    std::vector<std::string> names;
    for (ScheduleKind kind : all_schedule_kinds())
        names.emplace_back(schedule_kind_name(kind));
    return names;
}

std::string known_names() {
    std::string names;
    for (const std::string& name : kind_names())
        names += (names.empty() ? "" : ", ") + name;
    return names;
}

// A short name people use. An alias names exactly one kind at every (pp, v, m) that kind takes;
// a name that means a kind at one v only, or different kinds to different readers, is refused
// with the kind to name instead rather than run as something its name does not say.
struct ScheduleAlias {
    std::vector<std::string> names;  // lowercase
    std::optional<ScheduleKind> kind;
    std::string_view refusal;  // when there is no kind: why, and what to name
};

const std::vector<ScheduleAlias> kAliases = {
    {{"zbv", "zbvzb"}, ScheduleKind::zbv_zero_bubble, {}},
    {{"zbh2", "zb-h2"}, ScheduleKind::zero_bubble_h2, {}},
    {{"zbauto"}, ScheduleKind::zero_bubble_auto, {}},
    {{"zbh1", "zb-h1"},
     std::nullopt,
     "is the zero-bubble paper's ZB-H1, one stage per rank: name InterleavedZeroBubble with "
     "v = 1 (--v 1)"},
    {{"zb1p", "zb-1p"},
     std::nullopt,
     "means two schedules: PyTorch calls InterleavedZeroBubble ZB1P, the zero-bubble paper's "
     "ZB-1p is ZeroBubbleAuto (memory limit p); name the one you mean"},
    {{"zerobubble", "zb"},
     std::nullopt,
     "names a family: InterleavedZeroBubble, ZBVZeroBubble, ZeroBubbleH2 or ZeroBubbleAuto"},
};

std::string unknown_kind_message(std::string_view name) {
    const std::vector<std::string> nearest = nearest_names(name, kind_names());
    const std::string suggestion =
        nearest.empty() ? "" : fmt::format("did you mean {}? ", quoted_alternatives(nearest, ""));
    return fmt::format("unknown schedule kind '{}': {}expected one of {}", shown_text(name, 80),
                       suggestion, known_names());
}

}  // namespace

const std::vector<ScheduleKind>& all_schedule_kinds() {
    static const std::vector<ScheduleKind> kinds = {
        ScheduleKind::gpipe,
        ScheduleKind::one_f_one_b,
        ScheduleKind::interleaved_1f1b,
        ScheduleKind::looped_bfs,
        ScheduleKind::interleaved_zero_bubble,
        ScheduleKind::zbv_zero_bubble,
        ScheduleKind::dual_pipe_v,
        ScheduleKind::zero_bubble_h2,
        ScheduleKind::zero_bubble_auto,
    };
    return kinds;
}

std::string_view schedule_kind_name(ScheduleKind kind) {
    switch (kind) {
        case ScheduleKind::gpipe:
            return "GPipe";
        case ScheduleKind::one_f_one_b:
            return "1F1B";
        case ScheduleKind::interleaved_1f1b:
            return "Interleaved1F1B";
        case ScheduleKind::looped_bfs:
            return "LoopedBFS";
        case ScheduleKind::interleaved_zero_bubble:
            return "InterleavedZeroBubble";
        case ScheduleKind::zbv_zero_bubble:
            return "ZBVZeroBubble";
        case ScheduleKind::dual_pipe_v:
            return "DualPipeV";
        case ScheduleKind::zero_bubble_h2:
            return "ZeroBubbleH2";
        case ScheduleKind::zero_bubble_auto:
            return "ZeroBubbleAuto";
    }
    return "?";
}

ScheduleKind parse_schedule_kind(std::string_view name) {
    std::string key = lowercase(name);
    if (key.starts_with("schedule") && key.size() > 8)
        key = key.substr(8);
    for (ScheduleKind kind : all_schedule_kinds())
        if (key == lowercase(schedule_kind_name(kind)))
            return kind;
    for (const ScheduleAlias& alias : kAliases)
        if (std::find(alias.names.begin(), alias.names.end(), key) != alias.names.end()) {
            if (alias.kind)
                return *alias.kind;
            throw ScheduleConfigError(fmt::format("'{}' {}", name, alias.refusal));
        }
    throw ScheduleConfigError(unknown_kind_message(name));
}

StagePlacement stage_placement(ScheduleKind kind) {
    return kind == ScheduleKind::zbv_zero_bubble || kind == ScheduleKind::dual_pipe_v
               ? StagePlacement::v_shape
               : StagePlacement::loop;
}

bool is_multi_stage(ScheduleKind kind) {
    return kind != ScheduleKind::gpipe && kind != ScheduleKind::one_f_one_b &&
           kind != ScheduleKind::zero_bubble_h2 && kind != ScheduleKind::zero_bubble_auto;
}

namespace {

// The search adds the times up over the pipeline in int64 ns: times whose sum over every
// microbatch and stage passes 2^62 wrapped and gave another order without a word (at 3e7 s per
// pass, pp=32, m=256).
void check_search_times(const ZeroBubbleInputs& times, int pp, int m) {
    const std::int64_t parts[] = {times.forward_ns, times.input_ns, times.weight_ns,
                                  times.communication_ns};
    if (std::any_of(std::begin(parts), std::end(parts), [](std::int64_t t) { return t < 0; }))
        throw ScheduleConfigError(fmt::format(
            "ZeroBubbleAuto: a time is negative (f={} ns, i={} ns, w={} ns, comm={} ns)",
            times.forward_ns, times.input_ns, times.weight_ns, times.communication_ns));
    const double per_microbatch =
        static_cast<double>(times.forward_ns) + static_cast<double>(times.input_ns) +
        static_cast<double>(times.weight_ns) + static_cast<double>(times.communication_ns);
    if (per_microbatch * (static_cast<double>(m) + pp) > 0x1p62)
        throw ScheduleConfigError(fmt::format(
            "ZeroBubbleAuto: f={} ns, i={} ns, w={} ns and comm={} ns over {} microbatches and {} "
            "stages run past 2^62 ns (146 years); the order depends on the times' ratios only, "
            "so give them in a smaller unit",
            times.forward_ns, times.input_ns, times.weight_ns, times.communication_ns, m, pp));
}

}  // namespace

void validate_shape(const ScheduleShape& shape) {
    const std::string_view name = schedule_kind_name(shape.kind);
    const int pp = shape.rank_count;
    const int v = shape.stages_per_rank;
    const int m = shape.microbatch_count;
    if (pp < 1)
        throw ScheduleConfigError(fmt::format("{}: pp must be at least 1 (got pp={})", name, pp));
    if (v < 1)
        throw ScheduleConfigError(fmt::format("{}: v must be at least 1 (got v={})", name, v));
    if (m < 1)
        throw ScheduleConfigError(fmt::format("{}: m must be at least 1 (got m={})", name, m));
    // Each factor is below 2^31, so pp*v fits in 64 bits, and pp*v*m is only formed once pp*v
    // is known to be under the limit (2^29): no product here can overflow.
    constexpr std::int64_t kLimit = kMaxStageMicrobatches;
    const std::int64_t stages = std::int64_t{pp} * v;
    if (stages > kLimit || stages * m > kLimit)
        throw ScheduleSizeLimitError(
            fmt::format("{}: pp*v*m = {}*{}*{} is too large (the limit is {} stage-microbatches)",
                        name, pp, v, m, kLimit));

    switch (shape.kind) {
        case ScheduleKind::zero_bubble_auto:
            if (shape.zero_bubble.max_activations < 0)
                throw ScheduleConfigError(fmt::format(
                    "ZeroBubbleAuto: the memory limit must be at least 1 microbatch's "
                    "activations per stage (got {}); every stage holds one while it runs its F",
                    shape.zero_bubble.max_activations));
            check_search_times(shape.zero_bubble, pp, m);
            [[fallthrough]];
        case ScheduleKind::zero_bubble_h2:
        case ScheduleKind::gpipe:
        case ScheduleKind::one_f_one_b:
            if (v != 1)
                throw ScheduleConfigError(fmt::format(
                    "{} runs exactly one stage per rank, so v must be 1 (got v={}); use "
                    "Interleaved1F1B or LoopedBFS for several stages per rank",
                    name, v));
            if (shape.kind == ScheduleKind::one_f_one_b && m < pp)
                throw ScheduleConfigError(fmt::format(
                    "1F1B needs at least as many microbatches as stages: m={} < stages={} "
                    "(pp={})",
                    m, pp, pp));
            return;
        case ScheduleKind::interleaved_1f1b:
        case ScheduleKind::interleaved_zero_bubble: {
            const int rounds = std::max(1, m / pp);
            if (m % rounds != 0)
                throw ScheduleConfigError(fmt::format(
                    "{} needs m to be a multiple of its number of rounds max(1, m / pp) = {}: "
                    "m={} with pp={} leaves {} microbatches over",
                    name, rounds, m, pp, m % rounds));
            return;
        }
        case ScheduleKind::looped_bfs:
            return;
        case ScheduleKind::zbv_zero_bubble:
        case ScheduleKind::dual_pipe_v:
            if (v != 2)
                throw ScheduleConfigError(fmt::format(
                    "{} places exactly 2 stages per rank in a V shape, so v must be 2 (got v={})",
                    name, v));
            if (shape.kind == ScheduleKind::dual_pipe_v && m < 2 * pp)
                throw ScheduleConfigError(fmt::format(
                    "DualPipeV needs at least as many microbatches as stages: m={} < stages={} "
                    "(2*pp, pp={})",
                    m, 2 * pp, pp));
            return;
    }
}

std::vector<int> stage_to_rank_mapping(StagePlacement placement, int rank_count, int stage_count) {
    std::vector<int> mapping(stage_count);
    for (int stage = 0; stage < stage_count; ++stage) {
        const int position = stage % rank_count;
        const bool going_back = (stage / rank_count) % 2 == 1;
        mapping[stage] = placement == StagePlacement::v_shape && going_back
                             ? rank_count - 1 - position
                             : position;
    }
    return mapping;
}

}  // namespace pipelens
