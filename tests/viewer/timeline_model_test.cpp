// The viewer's data model without a window: lanes, bubble causes, the culling and merging the
// timeline draws with, and look-ups by text and by pair.
#include <gtest/gtest.h>

#include "app/viewer/timeline_model.hpp"
#include "engine/schedule/action.hpp"

namespace pipelens::viewer {
namespace {

traces::ActionRecord record(int rank, traces::ActionLane lane, ActionKind kind, std::string label,
                            std::int64_t start, std::int64_t end, std::int32_t pair = -1) {
    traces::ActionRecord action;
    action.rank = rank;
    action.lane = lane;
    action.kind = static_cast<std::uint8_t>(kind);
    action.label = std::move(label);
    action.start_ns = start;
    action.end_ns = end;
    action.pair_id = pair;
    return action;
}

// Rank 0: F 0-10, SEND 10-12, B 30-40. Rank 1: RECV 10-15, F 15-25, B 25-35.
TimelineModel two_ranks() {
    using traces::ActionLane;
    const std::vector<traces::ActionRecord> actions{
        record(0, ActionLane::compute, ActionKind::full_backward, "0B0", 30, 40),
        record(0, ActionLane::compute, ActionKind::forward, "0F0", 0, 10),
        record(0, ActionLane::communication, ActionKind::send_forward, "0SEND_F0", 10, 12, 0),
        record(1, ActionLane::communication, ActionKind::recv_forward, "1RECV_F0", 10, 15, 0),
        record(1, ActionLane::compute, ActionKind::forward, "1F0", 15, 25),
        record(1, ActionLane::compute, ActionKind::full_backward, "1B0", 25, 35),
    };
    traces::PairRecord pair;
    pair.pair_id = 0;
    pair.send_rank = 0;
    pair.send_step = 1;
    pair.recv_rank = 1;
    pair.recv_step = 0;
    return TimelineModel::from_records(traces::RunRecord{}, actions, {pair}, {}, {});
}

TEST(TimelineModel, LanesAreSortedAndBubblesKnowTheirCause) {
    const TimelineModel model = two_ranks();
    ASSERT_EQ(model.ranks().size(), 2u);
    EXPECT_EQ(model.end_ns(), 40);
    EXPECT_EQ(model.action_count(), 6u);
    const auto& rank0 = model.ranks()[0];
    EXPECT_EQ(model.label(rank0.compute.actions[0]), "0F0");
    EXPECT_EQ(rank0.compute.max_end, (std::vector<std::int64_t>{10, 40}));
    ASSERT_EQ(rank0.bubbles.size(), 1u);
    EXPECT_EQ(rank0.bubbles[0].start_ns, 10);
    EXPECT_EQ(rank0.bubbles[0].end_ns, 30);
    EXPECT_EQ(rank0.bubbles[0].cause, "idle");
    const auto& rank1 = model.ranks()[1];
    ASSERT_EQ(rank1.bubbles.size(), 2u);
    EXPECT_EQ(rank1.bubbles[0].cause, "warm-up");
    EXPECT_EQ(rank1.bubbles[1].start_ns, 35);
    EXPECT_EQ(rank1.bubbles[1].cause, "cool-down");
}

TEST(TimelineModel, WaitingOnAPeerIsNamedWithTheReceive) {
    using traces::ActionLane;
    const std::vector<traces::ActionRecord> actions{
        record(1, ActionLane::compute, ActionKind::forward, "1F0", 0, 5),
        record(1, ActionLane::communication, ActionKind::recv_backward, "1RECV_B0", 5, 20, 3),
        record(1, ActionLane::compute, ActionKind::full_backward, "1B0", 20, 30),
        record(2, ActionLane::communication, ActionKind::send_backward, "2SEND_B0", 18, 19, 3),
    };
    traces::PairRecord pair;
    pair.pair_id = 3;
    pair.send_rank = 2;
    pair.recv_rank = 1;
    const TimelineModel model = TimelineModel::from_records({}, actions, {pair}, {}, {});
    ASSERT_EQ(model.ranks()[1].bubbles.size(), 1u);
    EXPECT_EQ(model.ranks()[1].bubbles[0].cause, "waiting on rank 2 (1RECV_B0)");
}

TEST(TimelineModel, VisibleBlocksCullAndMergeWhatIsTooNarrowToSee) {
    Lane lane;
    for (int index = 0; index < 100; ++index)
        lane.actions.push_back({index * 10, index * 10 + 8});
    for (std::size_t index = 0; index < lane.actions.size(); ++index)
        lane.max_end.push_back(lane.actions[index].end_ns);
    std::vector<DrawBlock> blocks;
    TimelineModel::visible_blocks(lane, 205, 255, 0, blocks);
    ASSERT_EQ(blocks.size(), 6u);  // 200-208 overlaps 205 ... 250-258
    EXPECT_EQ(blocks.front().first, 20u);
    EXPECT_EQ(blocks.back().first, 25u);
    blocks.clear();
    // Zoomed out: a block must span 100 ns to be drawn alone; gaps of 2 ns merge too.
    TimelineModel::visible_blocks(lane, 0, 1000, 100, blocks);
    ASSERT_EQ(blocks.size(), 10u);  // nine of 11 actions (108 ns each), then the last alone
    EXPECT_EQ(blocks[0].count, 11u);
    std::size_t total = 0;
    for (const DrawBlock& block : blocks)
        total += block.count;
    EXPECT_EQ(total, 100u);
}

TEST(TimelineModel, FindsActionsByTextPairAndTime) {
    const TimelineModel model = two_ranks();
    const auto found = model.find("1F0");
    ASSERT_TRUE(found);
    EXPECT_EQ(found->rank, 1);
    EXPECT_FALSE(found->communication);
    EXPECT_FALSE(model.find("9F9"));
    const auto ends = model.pair_ends(0);
    ASSERT_TRUE(ends);
    EXPECT_EQ(model.label(model.action(ends->first)), "0SEND_F0");
    EXPECT_EQ(model.label(model.action(ends->second)), "1RECV_F0");
    EXPECT_EQ(model.action_at(model.ranks()[1].compute, 20), std::optional<std::size_t>(0));
    EXPECT_FALSE(model.action_at(model.ranks()[0].compute, 20));
}

}  // namespace
}  // namespace pipelens::viewer
