// The device-generic pieces of a run on this (CPU-only) build: the host timer gives back exactly
// the times it was given, the CPU sampler reads the rank's MemoryAccount, the CUDA ones say they
// were not built, `--device` resolves to the CPU by default and refuses CUDA naming this
// LibTorch, and placing a model or batch on the CPU leaves every tensor as it was.
#include "engine/runtime/device_timing.hpp"
#include "engine/runtime/device_placement.hpp"

#include <gtest/gtest.h>

#include <torch/version.h>

#include "tests/thrown_message.hpp"

namespace pipelens::runtime {
namespace {

TEST(DeviceTiming, HostTimerSpansAreTheHostTimesGiven) {
    HostActionTimer timer;
    const std::size_t first = timer.begin(100);
    const std::size_t second = timer.begin(250);
    timer.end(second, 400);
    timer.end(first, 200);
    EXPECT_EQ(first, 0u);
    EXPECT_EQ(second, 1u);
    EXPECT_EQ(timer.spans(), (std::vector<TimedSpan>{{100, 200}, {250, 400}}));
    EXPECT_EQ(timer.describe(), "host clock");
}

TEST(DeviceTiming, CpuTimerIsTheHostsAndCpuMemoryIsTheRanksAccount) {
    const auto timer = make_action_timer(c10::Device(c10::kCPU), std::chrono::steady_clock::now());
    EXPECT_EQ(timer->describe(), "host clock");
    MemoryAccountHandle account;
    account->charge(1000);
    account->mark();
    account->charge(500);
    account->refund(300);
    const auto memory = make_device_memory(c10::Device(c10::kCPU), *account);
    const MemorySample sample = memory->sample();
    EXPECT_EQ(sample.allocated_bytes, 1200);
    EXPECT_EQ(sample.reserved_bytes, 1200);
    EXPECT_EQ(sample.peak_allocated_bytes, 1500);
    memory->mark();
    EXPECT_EQ(memory->sample().peak_allocated_bytes, 1200);
}

// What a GPU allocator held before the recorded steps (weights, workspaces) is not charged to
// them: samples count from the baseline taken when the wrapper was made, and a step that frees
// some of what was held before it reads zero, not a negative size.
TEST(DeviceTiming, MemoryAboveBaselineCountsFromWhatWasHeldWhenMade) {
    MemoryAccountHandle account;
    account->charge(4000);  // held before the steps
    const auto device = make_device_memory(c10::Device(c10::kCPU), *account);
    MemoryAboveBaseline steps(*device);
    EXPECT_EQ(steps.baseline_bytes(), 4000);
    EXPECT_EQ(steps.sample().allocated_bytes, 0);
    steps.mark();
    account->charge(700);
    account->refund(200);
    const MemorySample sample = steps.sample();
    EXPECT_EQ(sample.allocated_bytes, 500);
    EXPECT_EQ(sample.reserved_bytes, 500);
    EXPECT_EQ(sample.peak_allocated_bytes, 700);
    account->refund(3000);  // the last step's gradients, freed
    steps.mark();
    EXPECT_EQ(steps.sample().allocated_bytes, 0);
    EXPECT_EQ(steps.sample().peak_allocated_bytes, 0);
    EXPECT_EQ(steps.describe(), device->describe() + ", above its baseline");
}

TEST(DeviceTiming, CudaTimingSaysItWasNotBuiltWithoutACudaLibTorch) {
    if (device_timing_built_with_cuda())
        GTEST_SKIP() << "this build has the CUDA timer";
    MemoryAccountHandle account;
    EXPECT_EQ(testing::required_message<std::runtime_error>([] {
                  make_action_timer(c10::Device("cuda:0"), std::chrono::steady_clock::now());
              }),
              "CUDA-event timing for cuda:0 was not built (this LibTorch has no CUDA)");
    EXPECT_EQ(testing::required_message<std::runtime_error>(
                  [&] { make_device_memory(c10::Device("cuda:1"), *account); }),
              "CUDA memory statistics for cuda:1 were not built (this LibTorch has no CUDA)");
}

TEST(DevicePlacement, ThisBuildResolvesToTheCpuAndRefusesCudaNamingItsLibTorch) {
    if (runtime_device_facts(-1).build_has_cuda)
        GTEST_SKIP() << "this LibTorch has CUDA";
    EXPECT_EQ(resolve_run_device("", -1), "cpu");
    EXPECT_EQ(resolve_run_device("cpu", 3), "cpu");
    EXPECT_EQ(testing::required_message<DeviceChoiceError>([] { resolve_run_device("cuda", -1); }),
              std::string("--device cuda: this build of pipelens-runtime has no CUDA (LibTorch ") +
                  TORCH_VERSION +
                  " CPU); give --device cpu, or build pipelens against a CUDA "
                  "LibTorch");
    EXPECT_EQ(testing::required_message<DeviceChoiceError>([] { resolve_run_device("gpu", -1); }),
              "--device 'gpu': expected cpu, cuda or cuda:N (N a GPU index: 0, 1, ...)");
}

TEST(DevicePlacement, TorchDeviceReadsResolvedTexts) {
    EXPECT_EQ(torch_device(""), c10::Device(c10::kCPU));
    EXPECT_EQ(torch_device("cpu"), c10::Device(c10::kCPU));
    EXPECT_EQ(torch_device("cuda:1"), c10::Device(c10::DeviceType::CUDA, 1));
}

TEST(DevicePlacement, OnTheCpuModelAndBatchStayTheSameTensors) {
    ModelSpec spec;
    spec.name = "example";
    spec.layers = 2;
    spec.hidden = 8;
    PipelineModel model = build_model(spec, 2);
    ASSERT_FALSE(model.buffers.empty());  // example carries a constant across its boundary
    const void* weight = model.layers[0].parameters[0].data_ptr();
    const void* constant = model.buffers[0].data_ptr();
    Batch batch;
    std::tie(batch.whole_inputs, batch.whole_target) = model.make_batch(4, 0);
    const void* input = batch.whole_inputs[0].data_ptr();
    place_model(model, c10::Device(c10::kCPU));
    place_batch(batch, c10::Device(c10::kCPU));
    EXPECT_EQ(model.layers[0].parameters[0].data_ptr(), weight);
    EXPECT_EQ(model.buffers[0].data_ptr(), constant);
    EXPECT_EQ(batch.whole_inputs[0].data_ptr(), input);
    EXPECT_TRUE(model.layers[0].parameters[0].requires_grad());
}

}  // namespace
}  // namespace pipelens::runtime
