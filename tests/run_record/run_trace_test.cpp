// A real run's per-rank figures: the bubble accounting of engine/analysis over the measured
// timeline, so a gap is attributed to the peer the computation after it waited for by the
// dependency rules, and a rank is never recorded waiting on itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "engine/run_record/run_trace.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::run_record {
namespace {

// 1F1B, pp = 2, m = 2, as measured: F 10, B 20, with host overhead before rank 0's F1 (5) and
// rank 1's F1 (1), neither of which waited for anything from the other rank.
//   rank 0: F0 0-10, F1 15-25, B0 44-64 (its gradient lands at 44), B1 75-95 (at 75)
//   rank 1: F0 12-22 (its input lands at 12), B0 22-42, F1 43-53 (input there at 27), B1 53-73
const std::map<std::string, std::pair<std::int64_t, std::int64_t>> kMeasured = {
    {"0F0", {0, 10}},       {"0SEND_F0", {10, 11}}, {"0F1", {15, 25}},      {"0SEND_F1", {25, 26}},
    {"0RECV_B0", {42, 44}}, {"0B0", {44, 64}},      {"0RECV_B1", {73, 75}}, {"0B1", {75, 95}},
    {"1RECV_F0", {10, 12}}, {"1F0", {12, 22}},      {"1B0", {22, 42}},      {"1SEND_B0", {42, 43}},
    {"1RECV_F1", {25, 27}}, {"1F1", {43, 53}},      {"1B1", {53, 73}},      {"1SEND_B1", {73, 74}},
};

PipelineRunResult measured_run(const Schedule& lowered) {
    PipelineRunResult result;
    result.completed = true;
    result.step_time_ns = 95;
    for (int rank = 0; rank < lowered.rank_count; ++rank) {
        RankRun run;
        run.rank = rank;
        for (std::size_t step = 0; step < lowered.ranks[rank].size(); ++step) {
            const std::string text = lowered.text(lowered.ranks[rank][step]);
            const auto found = kMeasured.find(text);
            if (found == kMeasured.end()) {
                ADD_FAILURE() << "no time for " << text;
                continue;
            }
            run.timeline.push_back(
                {static_cast<int>(step), found->second.first, found->second.second});
        }
        result.ranks.push_back(std::move(run));
    }
    return result;
}

TEST(RealRankRecords, ARankIsNeverRecordedWaitingOnItself) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}));
    ASSERT_EQ(lowered.ranks[0].size() + lowered.ranks[1].size(), kMeasured.size());
    const std::vector<traces::RankRecord> records =
        real_rank_records(lowered, measured_run(lowered));
    ASSERT_EQ(records.size(), 2u);
    for (const traces::RankRecord& record : records) {
        EXPECT_FALSE(traces::waiting_on_map(record.waiting_on).contains(record.rank))
            << record.rank << ": " << record.waiting_on;
        EXPECT_EQ(record.busy_ns, 60);
        EXPECT_EQ(record.bubble_ns, 35);
        EXPECT_DOUBLE_EQ(record.bubble_ratio, 35.0 / 95.0);
    }
    // Rank 0: 19 + 11 waiting for rank 1's gradients; its 5 of host overhead before F1 is its
    // own (the last receive before it was none, which used to read "rank 0 waits on rank 0").
    EXPECT_EQ(records[0].warmup_ns, 0);
    EXPECT_EQ(records[0].cooldown_ns, 0);
    EXPECT_EQ(records[0].waiting_on, "{\"1\":30}");
    // Rank 1: its F1's input had landed before B0 ended; the 1 before it is its own, not rank
    // 0's (the last receive before it came from rank 0).
    EXPECT_EQ(records[1].warmup_ns, 12);
    EXPECT_EQ(records[1].cooldown_ns, 22);
    EXPECT_EQ(records[1].waiting_on, "{}");
}

// A run that stopped has no step: a rank that never began computing records no warm-up (a
// finished run's rank that never computed would record the whole step).
TEST(RealRankRecords, ARankThatNeverBeganInAStoppedRunHasNoWarmUp) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}));
    PipelineRunResult result = measured_run(lowered);
    result.completed = false;
    result.step_time_ns = 12;
    result.ranks[0].timeline.resize(2);  // 0F0 and 0SEND_F0
    result.ranks[1].timeline.resize(1);  // 1RECV_F0; rank 1 stopped in its F0
    const std::vector<traces::RankRecord> records = real_rank_records(lowered, result);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].busy_ns, 10);
    EXPECT_EQ(records[0].warmup_ns, 0);
    EXPECT_EQ(records[0].cooldown_ns, 2);
    EXPECT_EQ(records[1].busy_ns, 0);
    EXPECT_EQ(records[1].warmup_ns, 0);
    EXPECT_EQ(records[1].cooldown_ns, 0);
    EXPECT_EQ(records[1].waiting_on, "{}");
}

// Three recorded steps one after another on one clock: each rank's figures are those of the
// median step. The steps are the measured one stretched by 1, 3 and 2 (step times 95, 285,
// 190), starting at 0, 100 and 400: busy 60/180/120, bubble 35/105/70, so the median step is the
// stretch-2 one, 120 and 70, and the ratio is 35/95 in every step. (Each figure scales alike
// here; the test below has steps whose figures do not, where the two rules part.)
PipelineRunResult three_stretched_steps(const Schedule& lowered) {
    const PipelineRunResult one = measured_run(lowered);
    PipelineRunResult result = one;
    result.step_starts_ns = {0, 100, 400};
    result.step_times_ns = {95, 285, 190};
    result.step_time_ns = 190;
    const int stretches[] = {1, 3, 2};
    for (std::size_t rank = 0; rank < result.ranks.size(); ++rank) {
        result.ranks[rank].timeline.clear();
        for (int step = 0; step < 3; ++step)
            for (ActionTiming timing : one.ranks[rank].timeline) {
                timing.start_ns = result.step_starts_ns[step] + timing.start_ns * stretches[step];
                timing.end_ns = result.step_starts_ns[step] + timing.end_ns * stretches[step];
                timing.repeat = step;
                result.ranks[rank].timeline.push_back(timing);
            }
    }
    return result;
}

TEST(RealRankRecords, SeveralStepsGiveTheMedianStepsFigures) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}));
    const PipelineRunResult result = three_stretched_steps(lowered);
    const std::vector<traces::RankRecord> records = real_rank_records(lowered, result);
    ASSERT_EQ(records.size(), 2u);
    for (const traces::RankRecord& record : records) {
        EXPECT_EQ(record.busy_ns, 120);
        EXPECT_EQ(record.bubble_ns, 70);
        EXPECT_DOUBLE_EQ(record.bubble_ratio, 35.0 / 95.0);
    }
    EXPECT_EQ(records[0].waiting_on, "{\"1\":60}");
    EXPECT_EQ(records[1].warmup_ns, 24);
    EXPECT_EQ(records[1].cooldown_ns, 44);
}

// The last step ends 60 later (step times 95, 285, 250: bubbles 35, 105, 130). A rank's figures
// are those of the median step, 250, whole: busy and bubble add up to it. Medians taken figure
// by figure (bubble 105, from the 285 step) would not, and the per-step ratios' median (35/95,
// from the first) is neither.
TEST(RealRankRecords, TheFiguresOfSeveralStepsAreThoseOfTheMedianStepWhole) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}));
    PipelineRunResult result = three_stretched_steps(lowered);
    result.step_times_ns = {95, 285, 250};
    result.step_time_ns = 250;
    const std::vector<traces::RankRecord> records = real_rank_records(lowered, result);
    ASSERT_EQ(records.size(), 2u);
    for (const traces::RankRecord& record : records) {
        EXPECT_EQ(record.busy_ns, 120);
        EXPECT_EQ(record.bubble_ns, 130);
        EXPECT_EQ(record.busy_ns + record.bubble_ns, result.step_time_ns);
        EXPECT_DOUBLE_EQ(record.bubble_ratio, 130.0 / 250.0);
    }
}

// The same three steps in a trace: 1F1B pp=2 m=2 has 4 transfers a step, so step k's pairs are
// ids 4k..4k+3 with training step k, and each pair's SEND and RECV are the rows of that step
// (within its time span) carrying its id, one each; its size is its own step's send's.
TEST(RealRunTrace, EachStepsTransfersArePairsOfTheirOwn) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}));
    PipelineRunResult result = three_stretched_steps(lowered);
    for (RankRun& rank : result.ranks)
        for (ActionTiming& timing : rank.timeline)
            timing.bytes = 64 + timing.repeat;  // as an import says what moved
    const auto path = testing::fresh_trace("real_run_step_pairs");
    {
        traces::TraceWriter writer(path);
        record_measured_run(writer, lowered, result, "");
    }
    const traces::TraceReader reader(path);
    const std::vector<traces::PairRecord> pairs = reader.pairs(1);
    ASSERT_EQ(pairs.size(), 12u);
    const std::vector<traces::ActionRecord> actions = reader.actions(1);
    const std::int64_t step_ends[] = {100, 400, 1000};
    for (std::size_t index = 0; index < pairs.size(); ++index) {
        const traces::PairRecord& pair = pairs[index];
        SCOPED_TRACE(pair.pair_id);
        EXPECT_EQ(pair.pair_id, static_cast<int>(index));
        EXPECT_EQ(pair.training_step, pair.pair_id / 4);
        EXPECT_EQ(pair.bytes, 64 + pair.training_step);
        const std::int64_t from = result.step_starts_ns[pair.training_step];
        for (const auto& [rank, step] : {std::pair{pair.send_rank, pair.send_step},
                                         std::pair{pair.recv_rank, pair.recv_step}}) {
            int joined = 0;
            for (const traces::ActionRecord& action : actions)
                if (action.rank == rank && action.step == step && action.pair_id == pair.pair_id) {
                    ++joined;
                    EXPECT_GE(action.start_ns, from);
                    EXPECT_LT(action.end_ns, step_ends[pair.training_step]);
                }
            EXPECT_EQ(joined, 1);
        }
    }
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace pipelens::run_record
