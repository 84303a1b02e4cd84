// `--device`: the texts it accepts, the exact messages for those it does not, how a choice
// resolves against what the runtime sees (a CPU-only LibTorch, no GPU, too few GPUs), and the
// note that local ranks share one GPU.
#include "engine/stage_plan/device_choice.hpp"

#include <gtest/gtest.h>

#include "tests/thrown_message.hpp"

namespace pipelens::runtime {
namespace {

using Kind = DeviceChoice::Kind;

TEST(DeviceChoice, ParsesCpuCudaAndCudaWithAnIndex) {
    EXPECT_EQ(parse_device_choice("cpu"), (DeviceChoice{Kind::cpu, std::nullopt}));
    EXPECT_EQ(parse_device_choice("cuda"), (DeviceChoice{Kind::cuda, std::nullopt}));
    EXPECT_EQ(parse_device_choice("cuda:0"), (DeviceChoice{Kind::cuda, 0}));
    EXPECT_EQ(parse_device_choice("cuda:12"), (DeviceChoice{Kind::cuda, 12}));
}

TEST(DeviceChoice, TextRoundTrips) {
    for (const std::string text : {"cpu", "cuda", "cuda:3"})
        EXPECT_EQ(to_string(parse_device_choice(text)), text);
    EXPECT_EQ(to_string(DeviceChoice{}), "auto");
}

TEST(DeviceChoice, RefusesOtherTextNamingTheFlagAndWhatItAccepts) {
    for (const std::string text : {"gpu", "cuda:-1", "cuda:x", "cuda:", "CUDA", "cuda:+1",
                                   "cuda: 1", "cuda:1x", "cpu:0", "", "cuda:99999999999"})
        EXPECT_EQ(
            testing::required_message<DeviceChoiceError>([&] { parse_device_choice(text); }),
            "--device '" + text + "': expected cpu, cuda or cuda:N (N a GPU index: 0, 1, ...)")
            << text;
}

DeviceFacts cpu_build() {
    DeviceFacts facts;
    facts.torch_version = "1.13.1";
    return facts;
}

DeviceFacts gpus(int count, int local_rank = -1) {
    DeviceFacts facts;
    facts.build_has_cuda = true;
    facts.torch_version = "2.11.0";
    facts.gpu_count = count;
    facts.local_rank = local_rank;
    return facts;
}

TEST(DeviceChoice, DefaultIsTheGpuWhereOneIsSeenElseTheCpu) {
    EXPECT_EQ(resolve_device(DeviceChoice{}, cpu_build()), "cpu");
    EXPECT_EQ(resolve_device(DeviceChoice{}, gpus(0)), "cpu");
    EXPECT_EQ(resolve_device(DeviceChoice{}, gpus(2)), "cuda:0");
    EXPECT_EQ(resolve_device(DeviceChoice{}, gpus(2, 1)), "cuda:1");
}

TEST(DeviceChoice, CudaTakesTheLocalRanksGpuAndAnIndexWinsOverIt) {
    EXPECT_EQ(resolve_device(parse_device_choice("cuda"), gpus(1)), "cuda:0");
    EXPECT_EQ(resolve_device(parse_device_choice("cuda"), gpus(4, 3)), "cuda:3");
    EXPECT_EQ(resolve_device(parse_device_choice("cuda:1"), gpus(4, 3)), "cuda:1");
    EXPECT_EQ(resolve_device(parse_device_choice("cpu"), gpus(4, 3)), "cpu");
}

TEST(DeviceChoice, CudaWithoutCudaInTheBuildSaysSoWithTheLibTorchVersion) {
    EXPECT_EQ(testing::required_message<DeviceChoiceError>(
                  [] { resolve_device(parse_device_choice("cuda:0"), cpu_build()); }),
              "--device cuda:0: this build of pipelens-runtime has no CUDA (LibTorch 1.13.1 CPU); "
              "give --device cpu, or build pipelens against a CUDA LibTorch");
}

TEST(DeviceChoice, CudaWithoutAGpuNamesCudaVisibleDevices) {
    EXPECT_EQ(testing::required_message<DeviceChoiceError>(
                  [] { resolve_device(parse_device_choice("cuda"), gpus(0)); }),
              "--device cuda: no GPU seen (CUDA_VISIBLE_DEVICES unset); give --device cpu");
    DeviceFacts hidden = gpus(0);
    hidden.cuda_visible_devices = "";
    EXPECT_EQ(testing::required_message<DeviceChoiceError>(
                  [&] { resolve_device(parse_device_choice("cuda"), hidden); }),
              "--device cuda: no GPU seen (CUDA_VISIBLE_DEVICES=); give --device cpu");
    hidden.cuda_visible_devices = "7";
    EXPECT_EQ(testing::required_message<DeviceChoiceError>(
                  [&] { resolve_device(parse_device_choice("cuda"), hidden); }),
              "--device cuda: no GPU seen (CUDA_VISIBLE_DEVICES=7); give --device cpu");
}

TEST(DeviceChoice, AnIndexBeyondTheGpusNamesTheirCount) {
    EXPECT_EQ(testing::required_message<DeviceChoiceError>(
                  [] { resolve_device(parse_device_choice("cuda:1"), gpus(1)); }),
              "--device cuda:1: only 1 GPU is seen (cuda:0)");
    EXPECT_EQ(testing::required_message<DeviceChoiceError>(
                  [] { resolve_device(parse_device_choice("cuda:4"), gpus(2)); }),
              "--device cuda:4: only 2 GPUs are seen (cuda:0..cuda:1)");
    EXPECT_EQ(
        testing::required_message<DeviceChoiceError>(
            [] { resolve_device(DeviceChoice{}, gpus(2, 2)); }),
        "--device cuda (the default where a GPU is seen): the rank with LOCAL_RANK 2 takes "
        "cuda:2, but only 2 GPUs are seen (cuda:0..cuda:1); start at most 2 ranks per host, or "
        "give every rank --device cuda:N");
}

TEST(DeviceChoice, OnlyLocalRanksOnAGpuAreToldTheyShareIt) {
    EXPECT_EQ(shared_device_note("local", "cuda:0", 4),
              "the 4 ranks share one GPU (cuda:0): --transport local runs them as threads of one "
              "process, so their computations and memory compete, and each rank's memory figures "
              "are the whole GPU's (the CUDA caching allocator counts per device, not per rank); "
              "give --transport nccl (or gloo) --nproc 4 for a GPU per rank");
    EXPECT_EQ(shared_device_note("local", "cuda:0", 1), std::nullopt);
    EXPECT_EQ(shared_device_note("local", "cpu", 4), std::nullopt);
    EXPECT_EQ(shared_device_note("nccl", "cuda:0", 4), std::nullopt);
}

}  // namespace
}  // namespace pipelens::runtime
