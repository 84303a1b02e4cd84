// Every schedule family over every valid (pp, v, m) with pp <= 8 and m <= 32: the generated
// schedule and its lowering pass the static check and the dry run, counts are right, the
// lowering keeps the compute order and pairs every send with one recv on the right rank.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {
namespace {

std::vector<int> stages_per_rank_to_try(ScheduleKind kind) {
    if (!is_multi_stage(kind))
        return {1};
    if (stage_placement(kind) == StagePlacement::v_shape)
        return {2};
    return {1, 2, 3, 4};
}

void expect_counts(const Schedule& schedule) {
    std::map<std::pair<int, ActionKind>, int> counts;
    for (const auto& actions : schedule.ranks)
        for (const Action& action : actions)
            for (const Action& part : schedule.parts_of(action))
                ++counts[{part.stage, part.kind}];
    for (int stage = 0; stage < schedule.stage_count; ++stage) {
        const int forwards = counts[{stage, ActionKind::forward}];
        const int inputs = counts[{stage, ActionKind::backward_input}];
        const int weights = counts[{stage, ActionKind::backward_weight}];
        const int fulls = counts[{stage, ActionKind::full_backward}];
        EXPECT_EQ(forwards, schedule.microbatch_count) << "stage " << stage;
        EXPECT_EQ(inputs, weights) << "stage " << stage;
        EXPECT_EQ(fulls + inputs, schedule.microbatch_count) << "stage " << stage;
    }
}

void expect_lowering_keeps_compute_and_pairs(const Schedule& compute, const Schedule& lowered) {
    std::map<int, std::vector<std::pair<int, const Action*>>> pair_members;
    for (int rank = 0; rank < lowered.rank_count; ++rank) {
        std::vector<std::string> compute_texts, lowered_compute_texts;
        for (const Action& action : compute.ranks[rank])
            compute_texts.push_back(compute.text(action));
        for (const Action& action : lowered.ranks[rank]) {
            ASSERT_FALSE(is_fsdp(action.kind)) << lowered.text(action);
            if (is_compute(action.kind))
                lowered_compute_texts.push_back(lowered.text(action));
            if (is_communication(action.kind))
                pair_members[action.link].push_back({rank, &action});
        }
        ASSERT_EQ(compute_texts, lowered_compute_texts) << "rank " << rank;
    }
    ASSERT_EQ(static_cast<int>(pair_members.size()), lowered.pair_count);
    for (const auto& [pair_id, members] : pair_members) {
        ASSERT_EQ(members.size(), 2u) << "pair " << pair_id;
        const bool first_sends = members[0].second->kind == ActionKind::send_forward ||
                                 members[0].second->kind == ActionKind::send_backward;
        const Action& first = first_sends ? *members[0].second : *members[1].second;
        const Action& second = first_sends ? *members[1].second : *members[0].second;
        const bool forward = first.kind == ActionKind::send_forward;
        EXPECT_EQ(second.kind, forward ? ActionKind::recv_forward : ActionKind::recv_backward);
        EXPECT_EQ(second.stage, first.stage + (forward ? 1 : -1));
        EXPECT_EQ(second.microbatch, first.microbatch);
        EXPECT_NE(lowered.stage_to_rank[first.stage], lowered.stage_to_rank[second.stage])
            << "no pair may join stages on one rank";
    }
}

class ScheduleGridTest : public ::testing::TestWithParam<ScheduleKind> {};

TEST_P(ScheduleGridTest, EveryValidShapeChecksAndLowersWithoutHang) {
    const ScheduleKind kind = GetParam();
    int valid_shapes = 0;
    for (int pp = 1; pp <= 8; ++pp)
        for (int v : stages_per_rank_to_try(kind))
            for (int m = 1; m <= 32; ++m) {
                const ScheduleShape shape{kind, pp, v, m};
                try {
                    validate_shape(shape);
                } catch (const ScheduleConfigError&) {
                    continue;
                }
                ++valid_shapes;
                SCOPED_TRACE(::testing::Message() << schedule_kind_name(kind) << " pp=" << pp
                                                  << " v=" << v << " m=" << m);
                const Schedule compute = generate_schedule(shape);
                ASSERT_EQ(compute.stage_count, pp * v);
                const CheckReport report = check_structure(compute);
                ASSERT_TRUE(report.ok()) << report.text();
                expect_counts(compute);
                const DryRunResult compute_run = dry_run(compute);
                ASSERT_TRUE(compute_run.completed) << compute_run.hang.text();

                const Schedule lowered = lower(compute);
                const CheckReport lowered_report = check_structure(lowered);
                ASSERT_TRUE(lowered_report.ok()) << lowered_report.text();
                const DryRunResult lowered_run = dry_run(lowered);
                ASSERT_TRUE(lowered_run.completed) << lowered_run.hang.text();
                EXPECT_EQ(lowered_run.actions_run, lowered.action_count());
                expect_lowering_keeps_compute_and_pairs(compute, lowered);
            }
    EXPECT_GT(valid_shapes, 100) << "the grid must exercise many shapes";
}

// What `schedule --fsdp --format csv` writes (and upstream's _dump_csv, for one rank) reads back
// as the lowered schedule it is: one rank has no SEND/RECV, and its UNSHARDs were once taken for
// a compute-only file's mistake.
TEST_P(ScheduleGridTest, EveryFsdpLoweredScheduleReadsBackFromItsCsv) {
    const ScheduleKind kind = GetParam();
    int read_back = 0;
    for (int pp = 1; pp <= 3; ++pp)
        for (int v : stages_per_rank_to_try(kind))
            for (int m = 1; m <= 8; ++m) {
                const ScheduleShape shape{kind, pp, v, m};
                try {
                    validate_shape(shape);
                } catch (const ScheduleConfigError&) {
                    continue;
                }
                SCOPED_TRACE(::testing::Message() << schedule_kind_name(kind) << " pp=" << pp
                                                  << " v=" << v << " m=" << m);
                const Schedule lowered =
                    lower(generate_schedule(shape), {.keep_fsdp_actions = true});
                const Schedule back = parse_schedule_csv(format_schedule_csv(lowered), "grid.csv");
                ASSERT_TRUE(back.has_communication);
                ASSERT_EQ(back.action_count(), lowered.action_count());
                const CheckReport report = check_structure(back);
                ASSERT_TRUE(report.ok()) << report.text();
                ASSERT_TRUE(dry_run(back).completed);
                ++read_back;
            }
    EXPECT_GT(read_back, 10);
}

TEST_P(ScheduleGridTest, StageToRankFollowsLoopOrVShape) {
    const ScheduleKind kind = GetParam();
    const int v = stage_placement(kind) == StagePlacement::v_shape || is_multi_stage(kind) ? 2 : 1;
    const Schedule schedule = generate_schedule({kind, 4, v, 8});
    for (int stage = 0; stage < schedule.stage_count; ++stage) {
        const int expected =
            stage_placement(kind) == StagePlacement::v_shape && stage >= 4 ? 7 - stage : stage % 4;
        EXPECT_EQ(schedule.stage_to_rank[stage], expected) << "stage " << stage;
    }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ScheduleGridTest, ::testing::ValuesIn(all_schedule_kinds()),
                         [](const auto& info) {
                             return std::string(schedule_kind_name(info.param));
                         });

}  // namespace
}  // namespace pipelens
