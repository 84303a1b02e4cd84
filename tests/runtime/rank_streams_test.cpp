// A rank's streams on the CPU, where there are none: no stream is made current and a hand-over
// of CPU tensors waits for nothing and touches nothing (every local-transport run of
// pipeline_run_test.cpp runs with them in place). What they do on a GPU is checked there
// (scripts/device/check.sh, docs/device.md "Streams: what a GPU run must show").
#include <gtest/gtest.h>

#include "engine/runtime/rank_streams.hpp"

namespace pipelens::runtime {
namespace {

TEST(RankStreams, TheCpuHasNoComputeStream) {
    const RankComputeStream compute(c10::Device(c10::kCPU));
    EXPECT_FALSE(compute.stream().has_value());
}

TEST(RankStreams, AHandOverOfCpuTensorsWaitsForNothing) {
    const TensorList tensors{torch::ones({4}), torch::arange(3)};
    const void* data = tensors[0].data_ptr();
    const StreamHandOver handover = StreamHandOver::after_current_work(tensors);
    EXPECT_FALSE(handover.waits());
    handover.before_use_on_current_stream(tensors);
    EXPECT_EQ(tensors[0].data_ptr(), data);
    EXPECT_TRUE(tensors[0].equal(torch::ones({4})));
    EXPECT_FALSE(StreamHandOver::after_current_work({}).waits());
    EXPECT_FALSE(StreamHandOver::after_current_work({torch::Tensor()}).waits());
}

}  // namespace
}  // namespace pipelens::runtime
