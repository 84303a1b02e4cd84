// `pipelens plan --hbm-bandwidth ... --dtype ...` as a user runs it: the JSON breakdown's eight
// parts add up to the step, memory-bound work is priced at the default bandwidth (the H100's) and
// left out with `--hbm-bandwidth 0`, fp32 runs at the TF32 peak (half the 16-bit one), a bad
// dtype or bandwidth is exit 2 naming the flag, and tensor-parallel groups and blocking pipeline
// transfers that cross hosts are priced across them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

constexpr const char* kModel =
    "plan --layers 8 --hidden 1024 --heads 16 --sequence 512 --vocabulary 1000 --global-batch 16";

double seconds(const nlohmann::json& parts, const char* key) {
    return parts[key].get<double>();
}

TEST(PlanCostsCli, EveryPartOfTheStepIsItsOwnLineAndTheyAddUp) {
    const auto result = run_pipelens(std::string(kModel) +
                                     " --gpus 8 --recompute full --hbm-bandwidth 2TB/s --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    for (const auto& layout : nlohmann::json::parse(result.out)) {
        const auto& parts = layout["breakdown"];
        const double sum =
            seconds(parts, "compute_s") + seconds(parts, "memory_bound_s") +
            seconds(parts, "embedding_and_output_s") + seconds(parts, "gradient_accumulation_s") +
            seconds(parts, "tensor_parallel_s") + seconds(parts, "pipeline_bubble_s") +
            seconds(parts, "data_parallel_s") + seconds(parts, "optimizer_s");
        EXPECT_NEAR(sum, layout["step_time_s"].get<double>(), 1e-9) << layout.dump();
        EXPECT_GT(seconds(parts, "memory_bound_s"), 0);
        EXPECT_GT(seconds(parts, "optimizer_s"), 0);
        EXPECT_LE(seconds(parts, "output_matmul_s"), seconds(parts, "compute_s"));
    }
    const auto text = run_pipelens(std::string(kModel) + " --gpus 8 --hbm-bandwidth 2TB/s");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("memory-bound layer work"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("optimizer step"), std::string::npos) << text.out;
}

TEST(PlanCostsCli, MemoryBoundWorkIsPricedByDefaultAndBandwidthZeroLeavesItOut) {
    const auto priced = run_pipelens(std::string(kModel) + " --gpus 8 --json");
    const auto at_h100 =
        run_pipelens(std::string(kModel) + " --gpus 8 --hbm-bandwidth 3.35TB/s --json");
    const auto unpriced = run_pipelens(std::string(kModel) + " --gpus 8 --hbm-bandwidth 0 --json");
    ASSERT_EQ(priced.exit_code, 0) << priced.err;
    ASSERT_EQ(at_h100.exit_code, 0) << at_h100.err;
    ASSERT_EQ(unpriced.exit_code, 0) << unpriced.err;
    EXPECT_EQ(priced.out, at_h100.out);
    for (const auto& layout : nlohmann::json::parse(priced.out))
        EXPECT_GT(seconds(layout["breakdown"], "memory_bound_s"), 0);
    for (const auto& layout : nlohmann::json::parse(unpriced.out)) {
        EXPECT_EQ(seconds(layout["breakdown"], "memory_bound_s"), 0);
        EXPECT_EQ(seconds(layout["breakdown"], "optimizer_s"), 0);
    }
}

TEST(PlanCostsCli, Fp32RunsAtHalfThe16BitPeak) {
    const auto result =
        run_pipelens(std::string(kModel) +
                     " --gpus 1 --peak-tflops 100 --achieved-fraction 0.5 --dtype fp32 "
                     "--hbm-bandwidth 0 --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    for (const auto& layout : nlohmann::json::parse(result.out))
        EXPECT_NEAR(layout["tflops_per_gpu"].get<double>(), 25, 1e-3);
}

TEST(PlanCostsCli, ABadDtypeOrBandwidthIsAUsageErrorNamingTheFlag) {
    const auto dtype = run_pipelens(std::string(kModel) + " --gpus 8 --dtype fp64");
    EXPECT_EQ(dtype.exit_code, 2);
    EXPECT_EQ(dtype.err, "pipelens plan: --dtype: use fp32, bf16 or fp16\n");
    const auto bandwidth = run_pipelens(std::string(kModel) + " --gpus 8 --hbm-bandwidth wide");
    EXPECT_EQ(bandwidth.exit_code, 2);
    EXPECT_EQ(bandwidth.err.rfind("pipelens plan: --hbm-bandwidth: ", 0), 0u) << bandwidth.err;
}

// A part of the best layout's breakdown, in whole nanoseconds.
std::int64_t part_ns(const std::string& command, const char* key) {
    const auto result = run_pipelens(command + " --json");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    if (result.exit_code != 0)
        return -1;
    const nlohmann::json layouts = nlohmann::json::parse(result.out);
    const nlohmann::json& best = layouts.at(0);
    return std::llround(
        (key == std::string("step_time_s") ? best[key] : best["breakdown"][key]).get<double>() *
        1e9);
}

// Megatron's rank order fills each host in turn: tp = 6 on 8-GPU hosts puts GPUs 6-11 in one
// group, across two hosts, and the step waits for it. Its collectives were priced as inside a
// host (as on 6-GPU hosts), and GPT-3 175B on 1,536 GPUs ranked tp = 6 first; they are priced as
// a host too small for the group prices them (4-GPU hosts).
TEST(PlanCostsCli, TensorParallelGroupsStraddlingHostsArePricedAcrossThem) {
    const std::string plan =
        "plan --layers 24 --hidden 3072 --heads 24 --sequence 2048 --global-batch 96 --gpus 48 "
        "--tp 6 --pp 1 --microbatch-size 1 --gpus-per-host ";
    EXPECT_EQ(part_ns(plan + "8", "tensor_parallel_s"), 548'387'136);
    EXPECT_EQ(part_ns(plan + "4", "tensor_parallel_s"), 548'387'136);
    EXPECT_EQ(part_ns(plan + "6", "tensor_parallel_s"), 72'810'432);
    const auto gpt3 = run_pipelens(
        "plan --layers 96 --hidden 12288 --heads 96 --sequence 2048 --vocabulary 51200 "
        "--global-batch 1536 --gpus 1536 --top 1 --json");
    ASSERT_EQ(gpt3.exit_code, 0) << gpt3.err;
    const nlohmann::json layouts = nlohmann::json::parse(gpt3.out);
    const nlohmann::json& best = layouts.at(0);
    EXPECT_EQ(fmt::format("tp={} pp={} dp={} {} v={}", best["tp"].get<int>(), best["pp"].get<int>(),
                          best["dp"].get<int>(), best["schedule"].get<std::string>(),
                          best["v"].get<int>()),
              "tp=4 pp=32 dp=12 Interleaved1F1B v=3");
}

// With tp x dp = 4 on 8-GPU hosts, stages 0 and 1 share a host and 2 and 3 the next: the
// boundary between stages 1 and 2 crosses. --blocking-p2p priced every boundary in-host (one
// flag, tp x dp >= GPUs per host, for all), the same as on 16-GPU hosts.
TEST(PlanCostsCli, BlockingTransfersArePricedOnEachBoundarysOwnLink) {
    const std::string plan =
        "plan --layers 16 --hidden 4096 --heads 32 --sequence 2048 --global-batch 64 --gpus 16 "
        "--tp 2 --pp 4 --dp 2 --microbatch-size 1 --schedule 1F1B --blocking-p2p --even-split";
    EXPECT_EQ(part_ns(plan + " --gpus-per-host 8", "step_time_s"), 469'322'142);
    EXPECT_EQ(part_ns(plan + " --gpus-per-host 16", "step_time_s"), 469'007'880);
    // With a small output layer the busiest rank is one of the two that send across: 32
    // microbatches, each one transfer across hosts and one inside.
    EXPECT_EQ(part_ns(plan + " --vocabulary 1000 --gpus-per-host 8", "pipeline_transfer_s"),
              7'772'704);
    EXPECT_EQ(part_ns(plan + " --vocabulary 1000 --gpus-per-host 16", "pipeline_transfer_s"),
              1'436'256);
}

}  // namespace
}  // namespace pipelens
