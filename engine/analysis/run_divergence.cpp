// The comparison of a real run with its simulation (run_divergence.hpp for what each figure is).
//
// Medians follow engine/run_record/statistics.hpp's convention (of an even count the upper of
// the two middles), so a median ratio is one that was measured; that header sits above this
// layer, hence the local `median_ratio`.
#include "engine/analysis/run_divergence.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "engine/analysis/bubble_accounting.hpp"
#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/training_steps.hpp"
#include "engine/analysis/transfer_deliveries.hpp"
#include "engine/schedule/action_facts.hpp"

namespace pipelens::analysis {
namespace {

double median_ratio(std::vector<double> values, double none = 1) {
    if (values.empty())
        return none;
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

std::int64_t median_ns(std::vector<std::int64_t> values) {
    if (values.empty())
        return 0;
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

std::int64_t duration(const TimedSchedule& timed, ActionRef ref) {
    const ActionSpan& span = timed.times[ref.rank][ref.index];
    return span.end_ns < 0 ? 0 : span.end_ns - span.start_ns;
}

// One pair of steps: for each simulated action its real counterpart (index; -1 none).
struct StepMatch {
    std::vector<std::vector<int>> sim_to_real;
    std::vector<ActionRef> real_only, sim_only;
};

std::unordered_map<std::string, int> index_by_text(const TimedSchedule& timed, std::size_t rank) {
    std::unordered_map<std::string, int> by_text;
    if (rank < timed.schedule.ranks.size())
        for (std::size_t index = 0; index < timed.schedule.ranks[rank].size(); ++index)
            by_text.emplace(timed.schedule.text(timed.schedule.ranks[rank][index]),
                            static_cast<int>(index));
    return by_text;
}

StepMatch match_actions(const TimedSchedule& real, const TimedSchedule& sim) {
    StepMatch match;
    const std::size_t ranks = std::max(real.schedule.ranks.size(), sim.schedule.ranks.size());
    match.sim_to_real.resize(sim.schedule.ranks.size());
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        auto real_left = index_by_text(real, rank);
        if (rank < sim.schedule.ranks.size())
            for (std::size_t index = 0; index < sim.schedule.ranks[rank].size(); ++index) {
                const auto found =
                    real_left.find(sim.schedule.text(sim.schedule.ranks[rank][index]));
                match.sim_to_real[rank].push_back(found == real_left.end() ? -1 : found->second);
                if (found == real_left.end())
                    match.sim_only.push_back(
                        {static_cast<std::int32_t>(rank), static_cast<std::int32_t>(index)});
                else
                    real_left.erase(found);
            }
        for (const auto& [text, index] : real_left)
            match.real_only.push_back({static_cast<std::int32_t>(rank), index});
    }
    const auto by_place = [](ActionRef left, ActionRef right) {
        return std::pair(left.rank, left.index) < std::pair(right.rank, right.index);
    };
    std::sort(match.real_only.begin(), match.real_only.end(), by_place);
    return match;
}

template <typename Visit>  // visit(sim ref, real ref) for every matched pair
void for_each_match(const StepMatch& match, Visit visit) {
    for (std::size_t rank = 0; rank < match.sim_to_real.size(); ++rank)
        for (std::size_t index = 0; index < match.sim_to_real[rank].size(); ++index)
            if (const int real = match.sim_to_real[rank][index]; real >= 0)
                visit(ActionRef{static_cast<std::int32_t>(rank), static_cast<std::int32_t>(index)},
                      ActionRef{static_cast<std::int32_t>(rank), real});
}

ActionKind kind_at(const TimedSchedule& timed, ActionRef ref) {
    return timed.schedule.ranks[ref.rank][ref.index].kind;
}

std::vector<double> speed_factors(const TimedSchedule& real, const TimedSchedule& sim,
                                  const StepMatch& match) {
    std::vector<std::vector<double>> ratios(sim.schedule.ranks.size());
    for_each_match(match, [&](ActionRef simulated, ActionRef measured) {
        const std::int64_t predicted = duration(sim, simulated);
        if (is_compute(kind_at(sim, simulated)) && predicted > 0)
            ratios[simulated.rank].push_back(static_cast<double>(duration(real, measured)) /
                                             static_cast<double>(predicted));
    });
    std::vector<double> speeds;
    for (auto& rank : ratios)
        speeds.push_back(median_ratio(std::move(rank)));
    return speeds;
}

// The real step's transfers by their SEND and by their RECV (transfer_deliveries.hpp).
class RealTransfers {
  public:
    explicit RealTransfers(const TimedSchedule& real) : deliveries_(transfer_deliveries(real)) {
        for (std::size_t index = 0; index < deliveries_.size(); ++index) {
            by_action_[key(deliveries_[index].send)] = index;
            by_action_[key(deliveries_[index].receive)] = index;
        }
    }
    // The transfer a SEND or RECV belongs to; nullptr for none found.
    const TransferDelivery* of(ActionRef ref) const {
        const auto found = by_action_.find(key(ref));
        return found == by_action_.end() ? nullptr : &deliveries_[found->second];
    }

  private:
    static std::int64_t key(ActionRef ref) {
        return (static_cast<std::int64_t>(ref.rank) << 32) | static_cast<std::uint32_t>(ref.index);
    }
    std::vector<TransferDelivery> deliveries_;
    std::unordered_map<std::int64_t, std::size_t> by_action_;
};

// What the real run says a transfer took, where it says it: its delivery when the receiver was
// seen waiting for all of it, else nothing (the RECV's end may be long after the data came).
std::optional<std::int64_t> seen_delivery(const RealTransfers& transfers, ActionRef real) {
    const TransferDelivery* delivery = transfers.of(real);
    if (delivery == nullptr || !delivery->seen)
        return std::nullopt;
    return delivery->at_most_ns;
}

// How much longer than predicted the step's transfers took where it was seen: the median over
// the matched SENDs with a seen delivery of delivery / predicted (1 when none was seen). It
// stands in for the transfers the run did not show, as a rank's speed factor does for its
// computations.
double transfer_factor(const TrainingStep& sim, const StepMatch& match,
                       const RealTransfers& transfers) {
    std::vector<double> ratios;
    for_each_match(match, [&](ActionRef simulated, ActionRef measured) {
        const std::int64_t predicted = duration(sim.timed, simulated);
        if (!is_send(kind_at(sim.timed, simulated)) || predicted <= 0)
            return;
        if (const std::optional<std::int64_t> delivery = seen_delivery(transfers, measured))
            ratios.push_back(static_cast<double>(*delivery) / static_cast<double>(predicted));
    });
    return median_ratio(std::move(ratios));
}

// A simulated transfer re-timed with the real one. The simulator times a transfer as its SEND's
// duration (its RECV ends that long after the send starts), so the SEND takes the real delivery
// where it was seen, else its prediction at the step's transfer factor, never more than the
// real run allows (its RECV's end); the RECV keeps its own duration and so ends as far after
// the SEND's start as the real data came.
std::int64_t retimed_transfer(const RealTransfers& transfers, double factor, ActionKind kind,
                              ActionRef real, std::int64_t predicted) {
    if (!is_send(kind))
        return predicted;
    const auto scaled =
        static_cast<std::int64_t>(std::llround(static_cast<double>(predicted) * factor));
    const TransferDelivery* delivery = transfers.of(real);
    if (delivery == nullptr)
        return scaled;
    return delivery->seen ? delivery->at_most_ns : std::min(scaled, delivery->at_most_ns);
}

// Which of the simulated step's durations the re-timing takes from the real run.
enum class Measuring { nothing, speed, computations, everything };

DivergenceSplit split_step(const TrainingStep& real, const TrainingStep& sim,
                           const StepMatch& match, const std::vector<double>& speeds,
                           const RealTransfers& transfers) {
    const double factor = transfer_factor(sim, match, transfers);
    const auto step_with = [&](Measuring measuring) {
        return retimed_end(retime(sim.timed, [&](ActionRef ref) {
            const std::int64_t predicted = duration(sim.timed, ref);
            const ActionKind kind = kind_at(sim.timed, ref);
            const bool compute = is_compute(kind);
            const int counterpart = match.sim_to_real[ref.rank][ref.index];
            const bool measured =
                counterpart >= 0 && (measuring == Measuring::everything ||
                                     (measuring == Measuring::computations && compute));
            if (measured && is_communication(kind))
                return retimed_transfer(transfers, factor, kind, {ref.rank, counterpart},
                                        predicted);
            if (measured)
                return duration(real.timed, {ref.rank, counterpart});
            if (compute && measuring != Measuring::nothing)
                return static_cast<std::int64_t>(
                    std::llround(static_cast<double>(predicted) * speeds[ref.rank]));
            return predicted;
        }));
    };
    const std::int64_t at_speed = step_with(Measuring::speed);
    const std::int64_t at_kinds = step_with(Measuring::computations);
    const std::int64_t at_communication = step_with(Measuring::everything);
    return {at_speed - sim.end_ns, at_kinds - at_speed, at_communication - at_kinds,
            real.end_ns - at_communication};
}

std::vector<RankDivergence> rank_figures(const TrainingStep& real, const TrainingStep& sim,
                                         const std::vector<double>& speeds) {
    const auto measured = account_bubbles(real.timed, HoldGraph(real.timed), real.end_ns);
    const auto simulated = account_bubbles(sim.timed, HoldGraph(sim.timed), sim.end_ns);
    std::vector<RankDivergence> ranks(std::max(measured.size(), simulated.size()));
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        RankDivergence& out = ranks[rank];
        out.rank = static_cast<int>(rank);
        if (rank < measured.size()) {
            out.busy.measured = measured[rank].busy_ns;
            out.waiting.measured = measured[rank].split.waiting_ns();
            out.bubble.measured = measured[rank].bubble_ns;
        }
        if (rank < simulated.size()) {
            out.busy.simulated = simulated[rank].busy_ns;
            out.waiting.simulated = simulated[rank].split.waiting_ns();
            out.bubble.simulated = simulated[rank].bubble_ns;
        }
        if (rank < speeds.size())
            out.speed = speeds[rank];
    }
    return ranks;
}

// The computation (or, for a wait on nothing but its own stream, the action) `ref` waited for
// last, as text; "" for none.
std::string waited_text(const TimedSchedule& timed, const HoldGraph& holds, ActionRef ref) {
    const WaitedFor waited = waited_for(timed, holds, ref);
    const std::optional<ActionRef> behind = waited.waited_on ? waited.waited_on : waited.held_by;
    if (!behind)
        return "";
    return timed.schedule.text(timed.schedule.ranks[behind->rank][behind->index]);
}

std::vector<WaitChange> wait_changes(const TrainingStep& real, const TrainingStep& sim,
                                     const StepMatch& match) {
    const HoldGraph real_holds(real.timed), sim_holds(sim.timed);
    std::vector<WaitChange> changes;
    for_each_match(match, [&](ActionRef simulated, ActionRef measured) {
        if (!is_compute(kind_at(sim.timed, simulated)))
            return;
        WaitChange change{
            measured.rank,
            sim.timed.schedule.text(sim.timed.schedule.ranks[simulated.rank][simulated.index]),
            waited_text(real.timed, real_holds, measured),
            waited_text(sim.timed, sim_holds, simulated)};
        if (change.measured_wait != change.simulated_wait)
            changes.push_back(std::move(change));
    });
    return changes;
}

// The `limit` matched actions furthest off, kept as they arrive, so that a run of millions of
// actions (or several runs) holds `limit` of them and formats only their texts. Ties keep the
// earlier action, as a stable sort of all of them would.
class FurthestActions {
  public:
    explicit FurthestActions(int limit) : limit_(static_cast<std::size_t>(std::max(limit, 0))) {}

    // Whether an action this far off, arriving now, would be kept.
    bool keeps(std::int64_t off) const {
        return kept_.size() < limit_ || (limit_ > 0 && off > kept_.front().off);
    }
    void add(ActionDivergence action) {
        const std::int64_t off = std::llabs(action.measured_ns - action.simulated_ns);
        if (!keeps(off))
            return;
        if (kept_.size() == limit_) {
            std::pop_heap(kept_.begin(), kept_.end(), further);
            kept_.pop_back();
        }
        kept_.push_back({off, arrived_++, std::move(action)});
        std::push_heap(kept_.begin(), kept_.end(), further);
    }
    // Furthest first.
    std::vector<ActionDivergence> take() {
        std::sort(kept_.begin(), kept_.end(), further);
        std::vector<ActionDivergence> actions;
        for (Kept& kept : kept_)
            actions.push_back(std::move(kept.action));
        return actions;
    }

  private:
    struct Kept {
        std::int64_t off = 0;
        std::uint64_t order = 0;
        ActionDivergence action;
    };
    // As a heap's "less": the front is the kept action nearest its simulation (of those, the
    // latest to arrive), the one dropped first.
    static bool further(const Kept& left, const Kept& right) {
        return left.off != right.off ? left.off > right.off : left.order < right.order;
    }

    std::size_t limit_;
    std::uint64_t arrived_ = 0;
    std::vector<Kept> kept_;
};

struct Collected {
    explicit Collected(int top_count) : furthest(top_count) {}
    std::map<ActionKind, std::vector<double>> ratios;
    FurthestActions furthest;
};

// A transfer's measured time is its seen delivery (both its SEND and its RECV show it); one not
// seen is left out, as is anything the simulation gave no time.
void collect(const TrainingStep& real, const TrainingStep& sim, const StepMatch& match,
             const RealTransfers& transfers, int real_run, int real_step, Collected& out) {
    for_each_match(match, [&](ActionRef simulated, ActionRef measured) {
        const ActionKind kind = kind_at(sim.timed, simulated);
        std::int64_t took = duration(real.timed, measured);
        if (is_communication(kind)) {
            const std::optional<std::int64_t> delivery = seen_delivery(transfers, measured);
            if (!delivery)
                return;
            took = *delivery;
        }
        // A simulated SEND and its RECV both last the predicted transfer time.
        const std::int64_t predicted = duration(sim.timed, simulated);
        const double ratio =
            predicted > 0 ? static_cast<double>(took) / static_cast<double>(predicted) : 0;
        if (predicted > 0)
            out.ratios[kind].push_back(ratio);
        if (!out.furthest.keeps(std::llabs(took - predicted)))
            return;
        const Action& action = real.timed.schedule.ranks[measured.rank][measured.index];
        out.furthest.add({real_run, measured.rank, real_step, real.timed.schedule.text(action),
                          took, predicted, ratio});
    });
}

void add_unmatched(const TrainingStep& step, const std::vector<ActionRef>& refs, bool real,
                   int real_run, int step_number, std::vector<UnmatchedAction>& out) {
    for (ActionRef ref : refs)
        out.push_back({real_run, real, ref.rank, step_number,
                       step.timed.schedule.text(step.timed.schedule.ranks[ref.rank][ref.index])});
}

void sum_up(RunDivergence& out) {
    std::vector<std::int64_t> measured, simulated;
    for (const StepDivergence& step : out.steps) {
        measured.push_back(step.step_time.measured);
        simulated.push_back(step.step_time.simulated);
        out.mean_split.speed_ns += step.split.speed_ns;
        out.mean_split.kinds_ns += step.split.kinds_ns;
        out.mean_split.communication_ns += step.split.communication_ns;
        out.mean_split.ordering_ns += step.split.ordering_ns;
    }
    out.median_step_time = {median_ns(measured), median_ns(simulated)};
    if (const auto count = static_cast<std::int64_t>(out.steps.size()); count > 0) {
        // Each part rounded to the nearest ns; rounded parts would no longer sum to the rounded
        // mean difference, so the rest goes to ordering.
        DivergenceSplit& mean = out.mean_split;
        const auto mean_of = [count](std::int64_t sum) {
            return static_cast<std::int64_t>(
                std::llround(static_cast<double>(sum) / static_cast<double>(count)));
        };
        const std::int64_t total = mean_of(mean.total());
        mean.speed_ns = mean_of(mean.speed_ns), mean.kinds_ns = mean_of(mean.kinds_ns);
        mean.communication_ns = mean_of(mean.communication_ns);
        mean.ordering_ns = total - mean.speed_ns - mean.kinds_ns - mean.communication_ns;
    }
}

// Every step of one real run against the simulation's, added to `out` and `collected`.
void compare_run(const std::vector<TrainingStep>& real_steps,
                 const std::vector<TrainingStep>& sim_steps, int real_run, RunDivergence& out,
                 Collected& collected) {
    const bool one_prediction = sim_steps.size() == 1;
    const std::size_t pairs =
        one_prediction ? real_steps.size() : std::max(real_steps.size(), sim_steps.size());
    for (std::size_t index = 0; index < pairs; ++index) {
        const int number = static_cast<int>(index);
        const std::size_t sim_index = one_prediction ? 0 : index;
        if (index >= real_steps.size() || sim_index >= sim_steps.size()) {  // on one side only
            const bool is_real = index < real_steps.size();
            const TrainingStep& step = is_real ? real_steps[index] : sim_steps[index];
            for (std::size_t rank = 0; rank < step.timed.schedule.ranks.size(); ++rank)
                for (std::size_t action = 0; action < step.timed.schedule.ranks[rank].size();
                     ++action)
                    add_unmatched(
                        step,
                        {{static_cast<std::int32_t>(rank), static_cast<std::int32_t>(action)}},
                        is_real, real_run, number, out.unmatched);
            continue;
        }
        const TrainingStep& real_step = real_steps[index];
        const TrainingStep& sim_step = sim_steps[sim_index];
        const StepMatch match = match_actions(real_step.timed, sim_step.timed);
        const std::vector<double> speeds = speed_factors(real_step.timed, sim_step.timed, match);
        StepDivergence step;
        step.real_run = real_run;
        step.real_step = number;
        step.sim_step = static_cast<int>(sim_index);
        step.step_time = {real_step.end_ns, sim_step.end_ns};
        step.ranks = rank_figures(real_step, sim_step, speeds);
        const RealTransfers transfers(real_step.timed);
        step.split = split_step(real_step, sim_step, match, speeds, transfers);
        step.waits = wait_changes(real_step, sim_step, match);
        collect(real_step, sim_step, match, transfers, real_run, number, collected);
        add_unmatched(real_step, match.real_only, true, real_run, number, out.unmatched);
        add_unmatched(sim_step, match.sim_only, false, real_run, step.sim_step, out.unmatched);
        out.steps.push_back(std::move(step));
    }
}

}  // namespace

RunDivergence run_divergence(const TimedSchedule& real, const TimedSchedule& simulated,
                             int top_count) {
    return run_divergence(std::span<const TimedSchedule>(&real, 1), simulated, top_count);
}

RunDivergence run_divergence(std::span<const TimedSchedule> real_runs,
                             const TimedSchedule& simulated, int top_count) {
    return run_divergence(
        real_runs.size(), [&](std::size_t run) -> const TimedSchedule& { return real_runs[run]; },
        simulated, top_count);
}

RunDivergence run_divergence(std::size_t run_count,
                             const std::function<const TimedSchedule&(std::size_t)>& read_run,
                             const TimedSchedule& simulated, int top_count) {
    const std::vector<TrainingStep> sim_steps = training_steps(simulated);
    RunDivergence out;
    Collected collected(top_count);
    for (std::size_t run = 0; run < run_count; ++run)
        compare_run(training_steps(read_run(run)), sim_steps, static_cast<int>(run), out,
                    collected);
    for (auto& [kind, ratios] : collected.ratios)
        out.kinds.push_back({std::string(kind_text(kind)), median_ratio(ratios, 0),
                             static_cast<int>(ratios.size())});
    out.top = collected.furthest.take();
    sum_up(out);
    return out;
}

}  // namespace pipelens::analysis
