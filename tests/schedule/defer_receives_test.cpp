// Deferred receives: the exact orders PyTorch's `_defer_recv_ops` produces (the cases of its
// test_schedule.py `test_defer_recv_ops`: 2 and 4 stages, I/W split, OVERLAP_F_B), the invariants
// of its no-deadlock test on a real lowering, and that deferring keeps every generated schedule
// lowerable and only moves receives.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/schedule/schedule_test_text.hpp"

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {
namespace {

using testing::split;
using testing::texts;

// A schedule with communication from per-rank texts and an explicit stage -> rank mapping
// (the upstream cases are excerpts, so nothing is inferred or checked).
Schedule with_communication(const std::vector<std::string>& rows, std::vector<int> stage_to_rank) {
    Schedule schedule;
    schedule.rank_count = static_cast<int>(rows.size());
    schedule.stage_count = static_cast<int>(stage_to_rank.size());
    schedule.stage_to_rank = std::move(stage_to_rank);
    schedule.microbatch_count = 8;
    schedule.has_communication = true;
    schedule.ranks.resize(rows.size());
    for (std::size_t rank = 0; rank < rows.size(); ++rank)
        for (const std::string& token : split(rows[rank]))
            schedule.ranks[rank].push_back(parse_action(token, schedule.parts));
    return schedule;
}

TEST(DeferReceives, TwoStagesHigherRankSendsFirst) {
    const Schedule input =
        with_communication({"0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1",
                            "1RECV_F0 1RECV_F1 1F0 1B0 1SEND_B0 1F1 1B1 1SEND_B1"},
                           {0, 1});
    const Schedule deferred = defer_receives(input);
    EXPECT_EQ(texts(deferred, 0), texts(input, 0));
    EXPECT_EQ(texts(deferred, 1), split("1RECV_F0 1F0 1B0 1SEND_B0 1RECV_F1 1F1 1B1 1SEND_B1"));
}

TEST(DeferReceives, VShapeFourStages) {
    const Schedule input = with_communication(
        {"0F0 0SEND_F0 0F1 0SEND_F1 3RECV_F0 3F0 3B0 3SEND_B0 3RECV_F1 3F1 3B1 3SEND_B1 0RECV_B0 "
         "0B0 3W0 0RECV_B1 0B1 3W1 0W0 0W1",
         "1RECV_F0 1RECV_F1 1F0 2F0 2SEND_F0 1F1 2RECV_B0 2F1 2SEND_F1 2B0 2RECV_B1 1B0 1SEND_B0 "
         "2B1 1B1 1SEND_B1 2W0 2W1 1W0 1W1"},
        {0, 1, 1, 0});
    const Schedule deferred = defer_receives(input);
    EXPECT_EQ(texts(deferred, 0), texts(input, 0));  // already next to their consumers
    EXPECT_EQ(texts(deferred, 1),
              split("1RECV_F0 1F0 2F0 2SEND_F0 1RECV_F1 1F1 2F1 2SEND_F1 2RECV_B0 2B0 1B0 "
                    "1SEND_B0 2RECV_B1 2B1 1B1 1SEND_B1 2W0 2W1 1W0 1W1"));
}

TEST(DeferReceives, LowerRankPostsBeforeSendingAndWeightGradientsConsumeNothing) {
    const Schedule input =
        with_communication({"0RECV_B0 0F0 0SEND_F0 0F1 0SEND_F1 0I0 0W0 0RECV_B1 0I1 0W1",
                            "1RECV_F0 1RECV_F1 1F0 1I0 1SEND_B0 1W0 1F1 1I1 1SEND_B1 1W1"},
                           {0, 1});
    const Schedule deferred = defer_receives(input);
    EXPECT_EQ(texts(deferred, 0), split("0F0 0RECV_B0 0SEND_F0 0F1 0SEND_F1 0I0 0W0 0RECV_B1 0I1 "
                                        "0W1"));
    EXPECT_EQ(texts(deferred, 1), split("1RECV_F0 1F0 1I0 1SEND_B0 1W0 1RECV_F1 1F1 1I1 1SEND_B1 "
                                        "1W1"));
}

TEST(DeferReceives, OverlapPostsTheReceivesOfEachPartInPartOrder) {
    const Schedule input = with_communication(
        {"0F0 0SEND_F0 0F1 0SEND_F1 3RECV_F0 3F0 3B0 3SEND_B0 3RECV_F1 3F1 3B1 3SEND_B1 0RECV_B0 "
         "0B0 3W0 0RECV_B1 0B1 3W1 0W0 0W1",
         "1RECV_F0 1RECV_F1 2RECV_B0 1F0 2F0 2SEND_F0 (1F1;2B0)OVERLAP_F_B 2W0 1B0 1SEND_B0 1W0"},
        {0, 1, 1, 0});
    const Schedule deferred = defer_receives(input);
    EXPECT_EQ(texts(deferred, 0), texts(input, 0));
    EXPECT_EQ(texts(deferred, 1), split("1RECV_F0 1F0 2F0 2SEND_F0 1RECV_F1 2RECV_B0 "
                                        "(1F1;2B0)OVERLAP_F_B 2W0 1B0 1SEND_B0 1W0"));
}

int position(const Schedule& schedule, int rank, const std::string& text) {
    const std::vector<std::string> row = texts(schedule, rank);
    const auto found = std::find(row.begin(), row.end(), text);
    return found == row.end() ? -1 : static_cast<int>(found - row.begin());
}

// The invariants of upstream's no-deadlock test (pytorch/pytorch#172668) on the real lowering
// of Interleaved1F1B, pp = 2, m = 4.
TEST(DeferReceives, InterleavedReceiveMovesPastUnrelatedForward) {
    const Schedule compute = generate_schedule({ScheduleKind::interleaved_1f1b, 2, 2, 4});
    const Schedule eager = lower(compute);
    LoweringOptions options;
    options.defer_receives = true;
    const Schedule deferred = lower(compute, options);
    EXPECT_LT(position(eager, 0, "2RECV_F0"), position(eager, 0, "0F1"));
    EXPECT_GT(position(deferred, 0, "2RECV_F0"), position(eager, 0, "2RECV_F0"));
    // On the higher rank every receive sits right before its consumer.
    const std::vector<Action>& rank1 = deferred.ranks[1];
    for (std::size_t step = 0; step < rank1.size(); ++step) {
        const Action& action = rank1[step];
        if (action.kind != ActionKind::recv_forward && action.kind != ActionKind::recv_backward)
            continue;
        ASSERT_LT(step + 1, rank1.size());
        const Action& consumer = rank1[step + 1];
        EXPECT_EQ(consumer.stage, action.stage) << deferred.text(action);
        EXPECT_EQ(consumer.microbatch, action.microbatch) << deferred.text(action);
        EXPECT_EQ(consumer.kind, action.kind == ActionKind::recv_forward
                                     ? ActionKind::forward
                                     : ActionKind::full_backward);
    }
}

// Deferring moves receives only, never earlier, keeps pairs, and every generated schedule
// still passes the static check and the dry run.
TEST(DeferReceives, OnlyReceivesMoveAndEveryKindStillRuns) {
    LoweringOptions options;
    options.defer_receives = true;
    for (ScheduleKind kind : all_schedule_kinds())
        for (int pp : {2, 4}) {
            const int v = is_multi_stage(kind) ? 2 : 1;
            const int m = 2 * pp;
            SCOPED_TRACE(std::string(schedule_kind_name(kind)) + " pp=" + std::to_string(pp));
            const Schedule compute = generate_schedule({kind, pp, v, m});
            const Schedule eager = lower(compute);
            const Schedule deferred = lower(compute, options);
            EXPECT_EQ(deferred.pair_count, eager.pair_count);
            EXPECT_TRUE(check_structure(deferred).ok());
            EXPECT_TRUE(dry_run(deferred).completed);
            for (int rank = 0; rank < pp; ++rank) {
                auto without_receives = [](const Schedule& schedule, int r) {
                    std::vector<std::string> kept;
                    for (const Action& action : schedule.ranks[r])
                        if (action.kind != ActionKind::recv_forward &&
                            action.kind != ActionKind::recv_backward)
                            kept.push_back(schedule.text(action));
                    return kept;
                };
                EXPECT_EQ(without_receives(deferred, rank), without_receives(eager, rank));
                // A receive is never posted earlier: as many other actions precede it, or more.
                auto others_before = [](const Schedule& schedule, int r, const std::string& text) {
                    int count = 0;
                    for (const Action& action : schedule.ranks[r]) {
                        if (schedule.text(action) == text)
                            return count;
                        if (action.kind != ActionKind::recv_forward &&
                            action.kind != ActionKind::recv_backward)
                            ++count;
                    }
                    return -1;
                };
                for (const Action& action : eager.ranks[rank])
                    if (action.kind == ActionKind::recv_forward ||
                        action.kind == ActionKind::recv_backward) {
                        const std::string text = eager.text(action);
                        EXPECT_GE(others_before(deferred, rank, text),
                                  others_before(eager, rank, text))
                            << text;
                    }
            }
        }
}

TEST(DeferReceives, RefusesASchedulesWithoutCommunicationOrAnUnconsumedReceive) {
    const Schedule compute = generate_schedule({ScheduleKind::gpipe, 2, 1, 2});
    EXPECT_THROW(defer_receives(compute), ScheduleCheckError);
    const Schedule orphan = with_communication({"0F0 0SEND_F0", "1RECV_F0"}, {0, 1});
    try {
        defer_receives(orphan);
        FAIL() << "expected ScheduleCheckError";
    } catch (const ScheduleCheckError& error) {
        EXPECT_NE(std::string(error.what()).find("rank 1: 1RECV_F0 has no computation"),
                  std::string::npos)
            << error.what();
    }
}

}  // namespace
}  // namespace pipelens
