// Loading a run into lanes, bubble causes, and the culling and merging the timeline draws with.
#include "app/viewer/timeline_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "app/viewer/galloping_search.hpp"
#include "app/viewer/label_ids.hpp"
#include "engine/run_record/parallel_for.hpp"
#include "engine/run_record/thread_budget.hpp"
#include "engine/schedule/action.hpp"
#include "traces/text/action_label.hpp"

namespace pipelens::viewer {
namespace {

bool is_receive(std::uint8_t kind) {
    return kind == static_cast<std::uint8_t>(ActionKind::recv_forward) ||
           kind == static_cast<std::uint8_t>(ActionKind::recv_backward);
}

// Time by kind and the latest end of actions [first, last): whole chunks from their sums, the
// ragged ends action by action.
struct RangeFigures {
    std::array<double, 12> kind_ns{};
    std::int64_t max_end = 0;
};

RangeFigures range_figures(const Lane& lane, std::size_t first, std::size_t last) {
    RangeFigures figures;
    const auto add_action = [&](std::size_t index) {
        const TimelineAction& action = lane.actions[index];
        figures.kind_ns[std::min<std::size_t>(action.kind, figures.kind_ns.size() - 1)] +=
            static_cast<double>(action.end_ns - action.start_ns);
        figures.max_end = std::max(figures.max_end, action.end_ns);
    };
    std::size_t index = first;
    for (; index < last && index % kLaneChunk != 0; ++index)
        add_action(index);
    for (; index + kLaneChunk <= last; index += kLaneChunk) {
        const LaneChunk& chunk = lane.chunks[index / kLaneChunk];
        for (std::size_t kind = 0; kind < figures.kind_ns.size(); ++kind)
            figures.kind_ns[kind] += chunk.kind_ns[kind];
        figures.max_end = std::max(figures.max_end, chunk.max_end);
    }
    for (; index < last; ++index)
        add_action(index);
    return figures;
}

// The first action at or after `first` that starts at or after `time`: nearly always a few
// dozen actions on, so found by galloping.
std::size_t first_starting_at(const std::vector<TimelineAction>& actions, std::size_t first,
                              std::int64_t time) {
    const auto begin = actions.begin() + static_cast<std::ptrdiff_t>(first);
    return static_cast<std::size_t>(galloping_partition_point(begin, actions.end(),
                                                              [&](const TimelineAction& action) {
                                                                  return action.start_ns < time;
                                                              }) -
                                    actions.begin());
}

// A merged block [first, natural_end) that holds a whole chunk ends at a chunk boundary
// instead: the next block then starts on one too, and both are summed chunk by chunk. Zoomed
// out on a long lane every block is then a few chunks, and a frame reads a few bytes per
// block rather than every action in view (tens of MB at 10 M actions). The trimmed-off
// actions start within the same few pixels, so the picture does not change.
std::size_t chunk_aligned_end(std::size_t first, std::size_t natural_end) {
    const std::size_t first_boundary = (first + kLaneChunk - 1) / kLaneChunk * kLaneChunk;
    const std::size_t last_boundary = natural_end / kLaneChunk * kLaneChunk;
    return last_boundary >= first_boundary + kLaneChunk ? last_boundary : natural_end;
}

// The start of action `index`, from its chunk where it opens one: a zoomed-out frame then
// reads chunks, which lie together, and not actions spread over megabytes.
std::int64_t start_of(const Lane& lane, std::size_t index) {
    return index % kLaneChunk == 0 ? lane.chunks[index / kLaneChunk].first_start
                                   : lane.actions[index].start_ns;
}

DrawBlock merged_block(const Lane& lane, std::size_t first, std::size_t end,
                       const RangeFigures& figures) {
    DrawBlock block{start_of(lane, first), figures.max_end, first, end - first, 0};
    const auto longest = std::max_element(figures.kind_ns.begin(), figures.kind_ns.end());
    // Actions that all took no time (sends and receives of free links) have no longest kind:
    // the first one's colour, not the first kind's (F), says what they are.
    block.kind = *longest > 0 ? static_cast<std::uint8_t>(longest - figures.kind_ns.begin())
                              : lane.actions[first].kind;
    return block;
}

// Far zoomed out: a block of whole chunks, found and summed from the chunks alone, when the
// chunk at `index` lies within min_ns and the next one starts within min_ns too. nullopt
// otherwise (action_block decides from the actions).
std::optional<DrawBlock> whole_chunks_block(const Lane& lane, std::size_t index,
                                            std::int64_t min_ns) {
    if (index % kLaneChunk != 0)
        return std::nullopt;
    const std::size_t first = index / kLaneChunk;
    const LaneChunk& opening = lane.chunks[first];
    if (opening.max_end - opening.first_start >= min_ns)
        return std::nullopt;
    // Chunks [first, end) all start before `limit`; every action of all but the last does.
    const std::int64_t limit = opening.first_start + min_ns;
    const auto end = static_cast<std::size_t>(
        galloping_partition_point(
            lane.chunks.begin() + static_cast<std::ptrdiff_t>(first + 1), lane.chunks.end(),
            [&](const LaneChunk& chunk) { return chunk.first_start < limit; }) -
        lane.chunks.begin());
    if (end < first + 2)
        return std::nullopt;
    const std::size_t actions_end = (end - 1) * kLaneChunk;
    return merged_block(lane, index, actions_end, range_figures(lane, index, actions_end));
}

// An action wide enough to see, or one too narrow merged with every action starting within
// min_ns of it (ending on a chunk boundary when it holds a whole chunk: chunk_aligned_end).
DrawBlock action_block(const Lane& lane, std::size_t index, std::int64_t to, std::int64_t min_ns) {
    const auto& actions = lane.actions;
    const TimelineAction& action = actions[index];
    if (action.end_ns - action.start_ns >= min_ns)
        return {action.start_ns, action.end_ns, index, 1, action.kind};
    const std::size_t natural_end =
        std::max(index + 1, first_starting_at(actions, index + 1, action.start_ns + min_ns));
    std::size_t next = chunk_aligned_end(index, natural_end);
    RangeFigures merged = range_figures(lane, index, next);
    // One more when it starts and ends within a few pixels: two slivers, not a block and a
    // sliver.
    if (next == natural_end && next < actions.size() && merged.max_end - action.start_ns < min_ns &&
        actions[next].start_ns - merged.max_end < min_ns && actions[next].start_ns < to) {
        const TimelineAction& absorbed = actions[next++];
        merged.kind_ns[std::min<std::size_t>(absorbed.kind, merged.kind_ns.size() - 1)] +=
            static_cast<double>(absorbed.end_ns - absorbed.start_ns);
        merged.max_end = std::max(merged.max_end, absorbed.end_ns);
    }
    if (next == index + 1)
        return {action.start_ns, action.end_ns, index, 1, action.kind};
    return merged_block(lane, index, next, merged);
}

}  // namespace

void index_lane(Lane& lane) {
    const auto by_start = [](const TimelineAction& left, const TimelineAction& right) {
        return left.start_ns < right.start_ns;
    };
    // A trace's rows come sorted already; only hand-made records need the sort.
    if (!std::is_sorted(lane.actions.begin(), lane.actions.end(), by_start))
        std::stable_sort(lane.actions.begin(), lane.actions.end(), by_start);
    lane.max_end.resize(lane.actions.size());
    lane.chunks.assign((lane.actions.size() + kLaneChunk - 1) / kLaneChunk, {});
    std::int64_t running = 0;
    for (std::size_t index = 0; index < lane.actions.size(); ++index) {
        const TimelineAction& action = lane.actions[index];
        running = std::max(running, action.end_ns);
        lane.max_end[index] = running;
        LaneChunk& chunk = lane.chunks[index / kLaneChunk];
        chunk.kind_ns[std::min<std::size_t>(action.kind, chunk.kind_ns.size() - 1)] +=
            static_cast<float>(action.end_ns - action.start_ns);
        chunk.max_end = std::max(chunk.max_end, action.end_ns);
        if (index % kLaneChunk == 0)
            chunk.first_start = action.start_ns;
    }
}

TimelineModel TimelineModel::from_records(traces::RunRecord run,
                                          std::vector<traces::ActionRecord> actions,
                                          std::vector<traces::PairRecord> pairs,
                                          std::vector<traces::RankRecord> figures,
                                          const std::vector<traces::MemoryRecord>& memory,
                                          bool analyse) {
    TimelineModel model;
    model.run_ = std::move(run);
    model.pairs_ = std::move(pairs);
    int rank_count = 0;
    for (const auto& action : actions)
        rank_count = std::max(rank_count, action.rank + 1);
    model.set_up_ranks(rank_count, std::move(figures));
    // Ids from 1 in order: a given text interned (equal texts share an id, as a writer would
    // keep them), an empty one an id of its own whose text is derived when shown (as load()
    // gives every action).
    std::vector<std::size_t> given;
    for (std::size_t index = 0; index < actions.size(); ++index)
        if (!actions[index].label.empty())
            given.push_back(index);
    const std::vector<std::uint32_t> interned = first_appearance_ids(
        given.size(), [&](std::size_t at) -> std::string_view { return actions[given[at]].label; });
    std::vector<std::uint32_t> id_of_interned(given.size() + 1, 0);
    std::uint32_t next_id = 1;
    std::size_t next_given = 0;
    for (std::size_t index = 0; index < actions.size(); ++index) {
        const traces::ActionRecord& record = actions[index];
        std::uint32_t id = 0;
        if (next_given < given.size() && given[next_given] == index) {
            std::uint32_t& assigned = id_of_interned[interned[next_given++]];
            if (assigned == 0) {  // its text's first appearance
                assigned = next_id++;
                model.labels_.add(assigned, record.label);
            }
            id = assigned;
        } else {
            id = next_id++;
        }
        TimelineAction action{record.start_ns,   record.end_ns,  record.bytes, record.stage,
                              record.microbatch, record.pair_id, record.step,  id,
                              record.kind,       false};
        RankTimeline& rank = model.ranks_.at(record.rank);
        (record.lane == traces::ActionLane::compute ? rank.compute : rank.communication)
            .actions.push_back(action);
    }
    model.label_id_limit_ = next_id;
    for (const auto& sample : memory)
        if (sample.rank >= 0 && static_cast<std::size_t>(sample.rank) < model.ranks_.size())
            model.ranks_[static_cast<std::size_t>(sample.rank)].memory.push_back(sample);
    for (RankTimeline& rank : model.ranks_)
        index_rank(rank);
    model.finish();
    if (analyse)
        model.apply(model.analyse_holds("records"));
    return model;
}

void TimelineModel::set_up_ranks(int action_ranks, std::vector<traces::RankRecord> figures) {
    int rank_count = action_ranks;
    for (const auto& figure : figures)
        rank_count = std::max(rank_count, figure.rank + 1);
    ranks_.resize(static_cast<std::size_t>(rank_count));
    for (int rank = 0; rank < rank_count; ++rank)
        ranks_[static_cast<std::size_t>(rank)].rank = rank;
    for (auto& figure : figures)
        ranks_.at(static_cast<std::size_t>(figure.rank)).figures = std::move(figure);
}

void TimelineModel::index_rank(RankTimeline& rank) {
    index_lane(rank.compute);
    index_lane(rank.communication);
    // Bubbles: gaps of the compute lane from 0 on (finish() adds the cool-down, which needs the
    // end of the step over all ranks). Whom a gap between computations waited on is the bubble
    // accounting's to say (apply()); until then it is idle.
    const auto& compute = rank.compute.actions;
    std::int64_t cursor = 0;
    for (std::size_t index = 0; index < compute.size(); ++index) {
        const std::int64_t start = compute[index].start_ns;
        if (start > cursor) {
            Bubble bubble;
            bubble.start_ns = cursor;
            bubble.end_ns = start;
            bubble.cause = index == 0 ? BubbleCause::warm_up : BubbleCause::idle;
            bubble.before = static_cast<std::int32_t>(index);
            rank.bubbles.push_back(bubble);
        }
        cursor = std::max(cursor, compute[index].end_ns);
    }
}

void TimelineModel::finish() {
    action_count_ = 0;
    for (RankTimeline& rank : ranks_) {
        action_count_ += rank.compute.actions.size() + rank.communication.actions.size();
        for (const auto& sample : rank.memory)
            if (sample.bytes > memory_peak_ || memory_peak_rank_ < 0) {
                memory_peak_ = std::max(memory_peak_, sample.bytes);
                memory_peak_rank_ = rank.rank;
            }
        if (!rank.compute.max_end.empty())
            end_ns_ = std::max(end_ns_, rank.compute.max_end.back());
        if (!rank.communication.max_end.empty())
            end_ns_ = std::max(end_ns_, rank.communication.max_end.back());
        for (const Lane* lane : {&rank.compute, &rank.communication})
            if (!lane->actions.empty())  // sorted by start
                start_ns_ = std::min(start_ns_, lane->actions.front().start_ns);
    }
    // A run that failed never ended its step: after a rank's last computation it waited for what
    // never came (idle), not a cool-down, which `summary` and the Ranks panel give as "-".
    const bool ended = run_.status != traces::RunStatus::failed;
    for (RankTimeline& rank : ranks_) {
        if (rank.compute.actions.empty())
            continue;
        const std::int64_t last_end = rank.compute.max_end.back();
        if (last_end < end_ns_) {
            Bubble after_last;
            after_last.start_ns = last_end;
            after_last.end_ns = end_ns_;
            after_last.cause = ended ? BubbleCause::cool_down : BubbleCause::idle;
            rank.bubbles.push_back(after_last);
        }
    }
    // By id, as the reader returns them; only hand-made records need the sort.
    const auto by_id = [](const traces::PairRecord& left, const traces::PairRecord& right) {
        return left.pair_id < right.pair_id;
    };
    if (!std::is_sorted(pairs_.begin(), pairs_.end(), by_id))
        std::stable_sort(pairs_.begin(), pairs_.end(), by_id);
    pair_index_.assign(pairs_.size(), {});
    for (std::size_t position = 0; position < pairs_.size(); ++position) {
        pair_index_[position].send_rank = pairs_[position].send_rank;
        pair_index_[position].receive_rank = pairs_[position].recv_rank;
    }
    // Ranks in parallel: a pair's send and receive sit on different ranks and fill different
    // members of its PairEnds, so no two threads write one object. (Ten million actions spend
    // half a second here on one core, in scattered writes.)
    run_record::parallel_for(ranks_.size(), worker_threads(ranks_.size()), [this](std::size_t at) {
        const RankTimeline& rank = ranks_[at];
        for (std::size_t index = 0; index < rank.communication.actions.size(); ++index) {
            const TimelineAction& action = rank.communication.actions[index];
            const auto position = pair_position(action.pair_id);
            if (!position)
                continue;
            auto& ends = pair_index_[*position];
            (is_receive(action.kind) ? ends.receive : ends.send) =
                ActionLocation{rank.rank, true, index};
        }
    });
}

unsigned TimelineModel::worker_threads(std::size_t items) {
    constexpr int kMostThreads = 8;
    return run_record::worker_count(
        items, static_cast<unsigned>(std::min(kMostThreads, run_record::available_cores())));
}

ActionText TimelineModel::label(const TimelineAction& action) const {
    if (const auto stored = labels_.find(action.label))
        return ActionText::stored(*stored);
    if (action.kind == text::kOverlapKind)  // its parts were not in the file
        return ActionText::stored("?");
    std::string text;
    text::append_plain_action(text, action.stage, action.kind, action.microbatch);
    return ActionText::owned(std::move(text));
}

bool TimelineModel::has_own_text(const TimelineAction& action) const {
    const auto stored = labels_.find(action.label);
    if (!stored || action.kind == text::kOverlapKind)
        return false;
    std::string derived;
    text::append_plain_action(derived, action.stage, action.kind, action.microbatch);
    return *stored != derived;
}

std::string TimelineModel::describe(const RankTimeline& rank, const Bubble& bubble) const {
    switch (bubble.cause) {
        case BubbleCause::warm_up:
            return "warm-up";
        case BubbleCause::cool_down:
            return "cool-down";
        case BubbleCause::idle:
            return "idle";
        case BubbleCause::waiting:
            break;
    }
    if (bubble.waited_for >= 0)
        return fmt::format(
            "waiting on rank {} ({})", bubble.peer,
            label(rank.communication.actions.at(static_cast<std::size_t>(bubble.waited_for)))
                .view());
    if (bubble.waited_on)
        return fmt::format("waiting on rank {} ({})", bubble.peer,
                           label(action(*bubble.waited_on)).view());
    return fmt::format("waiting on rank {}", bubble.peer);
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
    std::size_t index = static_cast<std::size_t>(
        std::upper_bound(lane.max_end.begin(), lane.max_end.end(), from) - lane.max_end.begin());
    while (index < lane.actions.size() && start_of(lane, index) < to) {
        std::optional<DrawBlock> block = whole_chunks_block(lane, index, min_ns);
        if (!block)
            block = action_block(lane, index, to, min_ns);
        out.push_back(*block);
        index = block->first + block->count;
    }
}

std::optional<ActionLocation> TimelineModel::find(const std::string& text) const {
    for (const RankTimeline& rank : ranks_)
        for (bool communication : {false, true}) {
            const Lane& lane = communication ? rank.communication : rank.compute;
            for (std::size_t index = 0; index < lane.actions.size(); ++index)
                if (label(lane.actions[index]).view() == text)
                    return ActionLocation{rank.rank, communication, index};
        }
    return std::nullopt;
}

std::optional<std::size_t> TimelineModel::pair_position(std::int32_t pair_id) const {
    if (pair_id < 0 || pairs_.empty())
        return std::nullopt;
    // Writers number pairs densely, so the id's offset from the first is nearly always its
    // position; a gap (a damaged or hand-made file) falls back to a binary search.
    const std::int64_t offset = static_cast<std::int64_t>(pair_id) - pairs_.front().pair_id;
    if (offset >= 0 && offset < static_cast<std::int64_t>(pairs_.size()) &&
        pairs_[static_cast<std::size_t>(offset)].pair_id == pair_id)
        return static_cast<std::size_t>(offset);
    const auto found = std::lower_bound(
        pairs_.begin(), pairs_.end(), pair_id,
        [](const traces::PairRecord& pair, std::int32_t id) { return pair.pair_id < id; });
    if (found == pairs_.end() || found->pair_id != pair_id)
        return std::nullopt;
    return static_cast<std::size_t>(found - pairs_.begin());
}

std::optional<PairEnds> TimelineModel::pair_ends(std::int32_t pair_id) const {
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
