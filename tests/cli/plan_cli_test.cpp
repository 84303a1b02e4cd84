// `pipelens plan` as a user runs it: on one GPU (no bubble, no communication) every layout runs
// at exactly the achieved fraction of peak and its step time is the step's FLOPs at that rate;
// the JSON has the documented keys; --out records the best layout and its sharding decisions;
// a gate fails with exit 1; a pin that breaks a rule is exit 2 naming it; no layout runs above
// the achieved fraction of peak; the breakdown adds up to the step; the F/B overlap is 0 unless
// given.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

constexpr const char* kModel =
    "plan --layers 8 --hidden 1024 --heads 16 --sequence 512 --vocabulary 1000 --global-batch 16";

TEST(PlanCli, OneGpuRunsEveryLayoutAtTheAchievedFractionOfPeak) {
    const auto result = run_pipelens(std::string(kModel) +
                                     " --gpus 1 --peak-tflops 100 --achieved-fraction 0.5 "
                                     "--hbm-bandwidth 0 --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto layouts = nlohmann::json::parse(result.out);
    ASSERT_EQ(layouts.size(), 4u);  // microbatch sizes 1, 2, 4, 8 with 1F1B
    // With memory-bound work unpriced (--hbm-bandwidth 0), the matrix multiplies alone:
    // 3 x (24 B s h^2 + 4 B s^2 h) per layer, with fused attention's Q K^T again in the
    // backward (2 B s^2 h), + 6 B s h V, at 50 TFLOP/s.
    const double b = 16, s = 512, h = 1024, v = 1000;
    const double flops =
        8 * (3 * (24 * b * s * h * h + 4 * b * s * s * h) + 2 * b * s * s * h) + 6 * b * s * h * v;
    for (const auto& layout : layouts) {
        EXPECT_EQ(layout["tp"], 1);
        EXPECT_EQ(layout["pp"], 1);
        EXPECT_EQ(layout["schedule"], "1F1B");
        EXPECT_NEAR(layout["tflops_per_gpu"].get<double>(), 50, 1e-3);
        // Never below the FLOPs at the achieved rate: each F, I and W is rounded up to a whole
        // nanosecond, so at most 3 m ns above it.
        const double step = layout["step_time_s"].get<double>();
        EXPECT_GE(step, flops / 50e12 - 1e-15);
        EXPECT_LE(step, flops / 50e12 + 3 * layout["m"].get<double>() * 1e-9);
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

// --max-bubble gates the bubble ratio `simulate` and `summary` give the recorded pipeline (idle
// compute over ranks x step), not the busiest rank's bubble over the plan's step, which passed a
// pipeline `summary` put over the limit.
TEST(PlanCli, TheBubbleGateIsTheRecordedPipelinesBubbleRatio) {
    const auto trace = std::filesystem::temp_directory_path() /
                       ("pipelens_plan_bubble_" + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(trace);
    const auto result = run_pipelens(std::string(kModel) +
                                     " --gpus 8 --tp 2 --pp 4 --dp 1 --schedule 1F1B --even-split "
                                     "--max-bubble 1% --out " +
                                     trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto summary = run_pipelens("summary --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const nlohmann::json pipeline = nlohmann::json::parse(summary.out).at("runs").front();
    ASSERT_EQ(pipeline.at("pp"), 4) << summary.out;  // the second run is the sharding's
    const double ratio = pipeline.at("bubble_ratio").get<double>();
    EXPECT_NE(result.err.find(
                  fmt::format("bubble ratio {:.2f}% exceeds --max-bubble 1.00%", 100 * ratio)),
              std::string::npos)
        << result.err << " against " << ratio;
    std::filesystem::remove(trace);
}

TEST(PlanCli, BadPinsAndSizesAreUsageErrorsNamingTheRule) {
    const auto tp = run_pipelens(std::string(kModel) + " --gpus 8 --tp 3");
    EXPECT_EQ(tp.exit_code, 2);
    EXPECT_EQ(tp.err,
              "pipelens plan: --tp 3: must divide the GPUs (8), the hidden size (1024) "
              "and the heads (16)\n");
    // A v for a schedule of one stage per rank was ignored, and hosts of 3 GPUs priced 8 GPUs
    // as 2 2/3 hosts.
    const auto v = run_pipelens(std::string(kModel) + " --gpus 8 --schedule 1F1B --v 2");
    EXPECT_EQ(v.exit_code, 2);
    EXPECT_EQ(v.err.rfind("pipelens plan: --v 2: 1F1B runs one stage per rank (v = 1); ", 0), 0u)
        << v.err;
    const auto any_kind = run_pipelens(std::string(kModel) + " --gpus 8 --v 2 --json");
    ASSERT_EQ(any_kind.exit_code, 0) << any_kind.err;
    for (const auto& layout : nlohmann::json::parse(any_kind.out))
        EXPECT_EQ(layout.at("v"), 2) << layout.dump();
    // A pin no layout takes is named, with its rule, not "no layout fits" (which reads as memory).
    const auto m = run_pipelens(std::string(kModel) + " --gpus 8 --m 7");
    EXPECT_EQ(m.exit_code, 2);
    EXPECT_EQ(m.err,
              "pipelens plan: --m 7: no layout of 8 GPUs takes it with the other pins, and leaving "
              "it out would give some: m is the global batch (16) over dp x microbatch size, so dp "
              "x microbatch size must divide it\n");
    // With --layout, pp need not divide the layers: only the GPUs are named.
    const auto layout_pp =
        run_pipelens(std::string(kModel) + " --gpus 8 --layout \"Et*3|t*3|t*2L\" --pp 3");
    EXPECT_EQ(layout_pp.exit_code, 2);
    EXPECT_EQ(layout_pp.err, "pipelens plan: --pp 3: must divide the GPUs (8)\n");
    // A step past int64's nanoseconds from a model size names the sizes the costs came from.
    const auto long_sequence = run_pipelens(
        "plan --layers 24 --hidden 2048 --heads 16 --sequence 1000000000 --global-batch 64 "
        "--gpus 8");
    EXPECT_EQ(long_sequence.exit_code, 3);
    EXPECT_NE(long_sequence.err.find("here the costs come from the model: --layers 24 --hidden "
                                     "2048 --sequence 1000000000"),
              std::string::npos)
        << long_sequence.err;
    const auto hosts = run_pipelens(std::string(kModel) + " --gpus 8 --gpus-per-host 3");
    EXPECT_EQ(hosts.exit_code, 2);
    EXPECT_EQ(hosts.err,
              "pipelens plan: --gpus-per-host 3: must divide the GPUs (8): every host "
              "holds as many GPUs\n");
    const auto product = run_pipelens(std::string(kModel) + " --gpus 8 --tp 2 --pp 2 --dp 4");
    EXPECT_EQ(product.exit_code, 2);
    EXPECT_EQ(product.err, "pipelens plan: --tp 2 x --pp 2 x --dp 4 must equal the GPUs (8)\n");
    // Heads that do not divide the hidden size once failed deep in the cost model (exit 1).
    const auto heads = run_pipelens(
        "plan --layers 8 --hidden 1000 --heads 16 --sequence 512 --vocabulary 1000 "
        "--global-batch 16 --gpus 8");
    EXPECT_EQ(heads.exit_code, 2);
    EXPECT_EQ(heads.err,
              "pipelens plan: --hidden 1000 does not split into --heads 16 equal heads (give a "
              "hidden size that --heads divides)\n");
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
    const auto attention = run_pipelens(std::string(kModel) + " --gpus 8 --attention sdpa");
    EXPECT_EQ(attention.exit_code, 2);
    EXPECT_EQ(attention.err, "pipelens plan: --attention sdpa: use flash or unfused\n");
    const auto scores = run_pipelens(std::string(kModel) + " --gpus 8 --attention-matmul-memory");
    EXPECT_EQ(scores.exit_code, 2);
    EXPECT_EQ(scores.err.rfind("pipelens plan: --attention-matmul-memory prices unfused", 0), 0u)
        << scores.err;
    EXPECT_EQ(run_pipelens(std::string(kModel) +
                           " --gpus 8 --attention unfused --attention-matmul-memory")
                  .exit_code,
              0);
    // A trace that cannot be written is refused before the search runs, not after it.
    const auto out = run_pipelens(std::string(kModel) + " --gpus 8 --out /nonexistent/dir/p.db");
    EXPECT_EQ(out.exit_code, 2);
    EXPECT_EQ(out.out, "");
    EXPECT_EQ(out.err,
              "pipelens: /nonexistent/dir/p.db: cannot create trace: directory "
              "/nonexistent/dir does not exist\n");
    // A pin of 0 once divided the search by zero (SIGFPE); -1 pinned nothing, silently.
    for (const std::string pin : {"v 0", "microbatch-size 0", "v -1", "m 0"}) {
        const auto zero = run_pipelens(std::string(kModel) + " --gpus 8 --" + pin);
        EXPECT_EQ(zero.exit_code, 2) << pin;
        EXPECT_EQ(zero.err, "pipelens plan: --" + pin +
                                " pins nothing: give 1 or more, or leave it out to search it\n");
    }
    for (const std::string flag : {"peak-tflops inf", "inter-host-bandwidth 0"}) {
        const auto refused = run_pipelens(std::string(kModel) + " --gpus 8 --" + flag);
        EXPECT_EQ(refused.exit_code, 2) << flag;
        EXPECT_EQ(refused.err, "pipelens plan: --" + flag.substr(0, flag.find(' ')) +
                                   " must be a positive number\n");
    }
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
    // attention = "unfused" in the file is --attention unfused, and it is not the default.
    const auto unfused_file = testing::temp_file(
        "plan_unfused.toml",
        "[model]\nlayers = 8\nhidden = 1024\nheads = 16\nsequence = 512\nvocabulary = 1000\n"
        "global_batch = 16\n[cluster]\ngpus = 8\n[plan]\nattention = \"unfused\"\ntp = 2\n");
    const auto unfused = run_pipelens("plan " + unfused_file.string() + " --json");
    ASSERT_EQ(unfused.exit_code, 0) << unfused.err;
    const auto unfused_flags =
        run_pipelens(std::string(kModel) + " --gpus 8 --tp 2 --attention unfused --json");
    ASSERT_EQ(unfused_flags.exit_code, 0) << unfused_flags.err;
    EXPECT_EQ(nlohmann::json::parse(unfused.out), nlohmann::json::parse(unfused_flags.out));
    const auto fused = run_pipelens(std::string(kModel) + " --gpus 8 --tp 2 --json");
    ASSERT_EQ(fused.exit_code, 0) << fused.err;
    EXPECT_NE(nlohmann::json::parse(unfused.out), nlohmann::json::parse(fused.out));
    const auto bad = run_pipelens(
        "plan " + testing::temp_file("bad_plan.toml", "[model]\nlayer = 3\n").string());
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("bad_plan.toml:2:1: model.layer: unknown key"), std::string::npos)
        << bad.err;
}

// Model sizes past a billion are refused by name before anything is priced: --layers 4294967320
// was read as 24 layers (the per-stage counts are int) and printed 3.5e10 TFLOP/s with exit 0; a
// number past int64 was read as its largest value and printed a negative compute time. More
// layers than the uneven split search takes (4096) are refused unless the split is even.
TEST(PlanCli, ModelSizesPastTheirRangeAreRefusedNamingTheOption) {
    const std::string rest = " --heads 16 --sequence 2048 --global-batch 64 --gpus 16";
    const std::pair<std::string, std::string> refused[] = {
        {"plan --layers 4294967320 --hidden 2048" + rest,
         "pipelens plan: --layers 4294967320 is out of range (at most 1000000000)\n"},
        {"plan --layers 10000000000000000000 --hidden 2048" + rest,
         "pipelens plan: --layers is out of range (at most 1000000000)\n"},
        {"plan --layers 24 --hidden 10000000000000000000" + rest,
         "pipelens plan: --hidden is out of range (at most 1000000000)\n"},
        {"plan --layers 24 --hidden 2048 --heads 16 --sequence 10000000000 --global-batch 64 "
         "--gpus 16",
         "pipelens plan: --sequence 10000000000 is out of range (at most 1000000000)\n"},
    };
    for (const auto& [command, message] : refused) {
        const auto result = run_pipelens(command);
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, message) << command;
    }
    const auto uneven = run_pipelens("plan --layers 5000 --hidden 2048" + rest);
    EXPECT_EQ(uneven.exit_code, 3);
    EXPECT_EQ(uneven.err,
              "pipelens plan: --layers 5000: the uneven split search prices every run of "
              "consecutive layers as a stage, for at most 4096 layers; give --even-split\n");
    const auto even = run_pipelens("plan --layers 5000 --hidden 2048 --even-split" + rest);
    EXPECT_EQ(even.exit_code, 0) << even.err;
    EXPECT_NE(even.out.find("Et*2500|t*2500L"), std::string::npos) << even.out;
}

// The command: DualPipeV on 16 GPUs reported 926.7 TFLOP/s, above 989 x 0.7 = 692.3,
// the model's own ceiling. No layout exceeds it, at the default overlap or a full one.
// --top below 1 and a GPU of no memory are refused like sweep's --top (they printed no row, or
// every layout, with exit 0); a value from the plan file names the file beside the flag, and a
// switch in it takes true or false only (2 and "yes" were read as true).
TEST(PlanCli, TopMemoryAndTheFilesValuesAreCheckedNamingWhereTheyCameFrom) {
    const std::string model =
        " --layers 8 --hidden 1024 --heads 16 --sequence 512 --vocabulary 64000 "
        "--global-batch 16 --gpus 8";
    const std::pair<std::string, std::string> refused[] = {
        {"plan --top 0" + model, "pipelens plan: --top must be at least 1, got 0\n"},
        {"plan --top -1" + model, "pipelens plan: --top must be at least 1, got -1\n"},
        {"plan --gpu-memory 0" + model, "pipelens plan: --gpu-memory must be a positive number\n"},
    };
    for (const auto& [command, message] : refused) {
        const auto result = run_pipelens(command);
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, message) << command;
    }
    const auto memory =
        testing::temp_file("plan_memory.toml", "[cluster]\ngpu_memory = \"80XB\"\n");
    auto result = run_pipelens("plan " + memory.string() + model);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err.rfind("pipelens plan: " + memory.string() +
                                   ":2:14: cluster.gpu_memory: --gpu-memory: '80XB' is "
                                   "not a size",
                               0),
              0u)
        << result.err;
    const auto layers = testing::temp_file("plan_layers.toml", "[model]\nlayers = -8\n");
    result = run_pipelens("plan " + layers.string() +
                          " --hidden 1024 --heads 16 --sequence 512 --vocabulary 64000 "
                          "--global-batch 16 --gpus 8");
    EXPECT_EQ(result.exit_code, 2);
    // Named where the file gives it: line, column and key.
    EXPECT_EQ(result.err, "pipelens plan: " + layers.string() +
                              ":2:10: model.layers: --layers must be a positive number\n");
    // A size given nowhere is named with the two places it can be given.
    result =
        run_pipelens("plan --hidden 1024 --heads 16 --sequence 512 --global-batch 16 --gpus 8");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens plan: --layers is required (or give a plan file whose [model] sets "
              "layers)\n");
    const auto no_gpus = testing::temp_file("plan_no_gpus.toml", "[cluster]\ngpus_per_host = 4\n");
    result = run_pipelens("plan " + no_gpus.string() +
                          " --layers 8 --hidden 1024 --heads 16 --sequence 512 --global-batch 16");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens plan: " + no_gpus.string() +
                              ": [cluster] has no gpus, and --gpus is not given: set one\n");
    for (const char* value : {"2", "\"yes\""}) {
        const auto lenient = testing::temp_file(
            "plan_switch.toml", std::string("[plan]\nsequence_parallel = ") + value + "\n");
        result = run_pipelens("plan " + lenient.string() + model);
        EXPECT_EQ(result.exit_code, 2) << value;
        EXPECT_EQ(result.err, "pipelens plan: " + lenient.string() +
                                  ":2:21: plan.sequence_parallel: expected true or false\n");
    }
    // A count is a TOML integer, as in experiment files: "24" and 24.0 were read as 24.
    for (const char* value : {"\"24\"", "24.0"}) {
        const auto typed =
            testing::temp_file("plan_typed.toml", std::string("[model]\nlayers = ") + value + "\n");
        result = run_pipelens("plan " + typed.string() +
                              " --hidden 1024 --heads 16 --sequence 512 --global-batch 16 "
                              "--gpus 8");
        EXPECT_EQ(result.exit_code, 2) << value;
        EXPECT_EQ(result.err, "pipelens plan: " + typed.string() +
                                  ":2:10: model.layers: expected an integer\n");
    }
}

// A time past int64 was converted before it was checked (undefined): --peak-tflops 1e-300 said
// "an action's time came out as -9223372036854428525 ns". Checked first, it is named with the
// magnitude it came to, past double's range too.
TEST(PlanCli, ATimePastTheSimulatorsRangeIsTooLargeWithItsMagnitude) {
    const auto result = run_pipelens(
        "plan --layers 8 --hidden 1024 --heads 16 --sequence 512 --global-batch 16 --gpus 8 "
        "--peak-tflops 1e-300");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err,
              "pipelens plan: a stage's arithmetic would take 2.36223e+308 ns, more than 2^62 ns "
              "(about 146 years): a cost, latency or bandwidth is out of any machine's range; "
              "here the costs come from the model: --layers 8 --hidden 1024 --sequence 512 "
              "--vocabulary 51200 --global-batch 16 (a size in the wrong unit?) on 8 GPUs at "
              "1e-300 TFLOP/s\n");
    EXPECT_TRUE(result.out.empty()) << result.out;
}

// Memory past 2^62 bytes per GPU is refused as too large, never rounded: it wrapped to 0 B, and a
// model of 8 layers of hidden 2.3e8 "fit in 74.5 GiB" and passed --max-memory 80GB.
TEST(PlanCli, MemoryPastWhatA64BitCountHoldsIsTooLargeNotZero) {
    const auto result = run_pipelens(
        "plan --layers 8 --hidden 230000000 --heads 16 --sequence 512 "
        "--global-batch 16 --gpus 8 --tp 8 --pp 1 --even-split --max-memory 80GB");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err.rfind("pipelens plan: the weights and optimizer state would be 1.14e+19 "
                               "bytes per GPU, past 2^62 (4 EiB); here the costs come from the "
                               "model: --layers 8 --hidden 230000000 ",
                               0),
              0u)
        << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
}

// A global batch given in tokens makes billions of microbatches: refused as too large at once
// (exit 3), naming the layout and what sets m, never allocated until the machine gives out.
TEST(PlanCli, AGlobalBatchNoScheduleCanHoldIsTooLargeBeforeAnythingIsBuilt) {
    const std::string model = " --layers 8 --hidden 1024 --heads 16 --sequence 512 --gpus 8";
    auto result = run_pipelens("plan --global-batch 1099511627776" + model);
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err,
              "pipelens: the global batch (1099511627776) is 137438953472 microbatches of 1 on "
              "dp=8: more than a schedule holds (2147483647); the global batch counts sequences, "
              "not tokens\n");
    result =
        run_pipelens("plan --global-batch 1073741824 --dp 1 --tp 1 --pp 8 --schedule 1F1B" + model);
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err,
              "pipelens: layout tp=1 pp=8 dp=1 microbatch size 1: 1F1B: pp*v*m = 8*1*1073741824 is "
              "too large (the limit is 536870911 stage-microbatches); m is the global batch (in "
              "sequences) over dp x microbatch size\n");
    // Under the limit, held to a 2 GB address space: every worker's schedule must fit its share.
    result = testing::run_command(
        "sh -c 'ulimit -v 2000000; exec " + std::string(PIPELENS_BINARY) +
        " plan --global-batch 1048576 --dp 1 --tp 1 --pp 8 --schedule 1F1B" + model + "'");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_NE(result.err.find("pipelens: layout tp=1 pp=8 dp=1 microbatch size 1 (one of 4, "),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("1F1B pp=8 v=1 m=1048576 is too large for this machine"),
              std::string::npos)
        << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(PlanCli, DualPipeVStaysUnderTheAchievedFractionOfPeak) {
    const std::string command =
        "plan --layers 32 --hidden 4096 --heads 32 --sequence 4096 --vocabulary 32000 "
        "--global-batch 512 --gpus 16 --schedule DualPipeV --json";
    for (const char* overlap : {"", " --overlap-efficiency 1"}) {
        const auto result = run_pipelens(command + overlap);
        ASSERT_EQ(result.exit_code, 0) << result.err;
        const auto layouts = nlohmann::json::parse(result.out);
        ASSERT_FALSE(layouts.empty());
        for (const auto& layout : layouts)
            EXPECT_LE(layout["tflops_per_gpu"].get<double>(), 989 * 0.7) << layout.dump();
    }
}

// compute_s (arithmetic) + tensor_parallel_s + pipeline_bubble_s + data_parallel_s is the step.
TEST(PlanCli, TheBreakdownAddsUpToTheStep) {
    const auto result = run_pipelens(std::string(kModel) + " --gpus 8 --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    for (const auto& layout : nlohmann::json::parse(result.out)) {
        const auto& parts = layout["breakdown"];
        double sum = 0;
        for (const char* part :
             {"compute_s", "memory_bound_s", "embedding_and_output_s", "gradient_accumulation_s",
              "tensor_parallel_s", "pipeline_bubble_s", "data_parallel_s", "optimizer_s"})
            sum += parts[part].get<double>();
        EXPECT_NEAR(sum, layout["step_time_s"].get<double>(), 1e-9) << layout.dump();
    }
    const auto text = run_pipelens(std::string(kModel) + " --gpus 8 --top 3");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("step = compute + tp comm + bubble + dp comm + memory-bound work + "
                            "optimizer, on the busiest rank: compute is the arithmetic alone, tp "
                            "and dp comm what no overlap hid\n"),
              std::string::npos)
        << text.out;
}

// The overlap is 0 unless given, by --overlap-efficiency or [plan] overlap_efficiency; with
// tp = 2 it hides collectives and the step shrinks.
TEST(PlanCli, OverlapEfficiencyComesFromTheFlagOrTheFile) {
    const std::string dual = std::string(kModel) + " --gpus 8 --tp 2 --schedule DualPipeV --json";
    const auto none = run_pipelens(dual);
    const auto flag = run_pipelens(dual + " --overlap-efficiency 1");
    const auto file = testing::temp_file("plan_overlap.toml", "[plan]\noverlap_efficiency = 1\n");
    const auto from_file = run_pipelens(dual + " " + file.string());
    ASSERT_EQ(none.exit_code, 0) << none.err;
    ASSERT_EQ(flag.exit_code, 0) << flag.err;
    ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
    EXPECT_EQ(nlohmann::json::parse(flag.out), nlohmann::json::parse(from_file.out));
    EXPECT_LT(nlohmann::json::parse(flag.out)[0]["step_time_s"].get<double>(),
              nlohmann::json::parse(none.out)[0]["step_time_s"].get<double>());
    const auto bad = run_pipelens(dual + " --overlap-efficiency 1.5");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--overlap-efficiency: 1.5 is above 1"), std::string::npos) << bad.err;
}

// A user measures the shapes `--gemm-shapes` lists and gives them back with `--gemm-rates`:
// measured at exactly peak x achieved fraction (989 x 0.7 = 692.3) the plan is the same; a shape
// left out, or a line that is not a rate, is a usage error naming it.
TEST(PlanCli, GemmShapesListWhatGemmRatesMustMeasure) {
    const std::string plan = std::string(kModel) + " --gpus 8 --tp 2 --pp 2";
    const auto shapes = run_pipelens(plan + " --gemm-shapes");
    ASSERT_EQ(shapes.exit_code, 0) << shapes.err;
    std::istringstream lines(shapes.out);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "m,n,k");
    std::string rates = "m,n,k,tflops\n";
    int count = 0;
    while (std::getline(lines, line)) {
        rates += line + ",692.3\n";
        ++count;
    }
    // tp = 2, microbatch sizes 1, 2, 4, 8 (512 to 4,096 tokens): per size the 12 layer GEMMs
    // and 3 logits GEMMs, fewer where shapes coincide.
    EXPECT_GT(count, 20);
    EXPECT_NE(shapes.out.find("\n512,1536,1024\n"), std::string::npos) << shapes.out;  // QKV, b 1
    const auto file = testing::temp_file("rates.csv", rates);
    const auto measured = run_pipelens(plan + " --gemm-rates " + file.string() + " --json");
    const auto plain = run_pipelens(plan + " --json");
    ASSERT_EQ(measured.exit_code, 0) << measured.err;
    EXPECT_EQ(nlohmann::json::parse(measured.out), nlohmann::json::parse(plain.out));
    const auto missing_file =
        testing::temp_file("rates_missing.csv", "m,n,k,tflops\n512,1536,1024,600\n");
    const auto missing = run_pipelens(plan + " --gemm-rates " + missing_file.string());
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("rates_missing.csv has no rate for the "), std::string::npos)
        << missing.err;
    const auto bad_file = testing::temp_file("rates_bad.csv", "m,n,k,tflops\n512,1536,1024,fast\n");
    const auto bad = run_pipelens(plan + " --gemm-rates " + bad_file.string());
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("rates_bad.csv:2: tflops: \"fast\" is not a positive TFLOP/s figure"),
              std::string::npos)
        << bad.err;
    const auto unreadable = run_pipelens(plan + " --gemm-rates /nonexistent/rates.csv");
    EXPECT_EQ(unreadable.exit_code, 2);
    EXPECT_EQ(unreadable.err,
              "pipelens plan: --gemm-rates /nonexistent/rates.csv: cannot open it: No such file or "
              "directory\n");
}

// A plan file names its rates by a path relative to itself: found beside the file wherever the
// command runs (here the rates lack a shape, so finding them is refusing them by their path).
TEST(PlanCli, APlanFilesRelativeGemmRatesAreReadFromBesideIt) {
    const std::string plan = std::string(kModel) + " --gpus 8 --tp 2 --pp 2";
    const auto folder = testing::process_temp_path("plan_beside");
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "rates.csv") << "m,n,k,tflops\n512,1536,1024,600\n";
    std::ofstream(folder / "plan.toml") << "[cluster]\ngemm_rates = \"rates.csv\"\n";
    const auto beside = run_pipelens(plan + " " + (folder / "plan.toml").string());
    EXPECT_EQ(beside.exit_code, 2);
    EXPECT_NE(beside.err.find((folder / "rates.csv").string() + " has no rate for the "),
              std::string::npos)
        << beside.err;
    std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace pipelens
