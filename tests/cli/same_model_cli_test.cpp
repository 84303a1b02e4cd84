// Comparing one model across schedules from the command line, and the flags that would make a
// comparison wrong without saying so: costs per stage, per model and per layer at v = 1 and 2,
// the note flat per-stage costs get at v > 1, a transformer given as flags, times beside a
// transformer, a schedule given twice, a sweep axis beside the flag it contradicts, and a pipeline
// too large for this machine refused up front with its own exit code.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;
using testing::temp_file;

// Busy time of rank 0: with the same model, every schedule of one pp computes the same work.
std::int64_t rank_zero_busy_ns(const std::string& arguments) {
    const auto result = run_pipelens("simulate " + arguments + " --json");
    EXPECT_EQ(result.exit_code, 0) << arguments << ": " << result.err;
    if (result.exit_code != 0)
        return -1;
    return nlohmann::json::parse(result.out)["ranks"][0]["busy_ns"].get<std::int64_t>();
}

TEST(SameModelCli, PerModelCostsGiveEveryScheduleOfOnePpTheSameWork) {
    // 4 ms of forward, 4 ms of input and of weight gradient for the whole model, pp=4, m=16: a
    // rank computes a quarter of it per microbatch, 3 ms, whether it runs one stage or two.
    const std::string model =
        "--pp 4 --m 16 --f 4ms --i 4ms --w 4ms --costs-per model --overlap-efficiency 0";
    for (const char* kind : {"1F1B", "Interleaved1F1B", "ZBVZeroBubble", "DualPipeV",
                             "InterleavedZeroBubble", "ZeroBubbleAuto"})
        EXPECT_EQ(rank_zero_busy_ns(std::string("--schedule ") + kind + " " + model),
                  16 * 3'000'000)
            << kind;
}

TEST(SameModelCli, PerStageCostsAtVTwoSayTheyDoubleTheModel) {
    const auto result =
        run_pipelens("simulate --schedule ZBVZeroBubble --pp 4 --m 16 --f 1ms --i 1ms --w 1ms");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("note: costs are per stage: with v=2 each rank runs 2 stages, so a "
                              "rank computes 2 x the given F, I and W"),
              std::string::npos)
        << result.out;
    const auto plain = run_pipelens("simulate --schedule 1F1B --pp 4 --m 16 --f 1ms");
    EXPECT_EQ(plain.out.find("note:"), std::string::npos) << plain.out;
}

TEST(SameModelCli, PerLayerCostsMultiplyEachStagesLayers) {
    // 12 layers over 1F1B pp=4 (3 per stage) and ZBV pp=4 v=2 (2, 2, 2, 2, 1, 1, 1, 1: stages
    // 0..3 get the remainder; rank 0 runs stages 0 and 7): 3 layers per rank either way.
    const std::string costs = "--m 8 --f 1ms --i 1ms --w 1ms --costs-per layer --layers 12";
    EXPECT_EQ(rank_zero_busy_ns("--schedule 1F1B --pp 4 " + costs), 8 * 9'000'000);
    EXPECT_EQ(rank_zero_busy_ns("--schedule ZBVZeroBubble --pp 4 " + costs), 8 * 9'000'000);
    const auto missing =
        run_pipelens("simulate --schedule 1F1B --pp 4 --m 8 --f 1ms --costs-per layer");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.err,
              "pipelens: command line: model.layers: missing: costs.per = \"layer\" needs the "
              "model's layer count ([model] layers, or --layers)\n");
    const auto bad = run_pipelens("simulate --costs-per rank");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--costs-per: 'rank' is not a cost scope"), std::string::npos)
        << bad.err;
}

TEST(SameModelCli, SweepOverKindsComparesOneModelPerModel) {
    const auto result = run_pipelens(
        "sweep --f 4ms --i 4ms --w 4ms --m 16 --costs-per model --overlap-efficiency 0 "
        "--sweep kind=1F1B,Interleaved1F1B,ZBVZeroBubble,DualPipeV,ZeroBubbleAuto --json -");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    std::map<std::string, std::int64_t> step;
    for (const auto& row : json["configurations"])
        step[row["schedule"].get<std::string>()] = row["step_time_ns"].get<std::int64_t>();
    ASSERT_EQ(step.size(), 5u) << result.out;
    // 1F1B: (m + pp - 1) (F + I + W) per stage = 19 x 3 ms; the zero-bubble kinds fill most of
    // that bubble, so they come out ahead once the model is the same.
    EXPECT_EQ(step["1F1B"], 19 * 3'000'000);
    EXPECT_LT(step["ZBVZeroBubble"], step["1F1B"]);
    EXPECT_LT(step["ZeroBubbleAuto"], step["1F1B"]);
    EXPECT_LT(step["Interleaved1F1B"], step["1F1B"]);
}

TEST(SameModelCli, TransformerFlagsDescribeTheModelAndTimesBesideItAreRefused) {
    const std::string flags =
        "--schedule 1F1B --pp 4 --m 8 --layers 32 --hidden 4096 --heads 32 --sequence 4096 "
        "--device-tflops 400";
    const auto result = run_pipelens("simulate " + flags + " --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    // 8 layers per stage: F = 8 sbh(24h + 4s) FLOPs at 400 TFLOP/s.
    const double sbh = 4096.0 * 4096.0;
    const auto forward_ns = static_cast<std::int64_t>(8 * sbh * (24 * 4096.0 + 4 * 4096) / 4e5);
    EXPECT_NEAR(json["ranks"][0]["busy_ns"].get<double>(),
                8 * (forward_ns * (1 + (24 + 8.0) / 28 + 24.0 / 28)), 8 * 3.0);
    EXPECT_GT(json["ranks"][0]["peak_memory_bytes"].get<std::int64_t>(), 0);

    const auto mixed = run_pipelens("simulate " + flags + " --f 1ms");
    EXPECT_EQ(mixed.exit_code, 2);
    EXPECT_EQ(mixed.err,
              "pipelens: --f: the transformer flags (--hidden, ...) describe every stage's F, I "
              "and W; give stage times or a model, not both (drop --f, or leave the model "
              "out)\n");
}

TEST(SameModelCli, AStageTimeFlagBesideATransformerFileIsRefusedNamingBoth) {
    const auto file = temp_file("t7b.toml",
                                "[schedule]\nkind = \"1F1B\"\npp = 4\nm = 8\n[transformer]\n"
                                "layers = 32\nhidden = 4096\nsequence = 4096\nheads = 32\n"
                                "device_tflops = 400\n");
    const auto result = run_pipelens("simulate " + file.string() + " --f 1ms");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: --f: " + file.string() +
                              " has a [transformer] section, which derives every stage's F, I and "
                              "W; give stage times or a model, not both (drop --f, or leave the "
                              "model out)\n");
    // A transformer flag edits the file's transformer instead.
    const auto edited = run_pipelens("simulate " + file.string() + " --hidden 2048 --json");
    EXPECT_EQ(edited.exit_code, 0) << edited.err;
}

TEST(SameModelCli, ContradictoryScheduleFlagsAreRefusedNamingBoth) {
    const auto csv = temp_file("two.csv", "0F0,0B0\n1F0,1B0\n");
    const auto both = run_pipelens("simulate --schedule 1F1B --schedule-file " + csv.string());
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_EQ(both.err, "pipelens: --schedule 1F1B and --schedule-file " + csv.string() +
                            " both give the schedule: keep one (a CSV schedule says its own "
                            "order; --schedule generates one)\n");
    const auto sweep = run_pipelens("sweep --sweep pp=4,8 --pp 8 --m 8");
    EXPECT_EQ(sweep.exit_code, 2);
    EXPECT_EQ(sweep.err,
              "pipelens sweep: --pp fixes schedule.pp while --sweep pp=4,8 sweeps it: "
              "keep one (drop --pp to sweep it, or the axis to fix it)\n");
    const auto cost = run_pipelens("sweep --sweep f=1ms,2ms --f 3ms --m 8");
    EXPECT_EQ(cost.exit_code, 2);
    EXPECT_NE(cost.err.find("--f fixes costs.f while --sweep f=1ms,2ms sweeps it"),
              std::string::npos)
        << cost.err;
}

TEST(SameModelCli, APipelineTooLargeForThisMachineIsRefusedAtOnceWithExitThree) {
    const auto result = run_pipelens("simulate --schedule GPipe --pp 20000 --m 20000");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_NE(result.err.find("pipelens: GPipe pp=20000 v=1 m=20000 is too large for this "
                              "machine: up to 2.8e+09 actions, which need about "),
              std::string::npos)
        << result.err;
    EXPECT_EQ(result.out, "");
    const auto schedule = run_pipelens("schedule --kind GPipe --pp 20000 --m 20000");
    EXPECT_EQ(schedule.exit_code, 3) << schedule.err;
    // In a sweep the configuration is one refused row, not the end of the sweep.
    const auto sweep = run_pipelens("sweep --sweep m=8,20000 --pp 20000 --schedule GPipe --json -");
    EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
}

}  // namespace
}  // namespace pipelens
