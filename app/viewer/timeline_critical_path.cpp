// The critical path and whom each bubble waited on (engine/analysis's hold graph and bubble
// accounting), found from the actions the model already holds (no second read of the file), then
// mapped back to lane positions.
//
// The analysis needs each rank's actions in program order (by recorded step); the lanes hold
// them by start time. `by_step[r]` is the bridge: rank r's lane positions sorted by step, so the
// analysis's index i on rank r is by_step[r][i].
#include <algorithm>

#include "app/viewer/timeline_model.hpp"
#include "engine/analysis/bubble_accounting.hpp"
#include "engine/schedule/action.hpp"
#include "engine/schedule/action_facts.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::viewer {
namespace {

traces::StoredAction stored(const TimelineAction& action, bool communication) {
    traces::StoredAction row;
    row.step = action.step;
    row.stage = action.stage;
    row.microbatch = action.microbatch;
    row.pair_id = action.pair_id;
    row.start_ns = action.start_ns;
    row.end_ns = action.end_ns;
    row.bytes = action.bytes;
    row.lane = communication ? traces::ActionLane::communication : traces::ActionLane::compute;
    row.kind = action.kind;
    return row;
}

// Rank `rank`'s actions in step order: each lane is by start time, which is nearly always step
// order too, so the two lanes merge; a lane out of step order is sorted first.
std::vector<ActionLocation> program_order(const RankTimeline& rank) {
    const auto lane_order = [&](bool communication) {
        const Lane& lane = communication ? rank.communication : rank.compute;
        std::vector<std::pair<std::int32_t, ActionLocation>> order;
        order.reserve(lane.actions.size());
        for (std::size_t index = 0; index < lane.actions.size(); ++index)
            order.emplace_back(lane.actions[index].step,
                               ActionLocation{rank.rank, communication, index});
        const auto by_step = [](const auto& left, const auto& right) {
            return left.first < right.first;
        };
        if (!std::is_sorted(order.begin(), order.end(), by_step))
            std::stable_sort(order.begin(), order.end(), by_step);
        return order;
    };
    const auto compute = lane_order(false), communication = lane_order(true);
    std::vector<std::pair<std::int32_t, ActionLocation>> merged(compute.size() +
                                                                communication.size());
    std::merge(compute.begin(), compute.end(), communication.begin(), communication.end(),
               merged.begin(),
               [](const auto& left, const auto& right) { return left.first < right.first; });
    std::vector<ActionLocation> locations;
    locations.reserve(merged.size());
    for (const auto& entry : merged)
        locations.push_back(entry.second);
    return locations;
}

}  // namespace

HoldAnalysis TimelineModel::analyse_holds(const std::string& source) const {
    HoldAnalysis result;
    std::vector<analysis::RankRows> rows(ranks_.size());
    std::vector<std::vector<ActionLocation>> by_step(ranks_.size());
    for (std::size_t rank = 0; rank < ranks_.size(); ++rank) {
        by_step[rank] = program_order(ranks_[rank]);
        rows[rank].actions.reserve(by_step[rank].size());
        for (const ActionLocation& at : by_step[rank]) {  // in step order: no sort needed later
            const TimelineAction& action = this->action(at);
            rows[rank].actions.push_back(stored(action, at.communication));
            if (action.kind == static_cast<std::uint8_t>(ActionKind::overlap_forward_backward))
                rows[rank].overlap_labels.emplace_back(action.step, std::string(label(action)));
        }
    }
    try {
        const analysis::TimedSchedule timed =
            analysis::timed_schedule_from_rows(source, run_, std::move(rows));
        const analysis::HoldGraph holds(timed);
        const analysis::CriticalPath path = analysis::critical_path(timed, holds);
        const auto location = [&](analysis::ActionRef ref) {
            return by_step[static_cast<std::size_t>(ref.rank)][static_cast<std::size_t>(ref.index)];
        };
        for (const analysis::PathLink& link : path.links)
            result.path.actions.push_back(location(link.action));
        result.path.share_ns = path.share_ns;
        result.waits.resize(ranks_.size());
        for (const RankTimeline& rank : ranks_) {
            const auto& order = by_step[static_cast<std::size_t>(rank.rank)];
            for (std::size_t index = 0; index < rank.bubbles.size(); ++index) {
                const Bubble& bubble = rank.bubbles[index];
                if (bubble.before < 0)
                    continue;
                const std::int32_t step = rank.compute.actions[bubble.before].step;
                const auto found =
                    std::lower_bound(order.begin(), order.end(), step,
                                     [&](const ActionLocation& at, std::int32_t value) {
                                         return action(at).step < value;
                                     });
                const analysis::WaitedFor waited = analysis::waited_for(
                    timed, holds, {rank.rank, static_cast<std::int32_t>(found - order.begin())});
                BubbleWait wait{index, waited.peer, -1, std::nullopt};
                if (waited.held_by && waited.held_by->rank == rank.rank) {
                    const ActionLocation held = location(*waited.held_by);
                    if (held.communication &&
                        is_receive(static_cast<ActionKind>(this->action(held).kind)))
                        wait.waited_for = static_cast<std::int32_t>(held.index);
                }
                if (waited.waited_on)
                    wait.waited_on = location(*waited.waited_on);
                result.waits[static_cast<std::size_t>(rank.rank)].push_back(wait);
            }
        }
    } catch (const traces::TraceError& error) {
        result = {};
        result.path.error = error.what();
    }
    return result;
}

void TimelineModel::apply(HoldAnalysis analysis) {
    analysis.path.times.clear();
    for (const ActionLocation& at : analysis.path.actions) {
        RankTimeline& rank = ranks_[static_cast<std::size_t>(at.rank)];
        TimelineAction& action =
            (at.communication ? rank.communication : rank.compute).actions[at.index];
        action.on_critical_path = true;
        analysis.path.times.emplace_back(action.start_ns, action.end_ns);
    }
    critical_path_ = std::move(analysis.path);
    for (std::size_t rank = 0; rank < analysis.waits.size() && rank < ranks_.size(); ++rank)
        for (const BubbleWait& wait : analysis.waits[rank]) {
            Bubble& bubble = ranks_[rank].bubbles[wait.bubble];
            bubble.waited_on = wait.waited_on;
            if (bubble.cause != BubbleCause::idle && bubble.cause != BubbleCause::waiting)
                continue;  // warm-up: what it waited for is kept only as where a click goes
            bubble.cause = wait.peer >= 0 ? BubbleCause::waiting : BubbleCause::idle;
            bubble.peer = wait.peer;
            bubble.waited_for = wait.peer >= 0 ? wait.waited_for : -1;
        }
}

}  // namespace pipelens::viewer
