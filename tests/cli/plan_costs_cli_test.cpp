// `pipelens plan --hbm-bandwidth ... --dtype ...` as a user runs it: the JSON breakdown's eight
// parts add up to the step, memory-bound work is priced at the default bandwidth (the H100's) and
// left out with `--hbm-bandwidth 0`, fp32 runs at the TF32 peak (half the 16-bit one), and a bad
// dtype or bandwidth is exit 2 naming the flag.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace pipelens
