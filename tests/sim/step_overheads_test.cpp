// The byte counts of sim/step_overheads.hpp on a shape small enough to count by hand: s = 4,
// h = 8, a = 2, b = 1, tp = 2, V = 24. Then E = s b h = 32 elements, one GPU's attention scores
// S/tp = a s^2 b / tp = 16, its logits L = s b V / tp = 48; bf16 elements are 2 bytes, fp32 4,
// dropout masks 1.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/step_overheads.hpp"

namespace pipelens::sim {
namespace {

const GptShape kShape{1, 8, 2, 4, 24};

TEST(StepOverheads, DtypesGiveTheirBytesPeakAndShardingName) {
    EXPECT_EQ(dtype_element_bytes(DType::fp32), 4);
    EXPECT_EQ(dtype_element_bytes(DType::bf16), 2);
    EXPECT_EQ(dtype_element_bytes(DType::fp16), 2);
    EXPECT_EQ(dtype_peak_tflops(312, DType::fp32), 156);  // A100: TF32 dense
    EXPECT_EQ(dtype_peak_tflops(312, DType::bf16), 312);
    EXPECT_EQ(dtype_peak_tflops(989, DType::fp16), 989);
    EXPECT_STREQ(sharding_dtype(DType::fp32), "f32");
    EXPECT_STREQ(sharding_dtype(DType::fp16), "f16");
    EXPECT_EQ(parse_dtype("fp16"), DType::fp16);
    EXPECT_STREQ(dtype_name(parse_dtype("fp32")), "fp32");
    EXPECT_THROW(parse_dtype("fp64"), std::invalid_argument);
}

TEST(StepOverheads, LayerMemoryBoundBytesCountEachKernelsReadsAndWrites) {
    // Forward (10E + 8E/tp + 3.5S/tp) elements = 320 + 128 + 56 = 504 (the causal softmax reads
    // the lower triangle, S/2, and writes all S); masks 2E + S/tp = 80. Backward
    // (10E + 12E/tp + 4S/tp) = 320 + 192 + 64 = 576; the masks read again, 80.
    const PassBytes bf16 = layer_memory_bound_bytes(kShape, 1, 2, DType::bf16, Attention::unfused);
    EXPECT_EQ(bf16.forward, 504 * 2 + 80);
    EXPECT_EQ(bf16.backward, 576 * 2 + 80);
    const PassBytes fp32 = layer_memory_bound_bytes(kShape, 1, 2, DType::fp32, Attention::unfused);
    EXPECT_EQ(fp32.forward, 504 * 4 + 80);
    EXPECT_EQ(fp32.backward, 576 * 4 + 80);
    // Twice the microbatch, twice every byte.
    EXPECT_EQ(layer_memory_bound_bytes(kShape, 2, 2, DType::bf16, Attention::unfused).forward,
              2 * bf16.forward);
    // Selective recompute repeats the softmax and its dropout: 3.5S/tp elements, S/tp mask bytes.
    EXPECT_EQ(selective_recompute_bytes(kShape, 1, 2, DType::bf16, Attention::unfused),
              56 * 2 + 16);
    // Fused attention writes no scores: forward 10E + 8E/tp = 448 elements and 2E = 64 mask
    // bytes, backward 10E + 12E/tp = 512 and the masks again; selective recompute repeats nothing.
    const PassBytes flash = layer_memory_bound_bytes(kShape, 1, 2, DType::bf16, Attention::flash);
    EXPECT_EQ(flash.forward, 448 * 2 + 64);
    EXPECT_EQ(flash.backward, 512 * 2 + 64);
    EXPECT_EQ(selective_recompute_bytes(kShape, 1, 2, DType::bf16, Attention::flash), 0);
}

TEST(StepOverheads, EagerLayerPassesCountTheKernelsOfTheirOwn) {
    // E = 32, E/tp = 16. Forward: the QKV bias added after its matmul, 6E/tp = 96, and unfused
    // attention's context copy, 2E/tp = 32: 128 elements. Input gradient: the q, k, v gradients
    // concatenated, 6E/tp = 96. Weight gradient: the bias sums 7E/tp + 2E = 176 and the layer
    // norms' gamma/beta reads 4E = 128: 304.
    const LayerPassBytes unfused =
        eager_layer_pass_bytes(kShape, 1, 2, DType::bf16, Attention::unfused);
    EXPECT_EQ(unfused.forward, 128 * 2);
    EXPECT_EQ(unfused.input, 96 * 2);
    EXPECT_EQ(unfused.weight, 304 * 2);
    // Under fused attention neither layout copy: the bias add alone forward, no input part.
    const LayerPassBytes flash =
        eager_layer_pass_bytes(kShape, 1, 2, DType::bf16, Attention::flash);
    EXPECT_EQ(flash.forward, 96 * 2);
    EXPECT_EQ(flash.input, 0);
    EXPECT_EQ(flash.weight, 304 * 2);
    // fp32 doubles every byte; sequence parallelism splits the replicated 6E of the weight part
    // over tp: 7E/tp + 2E/tp + 4E/tp = 112 + 32 + 64 = 208.
    EXPECT_EQ(eager_layer_pass_bytes(kShape, 1, 2, DType::fp32, Attention::unfused).weight,
              304 * 4);
    const LayerPassBytes split =
        eager_layer_pass_bytes(kShape, 1, {2, true}, DType::bf16, Attention::unfused);
    EXPECT_EQ(split.forward, unfused.forward);
    EXPECT_EQ(split.weight, 208 * 2);
}

TEST(StepOverheads, SequenceParallelismSplitsTheReplicatedElementWiseWorkOverTp) {
    // The layer norms and bias-dropout-residual adds on E/tp = 16 elements each GPU: forward
    // 10 x 16 + 8E/tp + 3.5S/tp = 160 + 128 + 56 = 344 elements, masks 2 x 16 + S/tp = 48
    // bytes; backward 160 + 192 + 64 = 416 elements and the masks again.
    const PassBytes layer =
        layer_memory_bound_bytes(kShape, 1, {2, true}, DType::bf16, Attention::unfused);
    EXPECT_EQ(layer.forward, 344 * 2 + 48);
    EXPECT_EQ(layer.backward, 416 * 2 + 48);
    // The embedding's dropout after the scatter: 3E + (2E + mask E)/tp; the final norm's 2E, 3E
    // over tp, the logits' cross entropy as without.
    const PassBytes embedding = embedding_bytes(kShape, 1, {2, true}, DType::bf16);
    EXPECT_EQ(embedding.forward, 3 * 32 * 2 + 2 * 16 * 2 + 16);
    EXPECT_EQ(embedding.backward, embedding.forward);
    const PassBytes output = output_layer_bytes(kShape, 1, {2, true}, DType::bf16);
    EXPECT_EQ(output.forward, 2 * 16 * 2 + 38 * 48);
    EXPECT_EQ(output.backward, 3 * 16 * 2 + 14 * 48);
}

TEST(StepOverheads, EmbeddingAndOutputLayerBytes) {
    const PassBytes embedding = embedding_bytes(kShape, 1, 1, DType::bf16);
    EXPECT_EQ(embedding.forward, 5 * 32 * 2 + 32);
    EXPECT_EQ(embedding.backward, 5 * 32 * 2 + 32);
    // Final norm 2E forward, 3E backward in the dtype; the cross entropy in fp32 over the
    // L = 48 logits: cast 2 + 4, max 4, subtract 8, exp 8, sum 4, divide 8 = 38 bytes each
    // forward; multiply 8 and cast back 4 + 2 = 14 backward.
    const PassBytes output = output_layer_bytes(kShape, 1, 2, DType::bf16);
    EXPECT_EQ(output.forward, 2 * 32 * 2 + 38 * 48);
    EXPECT_EQ(output.backward, 3 * 32 * 2 + 14 * 48);
    // In fp32 there is no cast: 32 and 8 bytes per logit.
    const PassBytes fp32 = output_layer_bytes(kShape, 1, 2, DType::fp32);
    EXPECT_EQ(fp32.forward, 2 * 32 * 4 + 32 * 48);
    EXPECT_EQ(fp32.backward, 3 * 32 * 4 + 8 * 48);
}

TEST(StepOverheads, GradientAccumulationAndOptimizerBytesPerParameter) {
    EXPECT_EQ(gradient_accumulation_bytes(1000, DType::bf16), 10000);  // 2 + 8
    EXPECT_EQ(gradient_accumulation_bytes(1000, DType::fp32), 12000);  // 4 + 8
    // Adam 28 and the gradient norm 4; 16-bit adds the copy to the model's weights (6), fp16
    // the unscale (8), gradients kept in the dtype their cast to fp32 (6).
    EXPECT_EQ(optimizer_step_bytes(1000, DType::fp32, false), 32000);
    EXPECT_EQ(optimizer_step_bytes(1000, DType::bf16, false), 38000);
    EXPECT_EQ(optimizer_step_bytes(1000, DType::fp16, false), 46000);
    EXPECT_EQ(optimizer_step_bytes(1000, DType::fp16, true), 52000);
    EXPECT_EQ(optimizer_step_bytes(1000, DType::bf16, true), 44000);
    EXPECT_EQ(optimizer_step_bytes(1000, DType::fp32, true), 32000);
}

TEST(StepOverheads, MemoryTimeIsBytesOverBandwidthRoundedUp) {
    EXPECT_EQ(memory_ns(1000, 2), 500);
    EXPECT_EQ(memory_ns(1001, 2), 501);
    EXPECT_EQ(memory_ns(0, 2), 0);
}

TEST(StepOverheads, WeightBytesFollowTheElementSize) {
    EXPECT_EQ(weight_and_optimizer_bytes(1000, 4, false, 2), 18000);
    EXPECT_EQ(weight_and_optimizer_bytes(1000, 4, true, 2), 9000);    // 6 + 12/4
    EXPECT_EQ(weight_and_optimizer_bytes(1000, 4, false, 4), 16000);  // 4 + 4 + 8
    EXPECT_EQ(weight_and_optimizer_bytes(1000, 4, true, 4), 10000);   // 8 + 8/4
    EXPECT_EQ(weight_and_optimizer_bytes(1000, 4, true, 2),
              weight_and_optimizer_bytes(1000, 4, true));
}

}  // namespace
}  // namespace pipelens::sim
