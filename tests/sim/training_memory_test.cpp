// The training-memory closed forms against published figures: GPT-3 175B's parameter count
// (Brown et al., 2020: 175B; Megatron's count of the same shape), Korthikanti et al. (2022)'s
// table 2 ratios (sequence parallel + selective recompute keeps 34/t of sbh per layer, 5x less
// than tensor parallel alone at t = 8 for GPT-3), and Megatron's 18 and 6 + 12/d bytes per
// parameter.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/training_memory.hpp"

namespace pipelens::sim {
namespace {

const GptShape kGpt3{96, 12288, 96, 2048, 51200};

TEST(TrainingMemory, Gpt3HasItsPublishedParameterCount) {
    EXPECT_NEAR(gpt_parameter_count(kGpt3) / 1e9, 174.6, 0.05);
    EXPECT_DOUBLE_EQ(gpt_layer_parameter_count(12288), 12.0 * 12288 * 12288 + 13.0 * 12288);
}

TEST(TrainingMemory, BytesPerParameterFollowMixedPrecisionAdamAndZeroOne) {
    EXPECT_EQ(weight_and_optimizer_bytes(1e9, 8, false), 18'000'000'000);
    EXPECT_EQ(weight_and_optimizer_bytes(1e9, 8, true), 7'500'000'000);  // 6 + 12/8
    EXPECT_EQ(weight_and_optimizer_bytes(1e9, 1, true), 18'000'000'000);
}

TEST(TrainingMemory, ActivationsPerLayerFollowKorthikantiTableTwo) {
    const double sbh = 2048.0 * 1 * 12288;
    const double scores = 5.0 * 96 * 2048 / 12288;  // 5as/h = 80
    const auto bytes = [&](int t, Recompute recompute, bool sp) {
        return static_cast<double>(
            layer_activation_bytes(kGpt3, 1, t, recompute, sp, Attention::unfused));
    };
    EXPECT_NEAR(bytes(1, Recompute::none, false), sbh * (34 + scores), 1);
    EXPECT_NEAR(bytes(8, Recompute::none, false), sbh * (10 + 24.0 / 8 + scores / 8), 1);
    EXPECT_NEAR(bytes(8, Recompute::none, true), sbh * (34 + scores) / 8, 1);
    EXPECT_NEAR(bytes(8, Recompute::selective, false), sbh * (10 + 24.0 / 8), 1);
    EXPECT_NEAR(bytes(8, Recompute::selective, true), 34 * sbh / 8, 1);
    EXPECT_NEAR(bytes(8, Recompute::full, false), 2 * sbh, 1);
    EXPECT_NEAR(bytes(8, Recompute::full, true), 2 * sbh / 8, 1);
    // The paper's headline: both techniques together need about 5x less than tensor
    // parallelism alone (GPT-3, t = 8: (10 + 3 + 10) / 4.25 = 5.4).
    EXPECT_NEAR(bytes(8, Recompute::none, false) / bytes(8, Recompute::selective, true), 5.41,
                0.01);
    // Past 2^62 bytes the figure is refused, not rounded (the conversion wrapped to 0 B).
    const GptShape huge{8, 1'000'000'000, 16, 1'000'000'000, 51'200};
    EXPECT_THROW(layer_activation_bytes(huge, 1, 1, Recompute::none, false, Attention::unfused),
                 std::overflow_error);
    EXPECT_THROW(weight_and_optimizer_bytes(gpt_parameter_count(huge), 1, false),
                 std::overflow_error);
    EXPECT_EQ(rounded_bytes(3.0 * (std::int64_t{1} << 60), "x"), std::int64_t{3} << 60);
    EXPECT_THROW(rounded_bytes(4.0 * (std::int64_t{1} << 60), "x"), std::overflow_error);
    // Microbatch size scales it linearly.
    EXPECT_EQ(
        layer_activation_bytes(kGpt3, 4, 8, Recompute::selective, true, Attention::unfused),
        4 * layer_activation_bytes(kGpt3, 1, 8, Recompute::selective, true, Attention::unfused));
}

}  // namespace
}  // namespace pipelens::sim
