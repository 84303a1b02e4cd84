// The static check of a lowered file's UNSHARD, RESHARD and REDUCE_GRAD: what PyTorch's runtime
// asserts (computing on a sharded stage, unsharding twice) and what it would get silently wrong
// (gradients reduced twice, or before a backward that adds to them) are problems naming the
// rank, step and action; the FSDP lowering's own output passes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {
namespace {

std::vector<std::string> problems_of(const std::string& csv) {
    return check_structure(parse_schedule_csv(csv, "fsdp.csv")).problems;
}

// Rank 1's row, right: unsharded before its computations, reduced after its last backward.
constexpr const char* kRankOne =
    "1UNSHARD,1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1RESHARD\n";

TEST(FsdpCheck, ComputingOnAReshardedStageIsAProblem) {
    EXPECT_EQ(problems_of("0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RESHARD,0RECV_B0,0B0,0RECV_B1,0B1,"
                          "0REDUCE_GRAD\n" +
                          std::string(kRankOne)),
              (std::vector<std::string>{
                  "rank 0, step 7: 0B0 computes on stage 0 while it is sharded (no UNSHARD since "
                  "it was last resharded); PyTorch stops: Attempted to compute on sharded",
                  "rank 0, step 9: 0B1 computes on stage 0 while it is sharded (no UNSHARD since "
                  "it was last resharded); PyTorch stops: Attempted to compute on sharded"}));
    EXPECT_EQ(problems_of("0F0,0SEND_F0,0F1,0SEND_F1,0RESHARD,0RECV_B0,0B0,0RECV_B1,0B1\n"
                          "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n"),
              (std::vector<std::string>{
                  "rank 0, step 4: 0RESHARD reshards stage 0, which no UNSHARD unsharded"}));
}

TEST(FsdpCheck, UnshardingTwiceIsAProblem) {
    EXPECT_EQ(problems_of("0UNSHARD,0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,"
                          "0REDUCE_GRAD,0RESHARD\n" +
                          std::string(kRankOne)),
              (std::vector<std::string>{"rank 0, step 1: 0UNSHARD unshards stage 0 a second time "
                                        "without a RESHARD between"}));
}

TEST(FsdpCheck, GradientsReducedTwiceEarlyOrNotAtAllAreProblems) {
    const std::string rank_zero = "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1";
    const std::string rank_one = "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1";
    EXPECT_EQ(
        problems_of(rank_zero + ",0REDUCE_GRAD,0REDUCE_GRAD\n" + rank_one + ",1REDUCE_GRAD\n"),
        (std::vector<std::string>{"rank 0, step 9: 0REDUCE_GRAD appears a second time: the "
                                  "gradients would be reduced twice"}));
    EXPECT_EQ(problems_of("0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0REDUCE_GRAD,0RECV_B1,0B1\n" +
                          rank_one + ",1REDUCE_GRAD\n"),
              (std::vector<std::string>{
                  "rank 0, step 8: 0B1 runs a backward of stage 0 after its REDUCE_GRAD: the "
                  "gradients were reduced before this one was added"}));
    EXPECT_EQ(problems_of(rank_zero + ",0REDUCE_GRAD\n" + rank_one + "\n"),
              (std::vector<std::string>{
                  "stage 1 has no REDUCE_GRAD, though the schedule reduces other stages' "
                  "gradients: 1REDUCE_GRAD is missing after its last backward"}));
    EXPECT_TRUE(problems_of(rank_zero + "\n" + rank_one + "\n").empty());  // no FSDP at all
}

TEST(FsdpCheck, TheFsdpLoweringsOwnOutputPasses) {
    for (const ScheduleKind kind : all_schedule_kinds()) {
        if (kind == ScheduleKind::zero_bubble_auto)
            continue;  // its order needs costs
        const int v = is_multi_stage(kind) ? 2 : 1;
        const Schedule lowered =
            lower(generate_schedule({kind, 2, v, 8}), {.keep_fsdp_actions = true});
        const CheckReport report = check_structure(lowered);
        EXPECT_TRUE(report.ok()) << schedule_kind_name(kind) << ": " << report.text();
    }
}

}  // namespace
}  // namespace pipelens
