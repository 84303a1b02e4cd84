// The longest chain of computations of a schedule under a cost model, found by running the
// computations as early as their ranks and inputs allow (transfers delay cross-rank inputs, the
// communication streams are taken as always free), and the chain's counts as a PathCut.
#include "sim/partition_paths.hpp"

#include <algorithm>

#include "engine/schedule/dependencies.hpp"

namespace pipelens::sim {
namespace {

bool is_computation(ActionKind kind) {
    return kind == ActionKind::forward || kind == ActionKind::backward_input ||
           kind == ActionKind::backward_weight || kind == ActionKind::full_backward ||
           kind == ActionKind::overlap_forward_backward;
}

// The index of a part's kind in PathCut::computations, -1 for what the chain does not count.
int counted_kind(ActionKind kind) {
    switch (kind) {
        case ActionKind::forward:
            return 0;
        case ActionKind::backward_input:
            return 1;
        case ActionKind::backward_weight:
            return 2;
        case ActionKind::full_backward:
            return 3;
        default:
            return -1;
    }
}

// The signals a chain follows between computations; the others come from communication or
// program order, which the chain's rank order already covers.
int tracked_signal(Signal signal) {
    switch (signal) {
        case Signal::forward:
            return 0;
        case Signal::input_gradient:
            return 1;
        case Signal::weight_ready:
            return 2;
        default:
            return -1;
    }
}

Schedule computations_only(const Schedule& schedule) {
    Schedule out = schedule;
    for (std::vector<Action>& actions : out.ranks)
        std::erase_if(actions, [](const Action& action) { return !is_computation(action.kind); });
    out.has_communication = false;
    out.pair_count = 0;
    return out;
}

constexpr int kNoCrossing = -1;

// One run of the computations: each node's end and the node it waited for last.
class ChainRun {
  public:
    ChainRun(const Schedule& schedule, const CostModel& costs)
        : schedule_(schedule),
          costs_(costs),
          rules_(DependencyRules::pytorch()),
          microbatches_(schedule.microbatch_count) {
        producer_.assign(3, std::vector<int>(static_cast<std::size_t>(schedule.stage_count) *
                                                 std::max(1, microbatches_),
                                             -1));
    }

    LongestChain run() {
        const int ranks = static_cast<int>(schedule_.ranks.size());
        std::vector<std::size_t> next(ranks, 0);
        std::vector<int> last(ranks, -1);
        std::size_t left = 0;
        for (const std::vector<Action>& actions : schedule_.ranks)
            left += actions.size();
        for (bool progress = true; left > 0 && progress;) {
            progress = false;
            for (int rank = 0; rank < ranks; ++rank)
                while (next[rank] < schedule_.ranks[rank].size() &&
                       execute(rank, schedule_.ranks[rank][next[rank]], last[rank])) {
                    last[rank] = static_cast<int>(nodes_.size()) - 1;
                    ++next[rank];
                    --left;
                    progress = true;
                }
        }
        if (left > 0 || nodes_.empty())
            return {};
        return chain_from(latest_node());
    }

  private:
    struct Node {
        const Action* action;
        std::int64_t end;
        int waited_for;  // the node, -1 at the chain's start
        int crossing;    // 2 b (+1 upstream) for a transfer over boundary b, else kNoCrossing
    };

    int slot(int stage, int microbatch) const { return stage * microbatches_ + microbatch; }

    // Runs `action` on `rank` if its inputs exist, after the rank's previous computation `last`.
    bool execute(int rank, const Action& action, int last) {
        Node node{&action, last < 0 ? 0 : nodes_[last].end, last, kNoCrossing};
        std::int64_t work = 0;
        for (const Action& part : schedule_.parts_of(action)) {
            const bool ready = rules_.for_each_input(schedule_, rank, part, [&](const Input& in) {
                const int signal = tracked_signal(in.signal);
                if (in.program_order || signal < 0)
                    return true;
                const int producer = producer_[signal][slot(in.stage, in.microbatch)];
                if (producer < 0)
                    return false;
                const int boundary = std::min(in.stage, part.stage);
                const bool crosses = in.holder != rank;
                const std::int64_t arrival =
                    nodes_[producer].end +
                    (crosses ? costs_.transfer_ns(in.holder, rank, costs_.bytes_of(boundary)) : 0);
                if (arrival > node.end || node.waited_for < 0) {
                    node.end = std::max(node.end, arrival);
                    node.waited_for = producer;
                    node.crossing =
                        crosses ? 2 * boundary + (in.stage > part.stage ? 1 : 0) : kNoCrossing;
                }
                return true;
            });
            if (!ready)
                return false;
            if (counted_kind(part.kind) >= 0)
                work += costs_.compute_ns(part);
        }
        node.end += costs_.on_rank(rank, work);  // node.end held the start until here
        nodes_.push_back(node);
        for (const Action& part : schedule_.parts_of(action))
            for (const Signal produced : rules_.products_of(part.kind)) {
                const int signal = tracked_signal(produced);
                if (signal >= 0 && part.microbatch >= 0)
                    producer_[signal][slot(part.stage, part.microbatch)] =
                        static_cast<int>(nodes_.size()) - 1;
            }
        return true;
    }

    int latest_node() const {
        int latest = 0;
        for (int index = 1; index < static_cast<int>(nodes_.size()); ++index)
            if (nodes_[index].end > nodes_[latest].end)
                latest = index;
        return latest;
    }

    LongestChain chain_from(int last) const {
        LongestChain chain;
        chain.length_ns = nodes_[last].end;
        PathCut& cut = chain.cut;
        cut.computations.assign(schedule_.stage_count, {0, 0, 0, 0});
        cut.crossings_down.assign(std::max(0, schedule_.stage_count - 1), 0);
        cut.crossings_up = cut.crossings_down;
        for (int index = last; index >= 0; index = nodes_[index].waited_for) {
            const Node& node = nodes_[index];
            if (node.action->kind == ActionKind::overlap_forward_backward)
                ++cut.overlaps;
            for (const Action& part : schedule_.parts_of(*node.action))
                if (const int kind = counted_kind(part.kind); kind >= 0)
                    ++cut.computations[part.stage][kind];
            if (node.crossing != kNoCrossing)
                ++(node.crossing % 2 ? cut.crossings_up : cut.crossings_down)[node.crossing / 2];
        }
        return chain;
    }

    const Schedule& schedule_;
    const CostModel& costs_;
    const DependencyRules& rules_;
    int microbatches_;
    std::vector<Node> nodes_;
    std::vector<std::vector<int>> producer_;  // per tracked signal and (stage, microbatch)
};

}  // namespace

StageTimes stage_times_of(const CostModel& costs, const std::vector<int>& stage_to_rank, int stage,
                          const StageCost& cost, std::int64_t bytes) {
    const int rank = stage_to_rank[stage];
    StageTimes times;
    times.computations = {costs.on_rank(rank, cost.forward_ns), costs.on_rank(rank, cost.input_ns),
                          costs.on_rank(rank, cost.weight_ns),
                          costs.on_rank(rank, cost.backward_ns())};
    if (stage + 1 < static_cast<int>(stage_to_rank.size())) {
        const int next = stage_to_rank[stage + 1];
        times.down_ns = costs.transfer_ns(rank, next, bytes);
        times.up_ns = costs.transfer_ns(next, rank, bytes);
    }
    return times;
}

std::int64_t stage_share_of(const PathCut& cut, const CostModel& costs,
                            const std::vector<int>& stage_to_rank, int stage, const StageCost& cost,
                            std::int64_t bytes) {
    return stage_share_of(cut, stage, stage_times_of(costs, stage_to_rank, stage, cost, bytes));
}

std::int64_t rounding_share_of(const PathCut& cut, const CostModel& costs) {
    return costs.rank_slowdown.empty() ? 0 : -cut.overlaps;
}

std::int64_t length_of(const PathCut& cut, const CostModel& costs,
                       const std::vector<int>& stage_to_rank) {
    std::int64_t length = rounding_share_of(cut, costs);
    for (int stage = 0; stage < static_cast<int>(stage_to_rank.size()); ++stage)
        length += stage_share_of(cut, costs, stage_to_rank, stage, costs.stage(stage),
                                 costs.bytes_of(stage));
    return length;
}

ComputationGraph::ComputationGraph(const Schedule& schedule)
    : schedule_(computations_only(schedule)) {}

LongestChain ComputationGraph::longest_chain(const CostModel& costs) const {
    return ChainRun(schedule_, costs).run();
}

}  // namespace pipelens::sim
