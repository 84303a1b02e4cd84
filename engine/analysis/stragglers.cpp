// Straggler detection over a recorded run's training steps (stragglers.hpp for the rules).
// Medians follow engine/run_record/statistics.hpp's convention (the upper middle).
#include "engine/analysis/stragglers.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/sorted_values.hpp"
#include "engine/analysis/training_steps.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::analysis {
namespace {

template <typename Value>
Value upper_median(std::vector<Value> values) {
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

std::int64_t duration(const ActionSpan& span) {
    return span.end_ns - span.start_ns;
}

// Each ended computation of `rank`, by kind.
template <typename Visit>
void for_each_computation(const TimedSchedule& timed, std::size_t rank, Visit visit) {
    for (std::size_t index = 0; index < timed.schedule.ranks[rank].size(); ++index) {
        const Action& action = timed.schedule.ranks[rank][index];
        const ActionSpan& span = timed.times[rank][index];
        if (is_compute(action.kind) && span.end_ns >= 0)
            visit(action, span, index);
    }
}

constexpr std::size_t kNoRank = static_cast<std::size_t>(-1);

// Each kind's computation times, sorted, over all ranks and per rank: the medians over every
// rank but one are then found without gathering the other ranks' times once per rank.
class KindTimes {
  public:
    explicit KindTimes(const TimedSchedule& timed) : by_rank_(timed.schedule.ranks.size()) {
        for (std::size_t rank = 0; rank < by_rank_.size(); ++rank)
            for_each_computation(timed, rank,
                                 [&](const Action& action, const ActionSpan& span, std::size_t) {
                                     all_[action.kind].push_back(duration(span));
                                     by_rank_[rank][action.kind].push_back(duration(span));
                                 });
        for (auto& [kind, values] : all_)
            std::sort(values.begin(), values.end());
        for (auto& kinds : by_rank_)
            for (auto& [kind, values] : kinds)
                std::sort(values.begin(), values.end());
    }

    // The median time of each kind on every rank but `except` (kNoRank: on every rank).
    std::map<ActionKind, std::int64_t> medians(std::size_t except) const {
        static const std::vector<std::int64_t> kNone;
        std::map<ActionKind, std::int64_t> reference;
        for (const auto& [kind, values] : all_) {
            const std::vector<std::int64_t>* removed = &kNone;
            if (except != kNoRank)
                if (const auto found = by_rank_[except].find(kind); found != by_rank_[except].end())
                    removed = &found->second;
            const std::size_t count = values.size() - removed->size();
            if (count > 0)
                reference[kind] = nth_without(values, *removed, count / 2);
        }
        return reference;
    }

  private:
    std::map<ActionKind, std::vector<std::int64_t>> all_;
    std::vector<std::map<ActionKind, std::vector<std::int64_t>>> by_rank_;
};

// `rank`'s computations' median time over their reference: the calibrated cost of their
// (stage, kind) when there is a calibration, else `by_kind`'s time of their kind.
RankStraggle ratio_against(const TimedSchedule& timed, std::size_t rank,
                           const StragglerOptions& options,
                           const std::map<ActionKind, std::int64_t>& by_kind) {
    std::vector<double> ratios;
    for_each_computation(
        timed, rank, [&](const Action& action, const ActionSpan& span, std::size_t) {
            std::int64_t reference = 0;
            if (options.calibrated_ns.empty()) {
                if (const auto found = by_kind.find(action.kind); found != by_kind.end())
                    reference = found->second;
            } else if (const auto found = options.calibrated_ns.find({action.stage, action.kind});
                       found != options.calibrated_ns.end()) {
                reference = found->second;
            }
            if (reference > 0)
                ratios.push_back(static_cast<double>(duration(span)) /
                                 static_cast<double>(reference));
        });
    RankStraggle out;
    out.rank = static_cast<int>(rank);
    out.computations = static_cast<int>(ratios.size());
    if (!ratios.empty())
        out.ratio = upper_median(std::move(ratios));
    return out;
}

// Megatron's relative throughput: every rank against one common reference (the calibration, or
// each kind's median over all ranks), the slowest's throughput over the fastest's.
void add_relative_throughput(const TimedSchedule& timed, const KindTimes& times,
                             const StragglerOptions& options, StepStraggle& out) {
    const auto everyone = times.medians(kNoRank);
    double slowest = 0, fastest = 0;
    for (std::size_t rank = 0; rank < timed.schedule.ranks.size(); ++rank) {
        const RankStraggle common = ratio_against(timed, rank, options, everyone);
        if (common.computations == 0)
            continue;
        if (out.slowest_rank < 0 || common.ratio > slowest) {
            out.slowest_rank = common.rank;
            slowest = common.ratio;
        }
        if (out.fastest_rank < 0 || common.ratio < fastest) {
            out.fastest_rank = common.rank;
            fastest = common.ratio;
        }
    }
    if (out.slowest_rank >= 0 && slowest > 0)
        out.relative_throughput = fastest / slowest;
}

bool on_path(const CriticalPath& path, const TimedSchedule& timed, int rank) {
    return std::any_of(path.links.begin(), path.links.end(), [&](const PathLink& link) {
        return link.action.rank == rank &&
               is_compute(timed.schedule.ranks[rank][link.action.index].kind);
    });
}

// The step's time saved with `rank`'s computations at the reference speed.
std::int64_t cost_of(const TrainingStep& step, int rank, double ratio,
                     const StragglerOptions& options) {
    if (ratio <= 1)
        return 0;
    const DependencyRules& rules = options.receives_posted_in_program_order
                                       ? DependencyRules::pytorch_rendezvous()
                                       : DependencyRules::pytorch();
    const auto ends = retime(
        step.timed,
        [&](ActionRef ref) {
            const ActionSpan& span = step.timed.times[ref.rank][ref.index];
            const std::int64_t took = duration(span);
            if (ref.rank != rank ||
                !is_compute(step.timed.schedule.ranks[ref.rank][ref.index].kind))
                return took;
            return static_cast<std::int64_t>(std::llround(static_cast<double>(took) / ratio));
        },
        rules, options.transfers_wait_for_post ? ReceivedData::once_posted : ReceivedData::as_sent);
    return step.end_ns - retimed_end(ends);
}

StepStraggle step_stragglers(const TrainingStep& step, int number,
                             const StragglerOptions& options) {
    const HoldGraph holds(step.timed);
    const CriticalPath path = critical_path(step.timed, holds);
    const KindTimes times(step.timed);
    StepStraggle out;
    out.step = number;
    out.step_time_ns = step.end_ns;
    for (std::size_t rank = 0; rank < step.timed.schedule.ranks.size(); ++rank) {
        RankStraggle figures = ratio_against(step.timed, rank, options, times.medians(rank));
        figures.step = number;
        figures.flagged = figures.computations > 0 && figures.ratio > options.threshold;
        figures.on_critical_path = on_path(path, step.timed, figures.rank);
        if (figures.flagged)
            figures.cost_ns = cost_of(step, figures.rank, figures.ratio, options);
        out.ranks.push_back(figures);
    }
    add_relative_throughput(step.timed, times, options, out);
    return out;
}

// Why the ranks are no reference for each other, when their stages' layer counts (each rank's
// sorted) differ: "the ranks' stages hold different numbers of layers (rank 0: 4, rank 1: 2),
// so ..."; empty when alike, or unknown.
std::string unlike_ranks(const Schedule& schedule, const std::vector<std::size_t>& stage_layers) {
    if (stage_layers.empty() || stage_layers.size() != schedule.stage_to_rank.size())
        return {};
    std::vector<std::vector<std::size_t>> by_rank(schedule.ranks.size());
    for (std::size_t stage = 0; stage < stage_layers.size(); ++stage) {
        const auto rank = static_cast<std::size_t>(schedule.stage_to_rank[stage]);
        if (rank >= by_rank.size())
            return {};
        by_rank[rank].push_back(stage_layers[stage]);
    }
    std::vector<std::vector<std::size_t>> sorted = by_rank;
    for (auto& counts : sorted)
        std::sort(counts.begin(), counts.end());
    if (std::all_of(sorted.begin(), sorted.end(),
                    [&](const auto& counts) { return counts == sorted.front(); }))
        return {};
    std::vector<std::string> ranks;
    for (std::size_t rank = 0; rank < by_rank.size(); ++rank)
        ranks.push_back(fmt::format("rank {}: {}", rank, fmt::join(by_rank[rank], "+")));
    return fmt::format(
        "the ranks' stages hold different numbers of layers ({}), so no rank's time is a "
        "reference for another's; `run --profile` records each stage's own cost to compare "
        "against",
        fmt::join(ranks, ", "));
}

std::string_view yes_no(bool value) {
    return value ? "yes" : "no";
}

}  // namespace

StragglerReport find_stragglers(const TimedSchedule& run, const StragglerOptions& options) {
    StragglerReport report;
    report.threshold = options.threshold;
    report.calibrated = !options.calibrated_ns.empty();
    if (!report.calibrated) {
        report.not_measured = unlike_ranks(run.schedule, options.stage_layers);
        if (!report.not_measured.empty())
            return report;
    }
    const std::vector<TrainingStep> steps = training_steps(run);
    for (std::size_t index = 0; index < steps.size(); ++index) {
        report.steps.push_back(step_stragglers(steps[index], static_cast<int>(index), options));
        for (const RankStraggle& rank : report.steps.back().ranks)
            if (rank.flagged)
                report.flagged.push_back(rank);
    }
    return report;
}

std::map<std::pair<int, ActionKind>, std::int64_t> calibrated_stage_costs(
    const std::vector<traces::ProfileRecord>& profile) {
    static constexpr std::pair<std::string_view, ActionKind> kinds[] = {
        {"F", ActionKind::forward},
        {"I", ActionKind::backward_input},
        {"W", ActionKind::backward_weight},
        {"B", ActionKind::full_backward}};
    std::map<std::pair<int, ActionKind>, std::int64_t> costs;
    for (const traces::ProfileRecord& row : profile)
        for (const auto& [name, kind] : kinds)
            if (row.layer == -1 && row.stage >= 0 && row.quantity == name && row.median > 0)
                costs[{row.stage, kind}] = row.median;
    return costs;
}

namespace {

// A simulation run with rendezvous transfers posted its receives in program order, as a real
// run does (its recorded configuration says; one that does not read back is taken without).
bool simulated_with_rendezvous(const traces::RunRecord& run) {
    try {
        return parse_experiment_toml(run.config, "run configuration").rendezvous;
    } catch (const ExperimentError&) {
        return false;
    }
}

}  // namespace

std::vector<std::size_t> stage_layer_counts(const std::vector<traces::EventRecord>& events) {
    std::map<int, std::size_t> layers;  // by stage, of the first rank that assigned any
    std::optional<int> rank;
    for (const traces::EventRecord& event : events) {
        if (event.name != "assign_layers" || (rank && event.rank != *rank))
            continue;
        try {
            const auto arguments = nlohmann::json::parse(event.arguments);
            layers[arguments.at("stage").get<int>()] = arguments.at("layers").size();
            rank = event.rank;
        } catch (const nlohmann::json::exception&) {
            return {};  // not what a pipelens run records: taken as alike, as before
        }
    }
    if (layers.empty() || layers.begin()->first != 0 ||
        layers.rbegin()->first != static_cast<int>(layers.size()) - 1)
        return {};
    std::vector<std::size_t> counts;
    for (const auto& [stage, count] : layers)
        counts.push_back(count);
    return counts;
}

StragglerOptions straggler_options(const traces::RunRecord& run,
                                   const std::vector<traces::ProfileRecord>& profile,
                                   const std::vector<traces::EventRecord>& events,
                                   double threshold) {
    StragglerOptions options;
    options.threshold = threshold;
    options.calibrated_ns = calibrated_stage_costs(profile);
    options.stage_layers = stage_layer_counts(events);
    options.transfers_wait_for_post =
        run.kind == traces::RunKind::simulated && simulated_with_rendezvous(run);
    options.receives_posted_in_program_order =
        run.kind != traces::RunKind::simulated || options.transfers_wait_for_post;
    return options;
}

StragglerReport read_stragglers(const traces::TraceReader& reader, const traces::RunRecord& run,
                                double threshold) {
    return find_stragglers(
        read_timed_schedule(reader, run.id),
        straggler_options(run, reader.profile(run.id), reader.events(run.id), threshold));
}

std::string format_stragglers(const StragglerReport& report) {
    if (!report.not_measured.empty())
        return fmt::format("stragglers: n/a ({})\n", report.not_measured);
    std::string out = fmt::format("stragglers (computation time over {}, flagged above {:.2f}x):\n",
                                  report.calibrated ? "the calibrated stage costs"
                                                    : "the other ranks' median of the same kind",
                                  report.threshold);
    if (report.flagged.empty())
        out += "  none\n";
    for (const RankStraggle& rank : report.flagged)
        out += fmt::format(
            "  rank {} step {}: {:.2f}x, on the critical path: {}, costs the step {}\n", rank.rank,
            rank.step, rank.ratio, yes_no(rank.on_critical_path), format_duration(rank.cost_ns));
    for (const StepStraggle& step : report.steps)
        if (step.slowest_rank >= 0)
            out += fmt::format(
                "  step {}: relative throughput {:.3f} (slowest rank {}, fastest rank {})\n",
                step.step, step.relative_throughput, step.slowest_rank, step.fastest_rank);
    return out;
}

}  // namespace pipelens::analysis
