// The costs Megatron-LM paid as it ran in 2021 (PlanOptions::blocking_pipeline_transfers,
// embedding_gradient_reduce, attention_matmul_memory, gradients_in_dtype, eager_layer_passes) and
// collectives at NCCL's achieved bus bandwidth (ClusterSpec::intra_host_collective_gb_per_s),
// each on a case small enough that its value follows by hand: the exact nanoseconds, the
// breakdown still adding up to the step, and nothing charged when the option is off.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/gemm_waves.hpp"
#include "sim/parallel_costs.hpp"
#include "sim/training_plan.hpp"
#include "tests/sim/plan_specs.hpp"

namespace pipelens::sim {
namespace {

using testing::small_model;

// Round numbers, so each expected value is exact: 100 GB/s NVLink and 1 us to cross it, 25 GB/s
// between hosts, 5 us per collective, 156,000 FLOP per ns (312 TFLOP/s at half).
ClusterSpec cluster_of(int gpus, double memory_gb_per_s) {
    ClusterSpec cluster = testing::cluster_of(gpus, memory_gb_per_s);
    cluster.links.intra_host_gb_per_s = 100;
    cluster.links.intra_host_latency_us = 1;
    cluster.links.inter_host_gb_per_s = 25;
    cluster.links.inter_host_latency_us = 5;
    cluster.links.collective_latency_us = 5;
    return cluster;
}

PlanOptions plain_options() {
    PlanOptions options = testing::plain_options();
    options.overlap_gradient_reduce = false;
    return options;
}

std::int64_t sum_of_parts(const PlanBreakdown& parts) {
    return parts.compute_ns + parts.wave_quantization_ns + parts.memory_bound_ns +
           parts.eager_passes_ns + parts.attention_memory_ns + parts.embedding_and_output_ns +
           parts.gradient_accumulation_ns + parts.tensor_parallel_ns + parts.pipeline_transfer_ns +
           parts.bubble_ns + parts.data_parallel_ns + parts.embedding_reduce_ns +
           parts.optimizer_ns;
}

TEST(Megatron2021Terms, AttentionMatmulBytesAndFlops) {
    const GptShape shape = small_model().shape;
    // E = 512 x 2 x 1024 = 1,048,576; S / tp = 16 x 512^2 x 2 / 2 = 4,194,304.
    EXPECT_DOUBLE_EQ(attention_matmul_bytes(shape, 2, 2, DType::bf16),
                     (4'194'304 + 1'048'576) * 2.0);
    EXPECT_DOUBLE_EQ(attention_matmul_bytes(shape, 2, 2, DType::fp32),
                     (4'194'304 + 1'048'576) * 4.0);
    EXPECT_DOUBLE_EQ(attention_matmul_flops(shape, 2, 2), 536'870'912.0);
}

TEST(Megatron2021Terms, AttentionMatmulsPayTheirBytesBeyondTheirFlops) {
    const ModelSpec model = small_model();
    const PlanLayout layout{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    PlanOptions options = plain_options();
    options.attention_matmul_memory = true;
    // At 100 GB/s one multiply moves (8,388,608 + 2,097,152) x 2 bytes in 209,716 ns and does
    // 1,073,741,824 FLOPs in 6,883 ns: 202,833 ns more. Forward two, backward four, per layer
    // (8) and microbatch (8).
    const PlanResult on = evaluate_layout(layout, model, cluster_of(1, 100), options);
    const PlanResult off = evaluate_layout(layout, model, cluster_of(1, 100), plain_options());
    EXPECT_EQ(on.breakdown.attention_memory_ns, 8 * 8 * 6 * 202'833);
    EXPECT_EQ(on.step_time_ns - off.step_time_ns, 8 * 8 * 6 * 202'833);
    EXPECT_EQ(on.breakdown.compute_ns, off.breakdown.compute_ns);
    EXPECT_EQ(off.breakdown.attention_memory_ns, 0);
    EXPECT_EQ(sum_of_parts(on.breakdown), on.step_time_ns);
    // Full recompute runs the forward's two again.
    options.recompute = Recompute::full;
    EXPECT_EQ(
        evaluate_layout(layout, model, cluster_of(1, 100), options).breakdown.attention_memory_ns,
        8 * 8 * 8 * 202'833);
    // Where the FLOPs take longer than the bytes, nothing is added.
    options.recompute = Recompute::none;
    EXPECT_EQ(evaluate_layout(layout, model, cluster_of(1, 100'000), options)
                  .breakdown.attention_memory_ns,
              0);
}

TEST(Megatron2021Terms, EagerLayerPassesAddTheirBytesAtHbmBandwidth) {
    const ModelSpec model = small_model();
    const PlanLayout layout{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    PlanOptions options = plain_options();
    options.attention = Attention::unfused;
    options.eager_layer_passes = true;
    // E = 512 x 2 x 1024 = 1,048,576 elements, tp = 1, bf16, eight layers: at 100 GB/s the
    // forward's 8 x 8E x 2 bytes take 1,342,178 ns, the input gradient's 8 x 6E 1,006,633 and
    // the weight gradient's 8 x (7E + 6E) 2,181,039 (each rounded up), per microbatch (8).
    const std::int64_t per_microbatch = 1'342'178 + 1'006'633 + 2'181'039;
    PlanOptions without = options;
    without.eager_layer_passes = false;
    const PlanResult on = evaluate_layout(layout, model, cluster_of(1, 100), options);
    const PlanResult off = evaluate_layout(layout, model, cluster_of(1, 100), without);
    EXPECT_EQ(on.breakdown.eager_passes_ns, 8 * per_microbatch);
    EXPECT_EQ(on.step_time_ns - off.step_time_ns, 8 * per_microbatch);
    EXPECT_EQ(on.breakdown.compute_ns, off.breakdown.compute_ns);
    EXPECT_EQ(off.breakdown.eager_passes_ns, 0);
    EXPECT_EQ(sum_of_parts(on.breakdown), on.step_time_ns);
    // Full recompute runs the forward's passes again with the input gradient.
    options.recompute = Recompute::full;
    EXPECT_EQ(evaluate_layout(layout, model, cluster_of(1, 100), options).breakdown.eager_passes_ns,
              8 * (per_microbatch + 1'342'178));
}

TEST(Megatron2021Terms, BlockingTransfersStallTheSender) {
    const ModelSpec model = small_model();
    PlanOptions options = plain_options();
    options.blocking_pipeline_transfers = true;
    // tp = 1: the whole boundary, 512 x 2 x 1024 x 2 = 2,097,152 bytes, over NVLink (two
    // stages, one host): 1,000 + 20,971.52 ns, 21,972 rounded up. Stage 0 pays it after each
    // forward, stage 1 after each input gradient: 8 microbatches on either rank.
    const PlanLayout two_stages{1, 2, 1, ScheduleKind::one_f_one_b, 1, 2, 8};
    const PlanResult result = evaluate_layout(two_stages, model, cluster_of(2, 0), options);
    EXPECT_EQ(result.breakdown.pipeline_transfer_ns, 8 * 21'972);
    EXPECT_EQ(sum_of_parts(result.breakdown), result.step_time_ns);
    // The link then carries no bytes of its own.
    EXPECT_EQ(plan_cost_model(two_stages, model, cluster_of(2, 0), options).activation_bytes,
              std::vector<std::int64_t>(2, 0));
    EXPECT_EQ(evaluate_layout(two_stages, model, cluster_of(2, 0), plain_options())
                  .breakdown.pipeline_transfer_ns,
              0);
    // tp = 2 (scatter/gather): half over NVLink, 1,000 + 10,485.76 ns, then the tp group's
    // all-gather of the other half, 5,000 + 10,485.76 ns: 26,971.52, 26,972 rounded up.
    const PlanLayout split{2, 2, 1, ScheduleKind::one_f_one_b, 1, 2, 8};
    EXPECT_EQ(
        evaluate_layout(split, model, cluster_of(4, 0), options).breakdown.pipeline_transfer_ns,
        8 * 26'972);
    // tp x dp = 8 fills a host, so the next stage is on another: the half goes over the network,
    // 5,000 + 41,943.04 ns, and is gathered as before, 5,000 + 10,485.76 ns: 62,429 rounded up.
    const PlanLayout across{2, 2, 4, ScheduleKind::one_f_one_b, 1, 2, 2};
    EXPECT_EQ(
        evaluate_layout(across, model, cluster_of(16, 0), options).breakdown.pipeline_transfer_ns,
        2 * 62'429);
    // tp x dp = 4: stages 0 and 1 on one host, 2 and 3 on the next. Only the boundary between
    // stages 1 and 2 crosses, so the busiest ranks (1 and 2) each send one transfer per
    // microbatch over the network and one inside their host: 62,429 + 26,972 ns.
    const PlanLayout one_crossing{2, 4, 2, ScheduleKind::one_f_one_b, 1, 2, 4};
    EXPECT_EQ(evaluate_layout(one_crossing, model, cluster_of(16, 0), options)
                  .breakdown.pipeline_transfer_ns,
              4 * (62'429 + 26'972));
}

TEST(Megatron2021Terms, TheEmbeddingGradientIsReducedBetweenFirstAndLastStage) {
    const ModelSpec model = small_model();
    PlanOptions options = plain_options();
    options.embedding_gradient_reduce = true;
    // 1,000 x 1,024 fp32 values, 4,096,000 bytes at 100 GB/s, and one collective's 5 us.
    const PlanResult two_stages = evaluate_layout({1, 2, 1, ScheduleKind::one_f_one_b, 1, 2, 8},
                                                  model, cluster_of(2, 0), options);
    EXPECT_EQ(two_stages.breakdown.embedding_reduce_ns, 40'960 + 5'000);
    EXPECT_EQ(sum_of_parts(two_stages.breakdown), two_stages.step_time_ns);
    // Split over tp = 2 and across hosts (tp x dp = 8): half the bytes at 25 GB/s.
    EXPECT_EQ(evaluate_layout({2, 2, 4, ScheduleKind::one_f_one_b, 1, 2, 2}, model,
                              cluster_of(16, 0), options)
                  .breakdown.embedding_reduce_ns,
              81'920 + 5'000);
    // One stage holds both uses of the embedding: nothing to reduce.
    EXPECT_EQ(evaluate_layout({1, 1, 2, ScheduleKind::one_f_one_b, 1, 2, 4}, model,
                              cluster_of(2, 0), options)
                  .breakdown.embedding_reduce_ns,
              0);
    // Nor where a V-shaped schedule runs the first and the last stage on one rank.
    EXPECT_EQ(evaluate_layout({1, 2, 1, ScheduleKind::zbv_zero_bubble, 2, 2, 8}, model,
                              cluster_of(2, 0), options)
                  .breakdown.embedding_reduce_ns,
              0);
    // tp = 2, dp = 2, pp = 2 on one host: half the bytes over NVLink.
    EXPECT_EQ(evaluate_layout({2, 2, 2, ScheduleKind::one_f_one_b, 1, 2, 4}, model,
                              cluster_of(8, 0), options)
                  .breakdown.embedding_reduce_ns,
              20'480 + 5'000);
}

TEST(Megatron2021Terms, GradientsInTheDtypeAccumulateAndReduceInItsBytes) {
    EXPECT_EQ(dtype_gradient_accumulation_bytes(1000, DType::fp16), 6000);  // 3 x 2
    EXPECT_EQ(dtype_gradient_accumulation_bytes(1000, DType::fp32), 12000);
    const ModelSpec model = small_model();
    PlanOptions fp32_grads = plain_options();
    fp32_grads.dtype = DType::fp16;
    fp32_grads.embedding_gradient_reduce = true;
    PlanOptions fp16_grads = fp32_grads;
    fp16_grads.gradients_in_dtype = true;
    // One GPU: each microbatch adds its gradients, 6 rather than 10 bytes per parameter.
    const PlanLayout one{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    const double parameters =
        8 * gpt_layer_parameter_count(1024) + (1000.0 + 512.0) * 1024 + 2 * 1024;  // + final norm
    EXPECT_EQ(evaluate_layout(one, model, cluster_of(1, 100), fp16_grads)
                  .breakdown.gradient_accumulation_ns,
              8 * memory_ns(parameters * 6, 100));
    EXPECT_EQ(evaluate_layout(one, model, cluster_of(1, 100), fp32_grads)
                  .breakdown.gradient_accumulation_ns,
              8 * memory_ns(parameters * 10, 100));
    // The embedding's reduction moves half the bytes: 2,048,000 at 100 GB/s, and 5 us.
    const PlanLayout two_stages{1, 2, 1, ScheduleKind::one_f_one_b, 1, 2, 8};
    EXPECT_EQ(evaluate_layout(two_stages, model, cluster_of(2, 0), fp16_grads)
                  .breakdown.embedding_reduce_ns,
              20'480 + 5'000);
    // And the data-parallel reduction is the one of twice as few fp32 values.
    const PlanLayout two_replicas{1, 1, 2, ScheduleKind::gpipe, 1, 2, 4};
    const double replica =
        8 * gpt_layer_parameter_count(1024) + (1000.0 + 512.0) * 1024 + 2 * 1024;  // + final norm
    EXPECT_EQ(evaluate_layout(two_replicas, model, cluster_of(2, 0), fp16_grads)
                  .breakdown.data_parallel_ns,
              data_parallel_reduce_ns(replica / 2, 2, 1, 8, false, cluster_of(2, 0).links));
}

TEST(Megatron2021Terms, CollectivesInsideAHostRunAtTheirAchievedBusBandwidth) {
    const ModelSpec model = small_model();
    ClusterSpec cluster = cluster_of(4, 0);
    cluster.intra_host_collective_gb_per_s = 50;
    sharding::MeshLinks achieved = cluster.links;
    achieved.intra_host_gb_per_s = 50;
    const TensorParallelLayerCost per_layer =
        tensor_parallel_layer_cost(512, 1024, 16, 1000, 2, 2, 8, achieved);
    const TensorParallelLayerCost at_line_rate =
        tensor_parallel_layer_cost(512, 1024, 16, 1000, 2, 2, 8, cluster.links);
    EXPECT_GT(per_layer.forward_ns, at_line_rate.forward_ns);
    const PlanLayout two_way{2, 1, 2, ScheduleKind::gpipe, 1, 2, 4};
    EXPECT_EQ(
        evaluate_layout(two_way, model, cluster, plain_options()).breakdown.tensor_parallel_ns,
        8 * 4 * (per_layer.forward_ns + per_layer.backward_ns));
    // The blocking transfer's all-gather too: 1,000 + 10,485.76 over the link, then 5,000 +
    // 1,048,576 / 50 = 20,971.52 gathered: 37,458 rounded up. Point-to-point keeps the link's.
    PlanOptions options = plain_options();
    options.blocking_pipeline_transfers = true;
    const PlanLayout split{2, 2, 1, ScheduleKind::one_f_one_b, 1, 2, 8};
    EXPECT_EQ(evaluate_layout(split, model, cluster, options).breakdown.pipeline_transfer_ns,
              8 * 37'458);
}

TEST(Megatron2021Terms, WaveEfficiencyIsTheUsedShareOfTheWavesTileSlots) {
    EXPECT_DOUBLE_EQ(wave_efficiency(256, 128, 108), 1.0 / 108);
    EXPECT_DOUBLE_EQ(wave_efficiency(256 * 108, 128, 108), 1.0);
    // 109 tiles: two waves of 108 (the other orientation, 218 tiles in three, is worse).
    EXPECT_DOUBLE_EQ(wave_efficiency(256 * 109, 128, 108), 109.0 / 216);
    // A partial tile counts whole: 100 x 100 takes one of 108 slots of 256 x 128.
    EXPECT_DOUBLE_EQ(wave_efficiency(100, 100, 108), 100.0 * 100 / (108 * 256 * 128));
}

TEST(Megatron2021Terms, LayerGemmsRunInWaves) {
    const GptShape shape = small_model().shape;
    // 1,024 tokens, h = 1,024, tp = 1: QKV 1,024 x 3,072 (96 tiles, one wave of 108), attention
    // output 1,024 x 1,024 (32), MLP up 1,024 x 4,096 (128: two waves), MLP down 1,024 x 1,024.
    const LayerGemmWaves waves = layer_gemm_waves(shape, 2, 1, 108);
    const double qkv = 2.0 * 1024 * 3072 * 1024, square = 2.0 * 1024 * 1024 * 1024;
    EXPECT_DOUBLE_EQ(waves.forward_flops, qkv + square + 4 * square + 4 * square);
    EXPECT_DOUBLE_EQ(waves.forward_quantized, qkv * 108 / 96 + square * 108 / 32 +
                                                  4 * square * 216 / 128 + 4 * square * 108 / 32);
    EXPECT_DOUBLE_EQ(waves.weight_flops, waves.forward_flops);
    // On one SM every tile has its own wave: nothing lost, as the dimensions fill their tiles.
    const LayerGemmWaves whole = layer_gemm_waves(shape, 2, 1, 1);
    EXPECT_DOUBLE_EQ(whole.input_quantized, whole.input_flops);

    const ModelSpec model = small_model();
    const PlanLayout layout{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    ClusterSpec cluster = cluster_of(1, 0);
    cluster.streaming_multiprocessors = 108;
    const PlanResult result = evaluate_layout(layout, model, cluster, plain_options());
    const auto ns = [](double flops) {
        return static_cast<std::int64_t>(std::ceil(flops / 156e3));
    };
    EXPECT_EQ(
        result.breakdown.wave_quantization_ns,
        8 * 8 *
            (ns(waves.forward_quantized) - ns(waves.forward_flops) + ns(waves.input_quantized) -
             ns(waves.input_flops) + ns(waves.weight_quantized) - ns(waves.weight_flops)));
    EXPECT_EQ(sum_of_parts(result.breakdown), result.step_time_ns);
    EXPECT_EQ(
        result.breakdown.compute_ns,
        evaluate_layout(layout, model, cluster_of(1, 0), plain_options()).breakdown.compute_ns);
    cluster.streaming_multiprocessors = 1;
    EXPECT_EQ(
        evaluate_layout(layout, model, cluster, plain_options()).breakdown.wave_quantization_ns, 0);
}

}  // namespace
}  // namespace pipelens::sim
