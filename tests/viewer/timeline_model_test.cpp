// The viewer's data model without a window: lanes, bubble causes, the culling and merging the
// timeline draws with, and look-ups by text and by pair.
#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "app/viewer/memory_plot.hpp"
#include "app/viewer/run_summary.hpp"
#include "app/viewer/timeline_model.hpp"
#include "engine/schedule/action.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"
#include "traces/trace_writer.hpp"

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

// Pair 0: rank 0's action 1 (its SEND) to rank 1's action 0 (its RECV).
traces::PairRecord first_send_to_rank_one() {
    traces::PairRecord pair;
    pair.pair_id = 0;
    pair.send_rank = 0;
    pair.send_step = 1;
    pair.recv_rank = 1;
    pair.recv_step = 0;
    return pair;
}

// Rank 0: F 0-10, SEND 10-12, B 30-40. Rank 1: RECV 10-15, F 15-25, B 25-35.
TimelineModel two_ranks(traces::RunStatus status = traces::RunStatus::finished) {
    using traces::ActionLane;
    const std::vector<traces::ActionRecord> actions{
        record(0, ActionLane::compute, ActionKind::full_backward, "0B0", 30, 40),
        record(0, ActionLane::compute, ActionKind::forward, "0F0", 0, 10),
        record(0, ActionLane::communication, ActionKind::send_forward, "0SEND_F0", 10, 12, 0),
        record(1, ActionLane::communication, ActionKind::recv_forward, "1RECV_F0", 10, 15, 0),
        record(1, ActionLane::compute, ActionKind::forward, "1F0", 15, 25),
        record(1, ActionLane::compute, ActionKind::full_backward, "1B0", 25, 35),
    };
    traces::RunRecord run;
    run.status = status;
    return TimelineModel::from_records(run, actions, {first_send_to_rank_one()}, {}, {});
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
    EXPECT_EQ(model.describe(rank0, rank0.bubbles[0]), "idle");
    const auto& rank1 = model.ranks()[1];
    ASSERT_EQ(rank1.bubbles.size(), 2u);
    EXPECT_EQ(model.describe(rank1, rank1.bubbles[0]), "warm-up");
    EXPECT_EQ(rank1.bubbles[1].start_ns, 35);
    EXPECT_EQ(model.describe(rank1, rank1.bubbles[1]), "cool-down");
}

// A failed run never ended its step: after a rank's last computation it waited for what never
// came, which is no cool-down (`summary` and the Ranks panel give none).
TEST(TimelineModel, AFailedRunHasNoCoolDown) {
    const TimelineModel model = two_ranks(traces::RunStatus::failed);
    const auto& rank1 = model.ranks()[1];
    ASSERT_EQ(rank1.bubbles.size(), 2u);
    EXPECT_EQ(rank1.bubbles[1].start_ns, 35);
    EXPECT_EQ(rank1.bubbles[1].end_ns, 40);
    EXPECT_EQ(model.describe(rank1, rank1.bubbles[1]), "idle");
}

// A record of the action `label` says, stage `label`'s first digit, microbatch its last: whom a
// gap waited on is the dependency rules' to say, and they need to know what each action is.
traces::ActionRecord action(int rank, int step, traces::ActionLane lane, ActionKind kind,
                            std::string label, std::int64_t start, std::int64_t end,
                            std::int32_t pair = -1) {
    traces::ActionRecord row = record(rank, lane, kind, label, start, end, pair);
    row.step = step;
    row.stage = label.front() - '0';
    row.microbatch = label.back() - '0';
    return row;
}

// (Records that say what each action is: whom a gap waited on comes from the dependency rules.)
TEST(TimelineModel, WaitingOnAPeerIsNamedWithTheReceive) {
    using traces::ActionLane;
    const std::vector<traces::ActionRecord> actions{
        action(1, 0, ActionLane::compute, ActionKind::forward, "1F0", 0, 5),
        action(1, 1, ActionLane::communication, ActionKind::recv_backward, "1RECV_B0", 5, 20, 3),
        action(1, 2, ActionLane::compute, ActionKind::full_backward, "1B0", 20, 30),
        action(2, 0, ActionLane::communication, ActionKind::send_backward, "2SEND_B0", 18, 19, 3),
    };
    traces::PairRecord pair;
    pair.pair_id = 3;
    pair.send_rank = 2;
    pair.recv_rank = 1;
    const TimelineModel model = TimelineModel::from_records({}, actions, {pair}, {}, {});
    ASSERT_EQ(model.ranks()[1].bubbles.size(), 1u);
    EXPECT_EQ(model.describe(model.ranks()[1], model.ranks()[1].bubbles[0]),
              "waiting on rank 2 (1RECV_B0)");
    EXPECT_EQ(model.ranks()[1].bubbles[0].peer, 2);
}

// A receive that completes inside a gap is not what the computation after it waited for unless
// the dependency rules say so: the last stage's B0 needs only its own F0, so the gap before it
// is idle, not "waiting on rank 0 (1RECV_F1)" as the latest receive in the gap would have it.
// No rank is ever named waiting on itself.
TEST(TimelineModel, AReceiveInTheGapThatTheComputationDoesNotNeedLeavesItIdle) {
    using traces::ActionLane;
    const std::vector<traces::ActionRecord> actions{
        action(0, 0, ActionLane::compute, ActionKind::forward, "0F0", 0, 10),
        action(0, 1, ActionLane::communication, ActionKind::send_forward, "0SEND_F0", 10, 11, 0),
        action(0, 2, ActionLane::compute, ActionKind::forward, "0F1", 20, 30),
        action(0, 3, ActionLane::communication, ActionKind::send_forward, "0SEND_F1", 30, 31, 1),
        action(1, 0, ActionLane::communication, ActionKind::recv_forward, "1RECV_F0", 10, 12, 0),
        action(1, 1, ActionLane::compute, ActionKind::forward, "1F0", 12, 22),
        action(1, 2, ActionLane::communication, ActionKind::recv_forward, "1RECV_F1", 30, 32, 1),
        action(1, 3, ActionLane::compute, ActionKind::full_backward, "1B0", 35, 45),
    };
    std::vector<traces::PairRecord> pairs(2);
    for (int id = 0; id < 2; ++id) {
        pairs[id].pair_id = id;
        pairs[id].send_rank = 0;
        pairs[id].recv_rank = 1;
    }
    const TimelineModel model = TimelineModel::from_records({}, actions, pairs, {}, {});
    ASSERT_TRUE(model.critical_path().error.empty()) << model.critical_path().error;
    const RankTimeline& rank1 = model.ranks()[1];
    ASSERT_EQ(rank1.bubbles.size(), 2u);
    EXPECT_EQ(model.describe(rank1, rank1.bubbles[0]), "warm-up");
    EXPECT_EQ(rank1.bubbles[1].start_ns, 22);
    EXPECT_EQ(rank1.bubbles[1].end_ns, 35);
    EXPECT_EQ(model.describe(rank1, rank1.bubbles[1]), "idle");
    EXPECT_EQ(rank1.bubbles[1].peer, -1);
    // Rank 0's gap before its second F: its only input is its own compute stream.
    const RankTimeline& rank0 = model.ranks()[0];
    ASSERT_EQ(rank0.bubbles.size(), 2u);
    EXPECT_EQ(model.describe(rank0, rank0.bubbles[0]), "idle");
    EXPECT_EQ(model.describe(rank0, rank0.bubbles[1]), "cool-down");
}

// A receive posted long before its message (a real run posts them early) is on the path only
// from its SEND's hand-over: the path is drawn there, not from when the receive was posted.
TEST(TimelineModel, AReceivePostedEarlyJoinsThePathWhereItsMessageArrives) {
    using traces::ActionLane;
    const std::vector<traces::ActionRecord> actions{
        action(0, 0, ActionLane::compute, ActionKind::forward, "0F0", 0, 10),
        action(0, 1, ActionLane::communication, ActionKind::send_forward, "0SEND_F0", 10, 11, 0),
        action(1, 0, ActionLane::communication, ActionKind::recv_forward, "1RECV_F0", 0, 12, 0),
        action(1, 1, ActionLane::compute, ActionKind::forward, "1F0", 12, 22),
    };
    traces::PairRecord pair;
    pair.pair_id = 0;
    pair.send_rank = 0;
    pair.recv_rank = 1;
    const TimelineModel model = TimelineModel::from_records({}, actions, {pair}, {}, {});
    const TimelineCriticalPath& path = model.critical_path();
    ASSERT_TRUE(path.error.empty()) << path.error;
    const std::vector<ActionLocation> expected = {
        {0, false, 0}, {0, true, 0}, {1, true, 0}, {1, false, 0}};
    ASSERT_EQ(path.actions, expected);
    const std::vector<std::pair<std::int64_t, std::int64_t>> drawn = {
        {0, 10}, {10, 11}, {11, 12}, {12, 22}};
    EXPECT_EQ(path.times, drawn);
}

// The header's path line says every part of the path, a small one as "<1%", so the parts add
// up; a run of several steps taken whole says so (`summary` gives the median step's). The model
// starts at its earliest action, a RECV posted before the step's zero.
TEST(TimelineModel, ThePathLineSaysEveryShareAndTheModelStartsAtItsFirstAction) {
    using traces::ActionLane;
    const std::vector<traces::ActionRecord> actions{
        action(0, 0, ActionLane::compute, ActionKind::forward, "0F0", 0, 100'000),
        action(0, 1, ActionLane::communication, ActionKind::send_forward, "0SEND_F0", 100'000,
               100'300, 0),
        action(1, 0, ActionLane::communication, ActionKind::recv_forward, "1RECV_F0", -2'000,
               100'300, 0),
        action(1, 1, ActionLane::compute, ActionKind::forward, "1F0", 100'300, 200'000),
    };
    const TimelineModel model =
        TimelineModel::from_records({}, actions, {first_send_to_rank_one()}, {}, {});
    EXPECT_EQ(model.start_ns(), -2'000);
    ASSERT_TRUE(model.critical_path().error.empty()) << model.critical_path().error;
    EXPECT_EQ(critical_path_text(model, 1), "critical path: F 99% communication <1% waiting <1%");
    EXPECT_EQ(critical_path_text(model, 3),
              "critical path (all 3 steps): F 99% communication <1% waiting <1%");
}

// The viewer's bubbles are the recorded figures, bubble by bubble: for a simulated run, its
// warm-up, cool-down and waiting bubbles add up, peer by peer, to what the simulator recorded
// for each rank (one bubble accounting for both), and no rank's bubble waits on itself.
TEST(TimelineModel, BubblesAddUpToTheRecordedWaitingPeerByPeer) {
    const ScheduleShape shapes[] = {{ScheduleKind::one_f_one_b, 4, 1, 8},
                                    {ScheduleKind::interleaved_1f1b, 4, 2, 8},
                                    {ScheduleKind::dual_pipe_v, 4, 2, 8}};
    for (const ScheduleShape& shape : shapes) {
        SCOPED_TRACE(schedule_kind_name(shape.kind));
        const auto path = testing::fresh_trace("model_bubbles");
        const Schedule lowered = lower(generate_schedule(shape));
        sim::CostModel costs;
        for (int stage = 0; stage < shape.rank_count * shape.stages_per_rank; ++stage)
            costs.stages.push_back({1300 - 70 * stage, 900 + 40 * stage, 700, std::nullopt});
        costs.intra_host.latency_ns = 170;
        {
            traces::TraceWriter writer(path);
            traces::RunRecord run;
            run.schedule = lowered.name;
            run.pp = shape.rank_count;
            run.v = shape.stages_per_rank;
            run.m = shape.microbatch_count;
            sim::record_simulation(writer, lowered, costs, sim::simulate(lowered, costs), run);
        }
        const traces::TraceReader reader(path);
        const TimelineModel model = TimelineModel::load(reader, 1);
        ASSERT_TRUE(model.critical_path().error.empty()) << model.critical_path().error;
        std::size_t waiting_bubbles = 0;
        for (const RankTimeline& rank : model.ranks()) {
            SCOPED_TRACE(::testing::Message() << "rank " << rank.rank);
            std::map<int, std::int64_t> waiting;
            std::int64_t warmup = 0, cooldown = 0;
            for (const Bubble& bubble : rank.bubbles) {
                const std::int64_t length = bubble.end_ns - bubble.start_ns;
                if (bubble.cause == BubbleCause::warm_up)
                    warmup += length;
                else if (bubble.cause == BubbleCause::cool_down)
                    cooldown += length;
                else if (bubble.cause == BubbleCause::waiting)
                    waiting[bubble.peer] += length;
                else
                    ADD_FAILURE() << "an idle bubble in a simulated run at " << bubble.start_ns;
                EXPECT_NE(bubble.peer, rank.rank);
                waiting_bubbles += bubble.cause == BubbleCause::waiting ? 1 : 0;
            }
            EXPECT_EQ(warmup, rank.figures.warmup_ns);
            EXPECT_EQ(cooldown, rank.figures.cooldown_ns);
            EXPECT_EQ(waiting, traces::waiting_on_map(rank.figures.waiting_on));
        }
        EXPECT_GT(waiting_bubbles, 0u);
        std::filesystem::remove(path);
    }
}

TEST(TimelineModel, VisibleBlocksCullAndMergeWhatIsTooNarrowToSee) {
    Lane lane;
    for (int index = 0; index < 100; ++index)
        lane.actions.push_back({index * 10, index * 10 + 8});
    index_lane(lane);
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

// Sends and receives of a free link take no time: merged, they keep their own colour, not the
// first kind's (F), which read as forwards on the communication lane.
TEST(TimelineModel, MergedBlocksOfInstantActionsKeepTheirKind) {
    Lane lane;
    for (int index = 0; index < 100; ++index) {
        TimelineAction action;
        action.start_ns = action.end_ns = index * 10;
        action.kind = static_cast<std::uint8_t>(ActionKind::send_forward);
        lane.actions.push_back(action);
    }
    index_lane(lane);
    std::vector<DrawBlock> blocks;
    TimelineModel::visible_blocks(lane, 0, 1000, 100, blocks);
    ASSERT_FALSE(blocks.empty());
    for (const DrawBlock& block : blocks)
        EXPECT_EQ(block.kind, static_cast<std::uint8_t>(ActionKind::send_forward));
}

// Zoomed out on a long lane the blocks are found from per-chunk sums; they must say what the
// actions themselves say: every action once, in order; each merged block starting where its
// first action starts, ending where the last of its actions ends, coloured by the kind with
// the most time, and holding only actions that start within min_ns of it.
TEST(TimelineModel, ZoomedOutBlocksAgreeWithTheActionsTheyMerge) {
    Lane lane;
    std::int64_t time = 0;
    for (int index = 0; index < 20'000; ++index) {
        // Mostly F (3 ns) and W (2 ns); every 7th an I of 9 ns; a 400 ns gap every 1,000.
        const bool long_one = index % 7 == 0;
        TimelineAction action;
        action.start_ns = time;
        action.end_ns = time + (long_one ? 9 : 3 - index % 2);
        action.kind = static_cast<std::uint8_t>(long_one         ? ActionKind::backward_input
                                                : index % 2 == 0 ? ActionKind::forward
                                                                 : ActionKind::backward_weight);
        lane.actions.push_back(action);
        time = action.end_ns + 1 + (index % 1000 == 999 ? 400 : 0);
    }
    index_lane(lane);
    for (const std::int64_t min_ns : {5, 60, 300, 2000, 50'000}) {
        std::vector<DrawBlock> blocks;
        TimelineModel::visible_blocks(lane, 0, time, min_ns, blocks);
        std::size_t next = 0;
        for (const DrawBlock& block : blocks) {
            SCOPED_TRACE(::testing::Message()
                         << "min_ns " << min_ns << ", block at " << block.first);
            ASSERT_EQ(block.first, next);
            next += block.count;
            ASSERT_LE(next, lane.actions.size());
            std::array<std::int64_t, 12> kind_ns{};
            std::int64_t end = 0;
            for (std::size_t index = block.first; index < next; ++index) {
                const TimelineAction& action = lane.actions[index];
                kind_ns[action.kind] += action.end_ns - action.start_ns;
                end = std::max(end, action.end_ns);
                // The one action a block may take in past min_ns starts within 2 min_ns.
                ASSERT_LT(action.start_ns - block.start_ns, 2 * min_ns);
            }
            EXPECT_EQ(block.start_ns, lane.actions[block.first].start_ns);
            EXPECT_EQ(block.end_ns, end);
            if (block.count > 1) {
                EXPECT_EQ(block.kind,
                          std::max_element(kind_ns.begin(), kind_ns.end()) - kind_ns.begin());
            }
        }
        EXPECT_EQ(next, lane.actions.size());
        // Per pixel, not per action: about one block per min_ns of the lane's span.
        EXPECT_LE(blocks.size(), static_cast<std::size_t>(time / min_ns) * 2 + 40);
    }
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
    EXPECT_EQ(model.label(model.action(*ends->send)), "0SEND_F0");
    EXPECT_EQ(model.label(model.action(*ends->receive)), "1RECV_F0");
    EXPECT_EQ(model.action_at(model.ranks()[1].compute, 20), std::optional<std::size_t>(0));
    EXPECT_FALSE(model.action_at(model.ranks()[0].compute, 20));
}

TEST(TimelineModel, APairIdFarBeyondTheCountIsFoundWithoutAHugeTable) {
    using traces::ActionLane;
    constexpr std::int32_t far = 2'000'000'000;
    const std::vector<traces::ActionRecord> actions{
        record(0, ActionLane::communication, ActionKind::send_forward, "0SEND_F0", 0, 2, far),
        record(1, ActionLane::communication, ActionKind::recv_forward, "1RECV_F0", 0, 3, far),
    };
    traces::PairRecord pair;
    pair.pair_id = far;
    pair.send_rank = 0;
    pair.recv_rank = 1;
    const TimelineModel model = TimelineModel::from_records({}, actions, {pair}, {}, {});
    const auto ends = model.pair_ends(far);
    ASSERT_TRUE(ends);
    EXPECT_EQ(model.label(model.action(*ends->send)), "0SEND_F0");
    EXPECT_EQ(model.label(model.action(*ends->receive)), "1RECV_F0");
    EXPECT_FALSE(model.pair_ends(far - 1));
    EXPECT_FALSE(model.pair_ends(-1));
}

// Loading from a file reads ranks in parallel on several connections; it must give the model
// the plain records give, lane by lane, bubble by bubble, pair by pair. DualPipeV has
// OVERLAP_F_B actions, whose texts come from their parts.
TEST(TimelineModel, LoadingAFileInParallelGivesWhatTheRecordsGive) {
    const auto path = testing::fresh_trace("model_dual_pipe_v");
    const Schedule lowered = lower(generate_schedule({ScheduleKind::dual_pipe_v, 4, 2, 8}));
    sim::CostModel costs;
    costs.stages = {sim::StageCost{}};
    costs.activation_bytes = {1 << 20};
    {
        traces::TraceWriter writer(path);
        traces::RunRecord run;
        run.schedule = lowered.name;
        run.pp = 4;
        run.v = 2;
        run.m = 8;
        sim::record_simulation(writer, lowered, costs, sim::simulate(lowered, costs), run);
    }
    const traces::TraceReader reader(path);
    const TimelineModel loaded = TimelineModel::load(reader, 1);
    const TimelineModel expected = TimelineModel::from_records(
        reader.run(1), reader.actions(1), reader.pairs(1), reader.ranks(1), reader.memory(1));
    EXPECT_EQ(loaded.action_count(), expected.action_count());
    EXPECT_GT(loaded.action_count(), 100u);
    EXPECT_EQ(loaded.end_ns(), expected.end_ns());
    EXPECT_EQ(loaded.memory_peak(), expected.memory_peak());
    ASSERT_EQ(loaded.ranks().size(), 4u);
    ASSERT_EQ(expected.ranks().size(), 4u);
    for (int rank = 0; rank < 4; ++rank) {
        const RankTimeline& got = loaded.ranks()[rank];
        const RankTimeline& want = expected.ranks()[rank];
        EXPECT_EQ(got.figures.busy_ns, want.figures.busy_ns);
        EXPECT_EQ(got.memory.size(), want.memory.size());
        for (bool communication : {false, true}) {
            const Lane& got_lane = communication ? got.communication : got.compute;
            const Lane& want_lane = communication ? want.communication : want.compute;
            ASSERT_EQ(got_lane.actions.size(), want_lane.actions.size());
            EXPECT_EQ(got_lane.max_end, want_lane.max_end);
            for (std::size_t index = 0; index < got_lane.actions.size(); ++index) {
                const TimelineAction& a = got_lane.actions[index];
                const TimelineAction& b = want_lane.actions[index];
                EXPECT_EQ(loaded.label(a), expected.label(b));
                EXPECT_EQ(std::tie(a.start_ns, a.end_ns, a.bytes, a.stage, a.microbatch, a.pair_id,
                                   a.step, a.kind),
                          std::tie(b.start_ns, b.end_ns, b.bytes, b.stage, b.microbatch, b.pair_id,
                                   b.step, b.kind));
            }
        }
        ASSERT_EQ(got.bubbles.size(), want.bubbles.size());
        for (std::size_t index = 0; index < got.bubbles.size(); ++index)
            EXPECT_EQ(loaded.describe(got, got.bubbles[index]),
                      expected.describe(want, want.bubbles[index]));
    }
    // Every pair's two ends are found, and they carry the pair's id.
    for (const traces::PairRecord& pair : reader.pairs(1)) {
        const auto ends = loaded.pair_ends(pair.pair_id);
        ASSERT_TRUE(ends);
        EXPECT_EQ(ends->send->rank, pair.send_rank);
        EXPECT_EQ(ends->receive->rank, pair.recv_rank);
        EXPECT_EQ(loaded.action(*ends->send).pair_id, pair.pair_id);
    }
    std::filesystem::remove(path);
}

// An OVERLAP_F_B's text comes from its parts; a file that lost them is damaged, and both the
// viewer's load and the reader say so, naming the file and the action.
TEST(TimelineModel, AnOverlapWithoutItsPartsIsAnErrorNamingTheFile) {
    const auto path = testing::fresh_trace("model_lost_parts");
    {
        traces::TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(traces::RunRecord{});
        traces::ActionRecord overlap =
            record(0, traces::ActionLane::compute, ActionKind::overlap_forward_backward, "", 0, 10);
        overlap.step = 3;
        overlap.parts = {{0, 0, 1}, {3, 0, 0}};
        writer.add_action(run_id, overlap);
        writer.finish_run(run_id, 10, 0);
    }
    const std::string expected =
        path.string() + ": trace is corrupt: OVERLAP_F_B at rank 0 step 3 has no parts";
    {
        const traces::TraceReader reader(path);
        EXPECT_EQ(TimelineModel::load(reader, 1).label(
                      TimelineModel::load(reader, 1).ranks()[0].compute.actions[0]),
                  "(0F1;0B0)OVERLAP_F_B");
    }
    testing::RawDatabase(path).execute("DELETE FROM action_parts");
    const traces::TraceReader reader(path);
    for (const auto& load : std::vector<std::function<void()>>{
             [&] { TimelineModel::load(reader, 1); }, [&] { reader.actions(1); }}) {
        try {
            load();
            ADD_FAILURE() << "read a trace whose OVERLAP_F_B parts are gone";
        } catch (const traces::TraceError& error) {
            EXPECT_EQ(std::string(error.what()), expected);
        }
    }
    std::filesystem::remove(path);
}

// An action whose integers name no pipeline action keeps its text in the file (an imported
// flight-recorder op: its stage is a process group, its microbatch a sequence number); the
// viewer shows that text, not "0REDUCE_GRAD3", and says its stage and microbatch are not its own.
TEST(TimelineModel, AnActionThatKeptItsTextIsShownByIt) {
    const auto path = testing::fresh_trace("model_kept_text");
    {
        traces::TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(traces::RunRecord{});
        traces::ActionRecord collective =
            record(0, traces::ActionLane::communication, ActionKind::reduce_grad, "", 0, 10);
        collective.stage = 0;
        collective.microbatch = 3;
        collective.kept_text = "nccl:all_reduce [pg 0, #3]";
        writer.add_action(run_id, collective);
        traces::ActionRecord forward =
            record(0, traces::ActionLane::compute, ActionKind::forward, "", 10, 20);
        forward.step = 1;
        forward.stage = 0;
        forward.microbatch = 3;
        writer.add_action(run_id, forward);
        writer.finish_run(run_id, 20, 0);
    }
    const traces::TraceReader reader(path);
    const TimelineModel model = TimelineModel::load(reader, 1);
    const TimelineAction& kept = model.ranks()[0].communication.actions.at(0);
    const TimelineAction& derived = model.ranks()[0].compute.actions.at(0);
    EXPECT_EQ(model.label(kept), "nccl:all_reduce [pg 0, #3]");
    EXPECT_TRUE(model.has_own_text(kept));
    EXPECT_EQ(model.label(derived), "0F3");
    EXPECT_FALSE(model.has_own_text(derived));
    // Only the kept text is stored: the forward's row has none.
    EXPECT_EQ(
        testing::RawDatabase(path).value("SELECT count(*) FROM actions WHERE label_id IS NOT NULL"),
        "1");
    std::filesystem::remove(path);
}

// The memory plot's parts in its 110 px area: the peak's tick label (centred on its tick,
// kMemoryLabelHeight tall) starts below the title's line instead of over it, and the 0 B label
// ends inside the area instead of past its bottom edge.
TEST(TimelineModel, TheMemoryPlotsTickLabelsClearTheTitleAndTheAreasEdge) {
    const float top = 560, bottom = top + kMemoryHeight;
    const MemoryPlotLayout layout = memory_plot_layout(top, bottom);
    EXPECT_GE(layout.plot_top - kMemoryLabelHeight / 2, layout.title_top + kMemoryLabelHeight);
    EXPECT_LE(layout.plot_bottom + kMemoryLabelHeight / 2, bottom);
    EXPECT_GE(layout.title_top, top);
    EXPECT_GT(layout.height(), 60);  // room left for the lines
}

}  // namespace
}  // namespace pipelens::viewer
