// `pipelens partition` and the sweep's ranking heading end to end: the printed split, its flags
// and layout string with exact values, and the refusal of a model with fewer layers than stages
// or a device speed or head count no model has.
#include <gtest/gtest.h>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

TEST(PartitionCli, PrintsTheSplitItsFlagsAndItsMegatronLayout) {
    const auto result = run_pipelens(
        "partition --schedule 1F1B --pp 4 --m 8 --layers 10 --hidden 1024 --sequence 1024 "
        "--heads 16 --device-tflops 100");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out,
              "partition of 10 layers over 4 stages (1F1B pp=4 v=1 m=8)\n"
              "stage  layers  even  first layer\n"
              "    0       3     3  layers.0\n"
              "    1       3     3  layers.3\n"
              "    2       2     2  layers.6\n"
              "    3       2     2  layers.8\n"
              "predicted step: 26.156 ms against 26.156 ms for the even split (0.0% faster)\n"
              "optimal: no split simulates faster (0 splits simulated, 6 partial splits "
              "bounded)\n"
              "pipelens run: --split layers.3 --split layers.6 --split layers.8\n"
              "Megatron-LM: --pipeline-model-parallel-layout \"Et*3|t*3|t*2|t*2L\"\n");
}

TEST(PartitionCli, RefusesFewerLayersThanStagesAsAUsageError) {
    const auto result = run_pipelens(
        "partition --schedule 1F1B --pp 4 --m 8 --layers 3 --hidden 64 --sequence 64 --heads 4 "
        "--device-tflops 100");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("pipelens: partition: 3 layers cannot fill 4 stages (pp 4 x v 1): "
                              "every stage needs a layer"),
              std::string::npos)
        << result.err;
}

// A device speed that is not a positive finite number is bad input, refused naming the field,
// as simulate refuses it: -5 and inf once predicted a 0 ns step with exit 0, 0 and nan were "too
// large" (exit 3). So are heads that do not divide the hidden size, which plan refuses too.
TEST(PartitionCli, RefusesADeviceSpeedOrHeadsNoModelHas) {
    const std::string model =
        "--schedule 1F1B --pp 4 --m 8 --layers 10 --hidden 1024 --sequence 1024 ";
    for (const char* tflops : {"-5", "inf", "0", "nan"})
        for (const char* command : {"partition ", "simulate "}) {
            SCOPED_TRACE(std::string(command) + tflops);
            const auto result =
                run_pipelens(command + model + "--heads 16 --device-tflops " + tflops);
            EXPECT_EQ(result.exit_code, 2) << result.out;
            EXPECT_NE(result.err.find("transformer.device_tflops: must be a positive finite "
                                      "number"),
                      std::string::npos)
                << result.err;
        }
    const auto heads = run_pipelens("partition " + model + "--heads 7 --device-tflops 100");
    EXPECT_EQ(heads.exit_code, 2) << heads.out;
    EXPECT_NE(heads.err.find("transformer.heads: 7 heads do not divide the hidden size 1024"),
              std::string::npos)
        << heads.err;
}

// Its tables grow with layers squared: 100,000 layers once took 23 GB before the OOM killer.
TEST(PartitionCli, RefusesMoreLayersThanItsTablesCanHoldAsTooLarge) {
    const auto result = run_pipelens(
        "partition --schedule 1F1B --pp 64 --m 64 --layers 100000 --hidden 64 --sequence 64 "
        "--heads 4 --device-tflops 100");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err,
              "pipelens: partition: 100000 layers are more than the search takes (4096): it "
              "prices every run of consecutive layers as a stage, a table of layers squared (4096 "
              "layers: about 1.3 GB, and a search that grows with the stages)\n");
}

TEST(SweepRankingCli, WholeModelCostsAndAGlobalBatchRankByTheStep) {
    const auto result = run_pipelens(
        "sweep --sweep kind=1F1B --sweep pp=4,8 --sweep m=8,64 --costs-per model --f 64us "
        "--i 64us --w 64us --global-batch 64");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string printed = result.out + result.err;
    EXPECT_NE(printed.find("ranked by time per global batch (the step): the model and the global "
                           "batch stay fixed across the grid"),
              std::string::npos)
        << printed;
}

}  // namespace
}  // namespace pipelens
