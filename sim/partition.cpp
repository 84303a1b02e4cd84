// The branch and bound over split points, and the proof that its bounds never exceed the
// simulated step.
//
// Search: stages are filled in pipeline order, stage j taking layers [a, a + c); the sizes of
// least bound are tried first, then those nearest an even share of what is left, and the even
// split is the first incumbent. A leaf (every stage filled) is priced by simulating it.
//
// Bounds. Write F_s, I_s, Bk_s for stage s's forward, input-gradient and backward work per
// microbatch on its rank (rank slowdown applied; Bk_s = min(B_s, I_s + W_s), the least a
// schedule can spend on one microbatch's backward, whether it runs B or I then W), r(s) for its
// rank, m for the microbatches, and h_j = F_0 + ... + F_{j-1}.
//   (1) Every action of stage j starts at or after h_j: the F of microbatch x at stage j waits
//       for x's F at stage j - 1 (through a transfer of length >= 0), so by induction it starts
//       no earlier than h_j, and each I, W or B of x at stage j waits for that F.
//   (2) A rank's compute stream runs one action at a time, in program order (simulator.hpp),
//       and an OVERLAP_F_B lasts the sum of its parts when overlap_efficiency is 0
//       (CostModel::overlap), so the step is at least the first start of any of the rank's
//       stages plus all of its work: T >= h_first(r) + sum over stages s of r of m (F_s + Bk_s).
//       Stages not yet filled add at least m times the least work any one stage can have.
//   (3) Write G_s for what one input gradient of stage s costs at least: B_s when the schedule
//       has no I action (its input gradients are all B), else min(I_s, B_s). Stage j >= 1's
//       last input gradient comes after its m forwards and m input gradients, all after h_j by
//       (1) and one at a time by (2); the gradient of that microbatch then passes stages
//       j - 1, ..., 1 (each an I or a B) and ends with stage 0's backward (its W is its whole
//       B): T >= h_j + m (F_j + G_j) + G_{j-1} + ... + G_1 + B_0.
//   (4) Of the Q stages not yet filled, holding the R layers left, one holds at least
//       ceil(R / Q) of them; whichever stage q > j it is, (3) at q is at least h_{j+1} + G_j +
//       ... + G_1 + B_0 plus m (F_q + G_q), and that is at least the least m (F + G) of any run
//       of that many consecutive layers among those left (heads and chains only grow with q).
//   (5) Any chain of computations found under one split (partition_paths.hpp: each waits for
//       the one before it, by rank order or as an input, with the transfer when it crosses
//       ranks) is a chain of every split of the same schedule, and T is at least its length,
//       a sum over stages of what it counts of each stage's F, I, W, B and boundary transfers.
//       Under a partial split, the filled stages' share is known and the least share the rest
//       can have, over every way to split the layers left, is a shortest path over split
//       points (computed once per chain, from the last stage back). The chains are the longest
//       of the even split and of every split priced: a schedule's critical path under its
//       best split gives a bound equal to its step there, which the search needs to stop. Not
//       for ZeroBubbleAuto, whose order follows the costs (the chain of one split need not be
//       one of another's). The textbook 1F1B figure (m - 1) max(F + B) + sum(F + B) is no
//       bound: a stage's warm-up forwards can hide the round trip of its first microbatch
//       (partition_paths_test.cpp has a pipeline it overshoots).
// Bounds (1)-(4) only read filled stages and (5) takes the least over the rest, so each holds
// for every completion of a partial split; a branch whose bound reaches the incumbent's step
// cannot hold a strictly faster split. With overlap_efficiency above 0, (2), (3) and (5) need
// not hold, and the search prices every leaf.
#include "sim/partition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "engine/run_record/experiment_schedule.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/layer_costs.hpp"
#include "sim/partition_paths.hpp"
#include "sim/simulator.hpp"
#include "sim/transformer_flops.hpp"
#include "sim/zero_bubble_inputs.hpp"

namespace pipelens::sim {
namespace {

std::int64_t least_backward(const StageCost& cost) {
    return std::min(cost.backward_ns(), cost.input_ns + cost.weight_ns);
}

Experiment with_layers(Experiment experiment, const LayerCosts& costs) {
    experiment.layers = costs;
    experiment.transformer.reset();
    // The layers derive every stage's costs: flat per-stage figures would contradict them.
    experiment.forward_ns.clear();
    experiment.input_ns.clear();
    experiment.weight_ns.clear();
    experiment.backward_ns.clear();
    experiment.held_activation_bytes.clear();
    return experiment;
}

class SplitSearch {
  public:
    SplitSearch(const Experiment& experiment, const LayerCosts& costs,
                const PartitionLimits& limits, const PartitionProgress& progress)
        : experiment_(with_layers(experiment, costs)),
          costs_(costs),
          limits_(limits),
          progress_(progress),
          layer_count_(static_cast<int>(costs.names.size())) {
        Experiment lowered_from = experiment_;
        resolve_zero_bubble_inputs(lowered_from);
        const Schedule lowered = lowered_schedule_for(lowered_from);
        stage_count_ = lowered.stage_count;
        rank_of_stage_ = lowered.stage_to_rank;
        rank_count_ = experiment_.shape.rank_count;
        microbatches_ = experiment_.shape.microbatch_count;
        model_ = cost_model_for(experiment_, stage_count_);  // for slowdowns and overlap only
        bounded_ = model_.overlap_efficiency <= 0;
        whole_backward_ = !has_input_gradient_actions(lowered);
        for (int rank = 0; rank < rank_count_; ++rank)
            least_stage_work_.push_back(least_work_of_one_stage(rank));
        fill_least_runs();
        const bool costs_shape_schedule =
            lowered_from.shape.kind == ScheduleKind::zero_bubble_auto &&
            lowered_from.schedule_file.empty();
        fill_stage_table();
        if (bounded_ && !costs_shape_schedule)
            graph_.emplace(lowered);
    }

    PartitionResult run() {
        PartitionResult result;
        result.even_layers_per_stage = even_layers_per_stage(layer_count_, stage_count_);
        result.even_step_ns = simulated_step_of_split(experiment_, result.even_layers_per_stage);
        best_ = result.even_layers_per_stage;
        best_step_ = result.even_step_ns;
        counts_.assign(stage_count_, 0);
        sizes_by_stage_.assign(stage_count_, {});
        children_by_stage_.assign(stage_count_, {});
        ranks_.assign(rank_count_, RankState{});
        for (int stage = 0; stage < stage_count_; ++stage)
            ++ranks_[rank_of_stage_[stage]].unfilled;
        counts_ = best_;
        add_cut_of_split();
        descend(0, 0, 0, 0, 0, 0);
        result.layers_per_stage = best_;
        result.step_ns = best_step_;
        result.proven_optimal = open_bound_ >= best_step_;
        result.lower_bound_ns = std::min(open_bound_, best_step_);
        result.splits_simulated = leaves_;
        result.nodes = nodes_;
        return result;
    }

  private:
    struct RankState {
        std::int64_t first_start = -1;  // h of its first filled stage
        std::int64_t work = 0;          // m (F + Bk) over its filled stages
        int unfilled = 0;
    };

    static bool has_input_gradient_actions(const Schedule& schedule) {
        const auto is_input = [](const Action& action) {
            return action.kind == ActionKind::backward_input;
        };
        for (const std::vector<Action>& actions : schedule.ranks)
            if (std::any_of(actions.begin(), actions.end(), is_input))
                return true;
        return std::any_of(schedule.parts.begin(), schedule.parts.end(), is_input);
    }

    // G of a stage of `cost` (bound 3), before any rank slowdown.
    std::int64_t least_input_gradient(const StageCost& cost) const {
        return whole_backward_ ? cost.backward_ns() : std::min(cost.input_ns, cost.backward_ns());
    }

    // least_run_[first][count]: the least m (F + G), on any rank, of a stage past the first
    // holding `count` consecutive layers that start at `first` or later (bound 4).
    void fill_least_runs() {
        least_run_.assign(
            layer_count_ + 1,
            std::vector<std::int64_t>(layer_count_ + 1, std::numeric_limits<std::int64_t>::max()));
        for (int first = layer_count_ - 1; first >= 1; --first)
            for (int count = 1; first + count <= layer_count_; ++count) {
                const StageCost cost =
                    stage_cost_of(costs_, {first, count}, false, first + count == layer_count_);
                std::int64_t least = least_run_[first + 1][count];
                for (int rank = 0; rank < rank_count_; ++rank)
                    least = std::min(
                        least, microbatches_ * (model_.on_rank(rank, cost.forward_ns) +
                                                model_.on_rank(rank, least_input_gradient(cost))));
                least_run_[first][count] = least;
            }
    }

    std::int64_t on_rank(int stage, std::int64_t ns) const {
        return model_.on_rank(rank_of_stage_[stage], ns);
    }

    // The least m (F + Bk) a stage of `rank` can have: one layer, interior or last (the first
    // stage is always filled first, so it never counts as unfilled).
    std::int64_t least_work_of_one_stage(int rank) const {
        std::int64_t least = std::numeric_limits<std::int64_t>::max();
        for (int layer = 0; layer < layer_count_; ++layer)
            for (const bool last : {false, true}) {
                const StageCost cost = stage_cost_of(costs_, {layer, 1}, false, last);
                least = std::min(least, model_.on_rank(rank, cost.forward_ns) +
                                            model_.on_rank(rank, least_backward(cost)));
            }
        return least * microbatches_;
    }

    // Bound (2) over every rank, given the filled stages.
    std::int64_t rank_bound(std::int64_t next_start) const {
        std::int64_t bound = 0;
        for (const RankState& rank : ranks_) {
            const std::int64_t start = rank.first_start < 0 ? next_start : rank.first_start;
            bound = std::max(bound, start + rank.work);
        }
        return bound;
    }

    std::int64_t unfilled_work(int rank) const {
        return ranks_[rank].unfilled * least_stage_work_[rank];
    }

    // Candidate sizes of stage `stage` starting at `first`, nearest the even share first (the
    // smaller first among equals), into `out`.
    void sizes_into(std::vector<int>& out, int stage, int first) const {
        out.clear();
        const int left = layer_count_ - first, stages_left = stage_count_ - stage;
        if (stages_left == 1) {
            out.push_back(left);
            return;
        }
        const double share = static_cast<double>(left) / stages_left;
        for (int size = 1; size <= left - (stages_left - 1); ++size)
            out.push_back(size);
        std::sort(out.begin(), out.end(), [&](int a, int b) {
            const double to_a = std::abs(a - share), to_b = std::abs(b - share);
            return to_a < to_b || (to_a == to_b && a < b);
        });
    }

    // Bound (2) over the ranks but one (other_ranks below).
    struct OtherRanks {
        std::int64_t started = 0, unstarted_work = -1;
    };

    // One size of the stage being filled: its figures for the bounds, and what they say of
    // every split below it.
    struct Child {
        int size = 0;
        std::int64_t forward = 0, input = 0, work = 0, backward0 = 0, below = 0;
        StageTimes times;  // for the chains (bound 5); set when below < best_step_
    };

    // Marks stage `stage`, starting at `start` with m (F + Bk) = `work`, filled on its rank.
    RankState enter(int stage, std::int64_t start, std::int64_t work) {
        RankState& state = ranks_[rank_of_stage_[stage]];
        const RankState saved = state;
        if (state.first_start < 0)
            state.first_start = start;
        state.work += work;
        --state.unfilled;
        return saved;
    }

    Child child_of(int stage, int first, int size, std::int64_t start, std::int64_t chain,
                   std::int64_t first_backward, std::int64_t bound_here, const OtherRanks& others) {
        const StageCost& cost = stage_cost(first, size);
        Child child;
        child.size = size;
        child.forward = on_rank(stage, cost.forward_ns);
        child.input = on_rank(stage, least_input_gradient(cost));
        child.work = microbatches_ * (child.forward + on_rank(stage, least_backward(cost)));
        child.backward0 = stage == 0 ? on_rank(0, cost.backward_ns()) : first_backward;
        if (!bounded_)
            return child;
        const RankState saved = enter(stage, start, child.work);
        const std::int64_t next_chain = stage == 0 ? chain : chain + child.input;
        child.below = std::max(
            {bound_here,
             bound(stage, start, child.forward, child.input, chain, child.backward0, others),
             lookahead(stage, first + size, start + child.forward, next_chain, child.backward0)});
        // best_step_ only falls, so every child the search descends into passes here.
        if (child.below < best_step_) {
            child.times = times_of(stage, first, size);
            child.below = std::max(child.below, chain_bound(stage, first + size, child.times));
        }
        ranks_[rank_of_stage_[stage]] = saved;
        return child;
    }

    // `start` = h_stage, `chain` = G_1 + ... + G_{stage-1}, `first_backward` = B_0, and
    // `bound_here` what the bounds say of every split below this node. With chains, the sizes
    // of least bound go first (the nearest an even share first among equals), so that the
    // first splits priced are the ones the chains found so far favour.
    void descend(int stage, int first, std::int64_t start, std::int64_t chain,
                 std::int64_t first_backward, std::int64_t bound_here) {
        if (nodes_ >= limits_.max_nodes ||
            (stage == stage_count_ && leaves_ >= limits_.max_splits_simulated)) {
            open_bound_ = std::min(open_bound_, bound_here);  // left unexplored
            return;
        }
        ++nodes_;
        // Before the first split is simulated, the nodes are what goes by.
        if (progress_ && leaves_ == 0 && nodes_ % kNodesPerReport == 0)
            progress_("bounding partial splits", nodes_, limits_.max_nodes);
        if (stage == stage_count_) {
            price_leaf();
            return;
        }
        // One buffer per depth: the recursion below uses the next depth's.
        std::vector<int>& sizes = sizes_by_stage_[stage];
        std::vector<Child>& children = children_by_stage_[stage];
        sizes_into(sizes, stage, first);
        children.clear();
        const OtherRanks others = bounded_ ? other_ranks(rank_of_stage_[stage]) : OtherRanks{};
        for (const int size : sizes)
            children.push_back(
                child_of(stage, first, size, start, chain, first_backward, bound_here, others));
        if (!cuts_.empty())
            std::stable_sort(children.begin(), children.end(),
                             [](const Child& a, const Child& b) { return a.below < b.below; });
        for (Child& child : children) {
            if (child.below >= best_step_)
                continue;
            if (bounded_)  // chains found since may say more
                child.below =
                    std::max(child.below, chain_bound(stage, first + child.size, child.times));
            if (child.below >= best_step_)
                continue;
            const RankState saved = enter(stage, start, child.work);
            counts_[stage] = child.size;
            for (Cut& cut : cuts_)
                cut.prefix[stage + 1] =
                    cut.prefix[stage] + stage_share_of(cut.path, stage, child.times);
            descend(stage + 1, first + child.size, start + child.forward,
                    stage == 0 ? chain : chain + child.input, child.backward0, child.below);
            ranks_[rank_of_stage_[stage]] = saved;
        }
    }

    // Bound (2) over the ranks but `excluded`, the same for every child of a node (filling a
    // stage changes its own rank only): the most of the started ranks' first start plus work,
    // and of the others' work, whose first start is the next stage's (-1: none left).
    OtherRanks other_ranks(int excluded) const {
        OtherRanks others;
        for (int rank = 0; rank < rank_count_; ++rank) {
            if (rank == excluded)
                continue;
            const RankState& state = ranks_[rank];
            const std::int64_t work = state.work + unfilled_work(rank);
            if (state.first_start < 0)
                others.unstarted_work = std::max(others.unstarted_work, work);
            else
                others.started = std::max(others.started, state.first_start + work);
        }
        return others;
    }

    // Bounds (2) and (3) once stage `stage` is entered on its rank.
    std::int64_t bound(int stage, std::int64_t start, std::int64_t forward, std::int64_t input,
                       std::int64_t chain, std::int64_t backward0, const OtherRanks& others) const {
        std::int64_t best = others.started;
        if (others.unstarted_work >= 0)
            best = std::max(best, start + forward + others.unstarted_work);
        const int rank = rank_of_stage_[stage];
        const RankState& state = ranks_[rank];
        best = std::max(best, state.first_start + state.work + unfilled_work(rank));
        if (stage >= 1)
            best = std::max(best, start + microbatches_ * (forward + input) + chain + backward0);
        return best;
    }

    // Bound (4) once stage `stage` is filled and the next starts at layer `next_first`.
    std::int64_t lookahead(int stage, int next_first, std::int64_t next_start,
                           std::int64_t next_chain, std::int64_t backward0) const {
        const int stages_left = stage_count_ - stage - 1;
        if (stages_left == 0)
            return 0;
        const int left = layer_count_ - next_first;
        const int heaviest = (left + stages_left - 1) / stages_left;
        return next_start + least_run_[next_first][heaviest] + next_chain + backward0;
    }

    void price_leaf() {
        ++leaves_;
        const std::int64_t step = simulated_step_of_split(experiment_, counts_);
        if (progress_)
            progress_("simulating splits", leaves_, limits_.max_splits_simulated);
        if (step < best_step_) {
            best_step_ = step;
            best_ = counts_;
        }
        add_cut_of_split();
    }

    // Bound (5): a chain of computations found under some split, at least this long under
    // every split (partition_paths.hpp).
    struct Cut {
        PathCut path;
        std::int64_t rounding = 0;
        std::vector<std::int64_t> prefix;      // its length over the filled stages
        std::vector<std::int64_t> least_rest;  // [stage][first layer]: least over the rest
    };

    std::size_t table_index(int first, int size) const {
        return static_cast<std::size_t>(first) * (layer_count_ + 1) + size;
    }
    const StageCost& stage_cost(int first, int size) const {
        return stage_table_[table_index(first, size)];
    }

    // Every stage [first, first + size) as a split can hold it: the first stage is the one at
    // layer 0, the last the one ending at the last layer.
    void fill_stage_table() {
        stage_table_.resize(table_index(layer_count_, 0) + 1);
        stage_bytes_.resize(stage_table_.size());
        for (int first = 0; first < layer_count_; ++first) {
            for (int size = 1; first + size <= layer_count_; ++size) {
                const runtime::StageLayers layers{first, size};
                stage_table_[table_index(first, size)] =
                    stage_cost_of(costs_, layers, first == 0, first + size == layer_count_);
                stage_bytes_[table_index(first, size)] =
                    sum_of_layers(costs_, layers, first == 0).output_bytes;
            }
            if (progress_)
                progress_("pricing stages", static_cast<std::size_t>(first) + 1,
                          static_cast<std::size_t>(layer_count_));
        }
    }

    // Stage `stage` holding [first, first + size): its times on its rank, for any chain.
    StageTimes times_of(int stage, int first, int size) const {
        // Bytes given per stage ([costs] activation_bytes) outrank the layers' outputs.
        const std::int64_t bytes = experiment_.activation_bytes.empty()
                                       ? stage_bytes_[table_index(first, size)]
                                       : model_.bytes_of(stage);
        return stage_times_of(model_, rank_of_stage_, stage, stage_cost(first, size), bytes);
    }
    std::int64_t share(const Cut& cut, int stage, int first, int size) const {
        return stage_share_of(cut.path, stage, times_of(stage, first, size));
    }

    std::size_t rest_index(int stage, int first) const {
        return static_cast<std::size_t>(stage) * (layer_count_ + 1) + first;
    }

    // Bound (5) below the child of stage `stage` whose layers end before `next_first`, at
    // `times`. The chain that cuts a branch goes first next time: nearby branches tend to fall
    // to it.
    std::int64_t chain_bound(int stage, int next_first, const StageTimes& times) {
        std::int64_t best = 0;
        for (std::size_t index = 0; index < cuts_.size(); ++index) {
            const Cut& cut = cuts_[index];
            best = std::max(best, cut.prefix[stage] + stage_share_of(cut.path, stage, times) +
                                      cut.least_rest[rest_index(stage + 1, next_first)] +
                                      cut.rounding);
            if (best >= best_step_) {
                std::swap(cuts_[index], cuts_[0]);
                break;  // cut already: the other chains cannot change that
            }
        }
        return best;
    }

    // The least length of `cut` over the stages from `stage` on, for each first layer: a
    // shortest path over split points, stage by stage from the last.
    void fill_least_rest(Cut& cut) const {
        constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
        cut.least_rest.assign(rest_index(stage_count_ + 1, 0), kNone);
        cut.least_rest[rest_index(stage_count_, layer_count_)] = 0;
        for (int stage = stage_count_ - 1; stage >= 0; --stage) {
            const int stages_after = stage_count_ - 1 - stage;
            for (int first = stage; first + stages_after < layer_count_; ++first) {
                if (stage == 0 && first > 0)
                    break;
                std::int64_t least = kNone;
                for (int size = 1; first + size + stages_after <= layer_count_; ++size) {
                    const std::int64_t rest = cut.least_rest[rest_index(stage + 1, first + size)];
                    if (rest != kNone)
                        least = std::min(least, share(cut, stage, first, size) + rest);
                }
                cut.least_rest[rest_index(stage, first)] = least;
            }
        }
    }

    // Adds the longest chain of the split `counts_` to the cuts, with its prefix along it.
    void add_cut_of_split() {
        if (!graph_ || cuts_.size() >= max_cuts())
            return;
        Experiment split = experiment_;
        split.model.split_points = split_points_for(costs_, counts_);
        const LongestChain chain = graph_->longest_chain(cost_model_for(split, stage_count_));
        if (chain.length_ns <= 0 || std::any_of(cuts_.begin(), cuts_.end(), [&](const Cut& cut) {
                return cut.path == chain.cut;
            }))
            return;
        Cut cut;
        cut.path = chain.cut;
        cut.rounding = rounding_share_of(cut.path, model_);
        fill_least_rest(cut);
        cut.prefix.assign(stage_count_ + 1, 0);
        for (int stage = 0, first = 0; stage < stage_count_; first += counts_[stage++])
            cut.prefix[stage + 1] = cut.prefix[stage] + share(cut, stage, first, counts_[stage]);
        cuts_.push_back(std::move(cut));
    }

    // Each chain costs a shortest path over (stage, first layer, size) and a check at every
    // partial split: at most 256 of them, fewer where layers are many (about 2^28 steps in all).
    std::size_t max_cuts() const {
        const double work_per_cut = 0.5 * stage_count_ * layer_count_ * layer_count_;
        return static_cast<std::size_t>(std::clamp(std::ldexp(1.0, 28) / work_per_cut, 1.0, 256.0));
    }

    Experiment experiment_;
    const LayerCosts& costs_;
    PartitionLimits limits_;
    const PartitionProgress& progress_;
    static constexpr std::size_t kNodesPerReport = 4096;
    std::int64_t open_bound_ = std::numeric_limits<std::int64_t>::max();
    int layer_count_ = 0, stage_count_ = 0, rank_count_ = 0, microbatches_ = 0;
    std::vector<int> rank_of_stage_;
    CostModel model_;
    bool bounded_ = true;
    bool whole_backward_ = false;  // the schedule has no I action: every input gradient is a B
    std::vector<std::vector<std::int64_t>> least_run_;
    std::vector<std::int64_t> least_stage_work_;
    std::optional<ComputationGraph> graph_;  // absent when the schedule follows the costs
    std::vector<StageCost> stage_table_;     // [first][size], see fill_stage_table
    std::vector<std::int64_t> stage_bytes_;
    std::vector<Cut> cuts_;
    std::vector<int> counts_, best_;
    std::vector<std::vector<int>> sizes_by_stage_;       // descend's buffers, by stage
    std::vector<std::vector<Child>> children_by_stage_;  // (sized in run())
    std::vector<RankState> ranks_;
    std::int64_t best_step_ = 0;
    std::size_t leaves_ = 0, nodes_ = 0;
};

}  // namespace

namespace {

// How many layers the experiment's per-layer costs describe; refuses an experiment without any.
std::size_t partition_layer_count(const Experiment& experiment) {
    if (experiment.layers)
        return experiment.layers->names.size();
    if (!experiment.transformer)
        throw ExperimentError(
            "partition: needs per-layer costs: [layers] (pipelens calibrate writes them from a "
            "profiled run) or a [transformer] model (--layers, --hidden, ...)");
    return static_cast<std::size_t>(std::max(0, experiment.transformer->layers));
}

}  // namespace

LayerCosts partition_layer_costs(const Experiment& experiment) {
    partition_layer_count(experiment);
    if (experiment.layers)
        return *experiment.layers;
    const TransformerSpec& spec = *experiment.transformer;
    const LayerFlops flops = transformer_layer_flops(spec);
    LayerCosts costs;
    for (int layer = 0; layer < spec.layers; ++layer) {
        costs.names.push_back("layers." + std::to_string(layer));
        costs.forward_ns.push_back(flops_to_ns(flops.forward, spec));
        costs.input_ns.push_back(flops_to_ns(flops.input_gradient, spec));
        costs.weight_ns.push_back(flops_to_ns(flops.weight_gradient, spec));
        costs.backward_ns.push_back(costs.input_ns.back() + costs.weight_ns.back());
        costs.held_bytes.push_back(layer_held_activation_bytes(spec));
        costs.output_bytes.push_back(boundary_activation_bytes(spec));
        costs.gradient_bytes.push_back(0);
        costs.backward_peak_bytes.push_back(0);
    }
    // The output layer weighs on the last stage as its loss (the embedding has no FLOPs).
    const std::int64_t output = flops_to_ns(output_layer_flops(spec), spec);
    costs.loss = {output, output, output, 2 * output, 0, 0};
    return costs;
}

std::vector<std::string> split_points_for(const LayerCosts& costs,
                                          const std::vector<int>& layers_per_stage) {
    std::vector<std::string> points;
    int first = 0;
    for (std::size_t stage = 0; stage + 1 < layers_per_stage.size(); ++stage) {
        first += layers_per_stage[stage];
        points.push_back(costs.names.at(first));
    }
    return points;
}

std::vector<int> even_layers_per_stage(int layers, int stage_count) {
    std::vector<int> counts(stage_count, layers / stage_count);
    for (int stage = 0; stage < layers % stage_count; ++stage)
        ++counts[stage];
    return counts;
}

std::int64_t simulated_step_of_split(Experiment experiment,
                                     const std::vector<int>& layers_per_stage) {
    experiment.model.split_points = split_points_for(*experiment.layers, layers_per_stage);
    resolve_zero_bubble_inputs(experiment);
    const Schedule lowered = lowered_schedule_for(experiment);
    return simulate(lowered, cost_model_for(experiment, lowered.stage_count)).step_time_ns;
}

PartitionResult best_partition(const Experiment& experiment, const PartitionLimits& limits,
                               const PartitionProgress& progress) {
    const std::size_t layers = partition_layer_count(experiment);
    const int stages = experiment.shape.rank_count * experiment.shape.stages_per_rank;
    if (static_cast<int>(layers) < stages)
        throw ExperimentError(fmt::format(
            "partition: {} layers cannot fill {} stages (pp {} x v {}): every stage needs a "
            "layer",
            layers, stages, experiment.shape.rank_count, experiment.shape.stages_per_rank));
    if (layers > kMaxPartitionLayers)
        throw ScheduleTooLargeError(fmt::format(
            "partition: {} layers are more than the search takes ({}): it prices every run of "
            "consecutive layers as a stage, a table of layers squared ({} layers: about 1.3 GB, "
            "and a search that grows with the stages)",
            layers, kMaxPartitionLayers, kMaxPartitionLayers));
    validate_experiment(experiment);  // as simulate does: a negative device speed gave 0 ns
    return SplitSearch(experiment, partition_layer_costs(experiment), limits, progress).run();
}

}  // namespace pipelens::sim
