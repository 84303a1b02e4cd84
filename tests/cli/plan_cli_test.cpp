// `pipelens plan` as a user runs it: on one GPU (no bubble, no communication) every layout runs
// at exactly the achieved fraction of peak and its step time is the step's FLOPs at that rate;
// the JSON has the documented keys; --out records the best layout and its sharding decisions;
// a gate fails with exit 1; a pin that breaks a rule is exit 2 naming it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

constexpr const char* kModel =
    "plan --layers 8 --hidden 1024 --heads 16 --sequence 512 --vocabulary 1000 --global-batch 16";

TEST(PlanCli, OneGpuRunsEveryLayoutAtTheAchievedFractionOfPeak) {
    const auto result = run_pipelens(std::string(kModel) +
                                     " --gpus 1 --peak-tflops 100 --achieved-fraction 0.5 --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto layouts = nlohmann::json::parse(result.out);
    ASSERT_EQ(layouts.size(), 4u);  // microbatch sizes 1, 2, 4, 8 with 1F1B
    // 3 x (24 B s h^2 + 4 B s^2 h) per layer + 6 B s h V, at 50 TFLOP/s.
    const double b = 16, s = 512, h = 1024, v = 1000;
    const double flops = 8 * 3 * (24 * b * s * h * h + 4 * b * s * s * h) + 6 * b * s * h * v;
    for (const auto& layout : layouts) {
        EXPECT_EQ(layout["tp"], 1);
        EXPECT_EQ(layout["pp"], 1);
        EXPECT_EQ(layout["schedule"], "1F1B");
        EXPECT_NEAR(layout["tflops_per_gpu"].get<double>(), 50, 1e-3);
        EXPECT_NEAR(layout["step_time_s"].get<double>(), flops / 50e12, 1e-8);
        EXPECT_EQ(layout["breakdown"]["pipeline_bubble_s"], 0.0);
        for (const char* key : {"dp", "v", "microbatch_size", "m", "memory_per_gpu_bytes", "fits"})
            EXPECT_TRUE(layout.contains(key)) << key;
    }
}

TEST(PlanCli, OutRecordsTheBestLayoutAndItsShardingAndGatesFailWithExitOne) {
    const auto trace = std::filesystem::temp_directory_path() /
                       ("pipelens_plan_" + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(trace);
    const auto result = run_pipelens(std::string(kModel) + " --gpus 8 --tp 2 --pp 2 --out " +
                                     trace.string() + " --max-step-time 1us");
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.out.find("recorded tp=2 pp=2 dp=2"), std::string::npos) << result.out;
    EXPECT_NE(result.err.find("gate failed: step time"), std::string::npos) << result.err;
    const auto summary = run_pipelens("summary " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_NE(summary.out.find("2 runs"), std::string::npos) << summary.out;
    EXPECT_NE(summary.out.find("sharding"), std::string::npos) << summary.out;
    std::filesystem::remove(trace);
}

TEST(PlanCli, BadPinsAndSizesAreUsageErrorsNamingTheRule) {
    const auto tp = run_pipelens(std::string(kModel) + " --gpus 8 --tp 3");
    EXPECT_EQ(tp.exit_code, 2);
    EXPECT_EQ(tp.err,
              "pipelens plan: --tp 3: must divide the GPUs (8), the hidden size (1024) "
              "and the heads (16)\n");
    const auto product = run_pipelens(std::string(kModel) + " --gpus 8 --tp 2 --pp 2 --dp 4");
    EXPECT_EQ(product.exit_code, 2);
    EXPECT_EQ(product.err, "pipelens plan: --tp 2 x --pp 2 x --dp 4 must equal the GPUs (8)\n");
    const auto fraction = run_pipelens(std::string(kModel) + " --gpus 8 --achieved-fraction 1.5");
    EXPECT_EQ(fraction.exit_code, 2);
    const auto bandwidth =
        run_pipelens(std::string(kModel) + " --gpus 8 --inter-host-bandwidth fast");
    EXPECT_EQ(bandwidth.exit_code, 2);
    EXPECT_EQ(bandwidth.err.rfind("pipelens plan: --inter-host-bandwidth: ", 0), 0u)
        << bandwidth.err;
    const auto automatic =
        run_pipelens(std::string(kModel) + " --gpus 8 --schedule ZeroBubbleAuto");
    EXPECT_EQ(automatic.exit_code, 2);
    EXPECT_EQ(automatic.err.rfind("pipelens plan: --schedule: ZeroBubbleAuto searches", 0), 0u)
        << automatic.err;
}

TEST(PlanCli, ATomlFileGivesTheFlagsAndFlagsOverrideIt) {
    const auto file = testing::temp_file("plan.toml",
                                         "[model]\nlayers = 8\nhidden = 1024\nheads = 16\n"
                                         "sequence = 512\nvocabulary = 1000\nglobal_batch = 16\n"
                                         "[cluster]\ngpus = 8\ngpu_memory = \"40GB\"\n"
                                         "[plan]\nzero1 = true\ntp = 2\n");
    const auto from_file = run_pipelens("plan " + file.string() + " --json");
    ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
    for (const auto& layout : nlohmann::json::parse(from_file.out))
        EXPECT_EQ(layout["tp"], 2);
    const auto overridden = run_pipelens("plan " + file.string() + " --tp 4 --json");
    ASSERT_EQ(overridden.exit_code, 0) << overridden.err;
    for (const auto& layout : nlohmann::json::parse(overridden.out))
        EXPECT_EQ(layout["tp"], 4);
    // The same layout priced from the file and from flags alone is the same figure.
    const auto flags = run_pipelens(std::string(kModel) +
                                    " --gpus 8 --gpu-memory 40GB --zero1 "
                                    "--tp 2 --json");
    ASSERT_EQ(flags.exit_code, 0) << flags.err;
    EXPECT_EQ(nlohmann::json::parse(flags.out), nlohmann::json::parse(from_file.out));
    const auto bad = run_pipelens(
        "plan " + testing::temp_file("bad_plan.toml", "[model]\nlayer = 3\n").string());
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("bad_plan.toml:2:1: model.layer: unknown key"), std::string::npos)
        << bad.err;
}

}  // namespace
}  // namespace pipelens
