// Loading a run into lanes, bubble causes, and the culling and merging the timeline draws with.
#include "app/viewer/timeline_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/schedule/action.hpp"

namespace pipelens::viewer {
namespace {

bool is_receive(std::uint8_t kind) {
    return kind == static_cast<std::uint8_t>(ActionKind::recv_forward) ||
           kind == static_cast<std::uint8_t>(ActionKind::recv_backward);
}

void index_lane(Lane& lane) {
    std::stable_sort(lane.actions.begin(), lane.actions.end(),
                     [](const TimelineAction& left, const TimelineAction& right) {
                         return left.start_ns < right.start_ns;
                     });
    lane.max_end.resize(lane.actions.size());
    std::int64_t running = 0;
    for (std::size_t index = 0; index < lane.actions.size(); ++index) {
        running = std::max(running, lane.actions[index].end_ns);
        lane.max_end[index] = running;
    }
}

}  // namespace

TimelineModel TimelineModel::from_records(traces::RunRecord run,
                                          std::vector<traces::ActionRecord> actions,
                                          std::vector<traces::PairRecord> pairs,
                                          std::vector<traces::RankRecord> figures,
                                          const std::vector<traces::MemoryRecord>& memory) {
    TimelineModel model;
    model.run_ = std::move(run);
    model.pairs_ = std::move(pairs);
    int rank_count = 0;
    for (const auto& action : actions)
        rank_count = std::max(rank_count, action.rank + 1);
    for (const auto& figure : figures)
        rank_count = std::max(rank_count, figure.rank + 1);
    model.ranks_.resize(rank_count);
    for (int rank = 0; rank < rank_count; ++rank)
        model.ranks_[rank].rank = rank;
    for (auto& figure : figures)
        model.ranks_.at(figure.rank).figures = std::move(figure);
    // Labels are nearly all distinct (stage x microbatch x kind), so they are kept one per
    // action, in record order, without hashing.
    model.labels_.reserve(actions.size());
    for (auto& record : actions) {
        const auto label = static_cast<std::uint32_t>(model.labels_.size());
        model.labels_.push_back(std::move(record.label));
        TimelineAction action{record.start_ns,   record.end_ns,  record.bytes, record.stage,
                              record.microbatch, record.pair_id, record.step,  label,
                              record.kind};
        RankTimeline& rank = model.ranks_.at(record.rank);
        (record.lane == traces::ActionLane::compute ? rank.compute : rank.communication)
            .actions.push_back(action);
    }
    for (const auto& sample : memory)
        if (sample.rank >= 0 && sample.rank < rank_count)
            model.ranks_[sample.rank].memory.push_back(sample);
    model.action_count_ = actions.size();
    model.finish();
    return model;
}

TimelineModel TimelineModel::load(const traces::TraceReader& reader, std::int64_t run_id) {
    return from_records(reader.run(run_id), reader.actions(run_id), reader.pairs(run_id),
                        reader.ranks(run_id), reader.memory(run_id));
}

void TimelineModel::finish() {
    for (RankTimeline& rank : ranks_) {
        for (const auto& sample : rank.memory)
            memory_peak_ = std::max(memory_peak_, sample.bytes);
        index_lane(rank.compute);
        index_lane(rank.communication);
        if (!rank.compute.max_end.empty())
            end_ns_ = std::max(end_ns_, rank.compute.max_end.back());
        if (!rank.communication.max_end.empty())
            end_ns_ = std::max(end_ns_, rank.communication.max_end.back());
    }
    pair_index_.assign(pairs_.size(), {});
    for (std::size_t index = 0; index < pairs_.size(); ++index) {
        const std::int32_t id = pairs_[index].pair_id;
        if (id >= 0) {
            if (static_cast<std::size_t>(id) >= pair_slot_.size())
                pair_slot_.resize(static_cast<std::size_t>(id) + 1, -1);
            pair_slot_[static_cast<std::size_t>(id)] = static_cast<std::int64_t>(index);
        }
    }
    for (const RankTimeline& rank : ranks_)
        for (std::size_t index = 0; index < rank.communication.actions.size(); ++index) {
            const TimelineAction& action = rank.communication.actions[index];
            const auto position = pair_position(action.pair_id);
            if (!position)
                continue;
            auto& ends = pair_index_[*position];
            (is_receive(action.kind) ? ends.second : ends.first) = {rank.rank, true, index};
        }
    // Bubbles: gaps of the compute lane within [0, end of the step].
    for (RankTimeline& rank : ranks_) {
        const auto& compute = rank.compute.actions;
        std::int64_t cursor = 0;
        // Receives of this rank by completion time: the latest one completing in a gap is what
        // the rank waited for.
        std::vector<std::pair<std::int64_t, const TimelineAction*>> receives;
        for (const TimelineAction& action : rank.communication.actions)
            if (is_receive(action.kind))
                receives.emplace_back(action.end_ns, &action);
        std::sort(receives.begin(), receives.end(),
                  [](const auto& left, const auto& right) { return left.first < right.first; });
        const auto cause_of = [&](std::int64_t from, std::int64_t to, bool first) -> std::string {
            if (first)
                return "warm-up";
            const auto after = std::upper_bound(
                receives.begin(), receives.end(), to,
                [](std::int64_t time, const auto& receive) { return time < receive.first; });
            if (after == receives.begin() || std::prev(after)->first <= from)
                return "idle";
            const TimelineAction& waited = *std::prev(after)->second;
            const auto position = pair_position(waited.pair_id);
            const int peer = position ? pairs_[*position].send_rank : -1;
            return fmt::format("waiting on rank {} ({})", peer, labels_[waited.label]);
        };
        for (std::size_t index = 0; index < compute.size(); ++index) {
            if (compute[index].start_ns > cursor)
                rank.bubbles.push_back({cursor, compute[index].start_ns,
                                        cause_of(cursor, compute[index].start_ns, index == 0)});
            cursor = std::max(cursor, compute[index].end_ns);
        }
        if (!compute.empty() && cursor < end_ns_)
            rank.bubbles.push_back({cursor, end_ns_, "cool-down"});
    }
}

const Lane& TimelineModel::lane(const ActionLocation& at) const {
    const RankTimeline& rank = ranks_.at(at.rank);
    return at.communication ? rank.communication : rank.compute;
}

const TimelineAction& TimelineModel::action(const ActionLocation& at) const {
    return lane(at).actions.at(at.index);
}

void TimelineModel::visible_blocks(const Lane& lane, std::int64_t from, std::int64_t to,
                                   std::int64_t min_ns, std::vector<DrawBlock>& out) {
    // First action that may overlap `from`: its running max end reaches past `from`.
    const auto& actions = lane.actions;
    std::size_t index = static_cast<std::size_t>(
        std::upper_bound(lane.max_end.begin(), lane.max_end.end(), from) - lane.max_end.begin());
    const auto starting_before = [&](std::size_t first, std::int64_t time) {
        return static_cast<std::size_t>(
            std::lower_bound(actions.begin() + static_cast<std::ptrdiff_t>(first), actions.end(),
                             time,
                             [](const TimelineAction& action, std::int64_t value) {
                                 return action.start_ns < value;
                             }) -
            actions.begin());
    };
    while (index < actions.size() && actions[index].start_ns < to) {
        DrawBlock block{actions[index].start_ns, actions[index].end_ns, index, 1};
        std::size_t next = index + 1;
        if (block.end_ns - block.start_ns < min_ns) {
            // Too narrow to see: take in, with one binary search, every action starting within
            // min_ns of it, so a zoomed-out frame costs per pixel, not per action.
            next = std::max(next, starting_before(next, block.start_ns + min_ns));
            block.end_ns = std::max(block.end_ns, lane.max_end[next - 1]);
            if (next < actions.size() && block.end_ns - block.start_ns < min_ns &&
                actions[next].start_ns - block.end_ns < min_ns && actions[next].start_ns < to) {
                block.end_ns = std::max(block.end_ns, actions[next].end_ns);
                ++next;
            }
            block.count = next - index;
        }
        out.push_back(block);
        index = next;
    }
}

std::optional<ActionLocation> TimelineModel::find(const std::string& label) const {
    for (const RankTimeline& rank : ranks_)
        for (bool communication : {false, true}) {
            const Lane& lane = communication ? rank.communication : rank.compute;
            for (std::size_t index = 0; index < lane.actions.size(); ++index)
                if (labels_[lane.actions[index].label] == label)
                    return ActionLocation{rank.rank, communication, index};
        }
    return std::nullopt;
}

std::optional<std::size_t> TimelineModel::pair_position(std::int32_t pair_id) const {
    if (pair_id < 0 || static_cast<std::size_t>(pair_id) >= pair_slot_.size() ||
        pair_slot_[static_cast<std::size_t>(pair_id)] < 0)
        return std::nullopt;
    return static_cast<std::size_t>(pair_slot_[static_cast<std::size_t>(pair_id)]);
}

std::optional<std::pair<ActionLocation, ActionLocation>> TimelineModel::pair_ends(
    std::int32_t pair_id) const {
    const auto position = pair_position(pair_id);
    if (!position)
        return std::nullopt;
    return pair_index_[*position];
}

std::optional<std::size_t> TimelineModel::action_at(const Lane& lane, std::int64_t time_ns) const {
    std::vector<DrawBlock> blocks;
    visible_blocks(lane, time_ns, time_ns + 1, 0, blocks);
    for (const DrawBlock& block : blocks)
        if (lane.actions[block.first].start_ns <= time_ns &&
            time_ns < lane.actions[block.first].end_ns)
            return block.first;
    return std::nullopt;
}

}  // namespace pipelens::viewer
