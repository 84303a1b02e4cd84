// The planner's costs beyond matrix multiplies, each on a case whose value follows from
// sim/step_overheads.hpp's byte counts: one GPU (no bubble, no communication) with memory-bound
// work priced gets exactly m microbatches of each kind plus one optimizer step, the parts add up
// to the step, and the matrix multiplies cost what they did before; full recompute pays the
// forward's tensor-parallel collectives again; --dtype changes every byte it governs exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/parallel_costs.hpp"
#include "sim/training_plan.hpp"
#include "tests/sim/plan_specs.hpp"

namespace pipelens::sim {
namespace {

using testing::cluster_of;
using testing::plain_options;
using testing::small_model;

TEST(PlanOverheads, OneGpuPaysEachMemoryBoundKindPerMicrobatchAndOneOptimizerStep) {
    const ModelSpec model = small_model();
    const GptShape& shape = model.shape;
    const PlanLayout layout{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    const double bandwidth = 2000;
    const PlanResult priced =
        evaluate_layout(layout, model, cluster_of(1, bandwidth), plain_options());
    const PlanResult unpriced = evaluate_layout(layout, model, cluster_of(1, 0), plain_options());

    const PassBytes layer = layer_memory_bound_bytes(shape, 2, 1, DType::bf16, Attention::unfused);
    const PassBytes embedding = embedding_bytes(shape, 2, 1, DType::bf16);
    const PassBytes output = output_layer_bytes(shape, 2, 1, DType::bf16);
    const double parameters =
        8 * gpt_layer_parameter_count(1024) + (1000.0 + 512.0) * 1024 + 2 * 1024;  // + final norm
    const PlanBreakdown& parts = priced.breakdown;
    EXPECT_EQ(parts.memory_bound_ns, 8 * (memory_ns(8 * layer.forward, bandwidth) +
                                          memory_ns(8 * layer.backward, bandwidth)));
    EXPECT_EQ(
        parts.embedding_and_output_ns,
        8 * (memory_ns(embedding.forward + output.forward, bandwidth) +
             memory_ns(output.backward, bandwidth) + memory_ns(embedding.backward, bandwidth)));
    EXPECT_EQ(parts.gradient_accumulation_ns,
              8 * memory_ns(gradient_accumulation_bytes(parameters, DType::bf16), bandwidth));
    EXPECT_EQ(parts.optimizer_ns,
              memory_ns(optimizer_step_bytes(parameters, DType::bf16, false), bandwidth));
    EXPECT_EQ(parts.compute_ns, unpriced.breakdown.compute_ns);
    EXPECT_EQ(parts.output_matmul_ns, unpriced.breakdown.output_matmul_ns);
    EXPECT_EQ(parts.output_matmul_ns,
              8 * 3 * std::llround(std::ceil(2.0 * 512 * 2 * 1024 * 1000 / (312 * 0.5 * 1e3))));
    EXPECT_EQ(parts.bubble_ns, 0);
    EXPECT_EQ(parts.compute_ns + parts.memory_bound_ns + parts.embedding_and_output_ns +
                  parts.gradient_accumulation_ns + parts.tensor_parallel_ns + parts.bubble_ns +
                  parts.data_parallel_ns + parts.optimizer_ns,
              priced.step_time_ns);
    // Unpriced, none of it is charged.
    EXPECT_EQ(unpriced.breakdown.memory_bound_ns + unpriced.breakdown.embedding_and_output_ns +
                  unpriced.breakdown.gradient_accumulation_ns + unpriced.breakdown.optimizer_ns,
              0);
    EXPECT_LT(priced.tflops_per_gpu, unpriced.tflops_per_gpu);
}

TEST(PlanOverheads, RecomputeAddsItsBytesToTheBackward) {
    const ModelSpec model = small_model();
    const PlanLayout layout{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    const double bandwidth = 2000;
    PlanOptions full = plain_options();
    full.recompute = Recompute::full;
    PlanOptions selective = plain_options();
    selective.recompute = Recompute::selective;
    const PassBytes layer =
        layer_memory_bound_bytes(model.shape, 2, 1, DType::bf16, Attention::unfused);
    const auto forward = memory_ns(8 * layer.forward, bandwidth);
    EXPECT_EQ(
        evaluate_layout(layout, model, cluster_of(1, bandwidth), full).breakdown.memory_bound_ns,
        8 * (forward + memory_ns(8 * (layer.backward + layer.forward), bandwidth)));
    const double repeated =
        selective_recompute_bytes(model.shape, 2, 1, DType::bf16, Attention::unfused);
    EXPECT_EQ(evaluate_layout(layout, model, cluster_of(1, bandwidth), selective)
                  .breakdown.memory_bound_ns,
              8 * (forward + memory_ns(8 * (layer.backward + repeated), bandwidth)));
}

// Under sequence parallelism each GPU of a tp group runs the layer norms and dropouts on its
// share of the sequence: the memory-bound work is the split's bytes, on every stage.
TEST(PlanOverheads, SequenceParallelismSplitsTheLayerNormsAndDropoutsOverTp) {
    const ModelSpec model = small_model();
    const PlanLayout layout{2, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    const double bandwidth = 2000;
    PlanOptions split = plain_options();
    split.sequence_parallel = true;
    const PlanResult with = evaluate_layout(layout, model, cluster_of(2, bandwidth), split);
    const PlanResult without =
        evaluate_layout(layout, model, cluster_of(2, bandwidth), plain_options());
    const PassBytes layer =
        layer_memory_bound_bytes(model.shape, 2, {2, true}, DType::bf16, Attention::unfused);
    EXPECT_EQ(with.breakdown.memory_bound_ns, 8 * (memory_ns(8 * layer.forward, bandwidth) +
                                                   memory_ns(8 * layer.backward, bandwidth)));
    EXPECT_LT(with.breakdown.memory_bound_ns, without.breakdown.memory_bound_ns);
    EXPECT_LT(with.breakdown.embedding_and_output_ns, without.breakdown.embedding_and_output_ns);
}

TEST(PlanOverheads, FullRecomputeRunsTheForwardsCollectivesAgain) {
    const ModelSpec model = small_model();
    PlanOptions options;
    options.recompute = Recompute::full;
    const PlanResult result =
        evaluate_layout({4, 1, 1, ScheduleKind::gpipe, 1, 1, 16}, model, cluster_of(4, 0), options);
    const TensorParallelLayerCost per_layer =
        tensor_parallel_layer_cost(512, 1024, 16, 1000, 1, 4, 8, sharding::MeshLinks{});
    EXPECT_EQ(result.breakdown.tensor_parallel_ns,
              8 * 16 * (2 * per_layer.forward_ns + per_layer.backward_ns));
}

TEST(PlanOverheads, Fp32RunsAtTheTf32PeakWithFourByteWeightsActivationsAndMessages) {
    const ModelSpec model = small_model();
    PlanOptions bf16 = plain_options();
    PlanOptions fp32 = plain_options();
    fp32.dtype = DType::fp32;
    const PlanLayout one{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    const PlanResult narrow = evaluate_layout(one, model, cluster_of(1, 0), bf16);
    const PlanResult wide = evaluate_layout(one, model, cluster_of(1, 0), fp32);
    EXPECT_NEAR(wide.tflops_per_gpu, 156 * 0.5, 1e-3);
    const double parameters =
        8 * gpt_layer_parameter_count(1024) + (1000.0 + 512.0) * 1024 + 2 * 1024;  // + final norm
    EXPECT_EQ(narrow.breakdown.weight_bytes, std::llround(parameters * 18));
    EXPECT_EQ(wide.breakdown.weight_bytes, std::llround(parameters * 16));
    EXPECT_EQ(wide.breakdown.activation_bytes, 2 * narrow.breakdown.activation_bytes);

    PlanOptions sharded = fp32;
    sharded.recompute = Recompute::selective;
    const PlanResult tp =
        evaluate_layout({4, 1, 1, ScheduleKind::gpipe, 1, 1, 16}, model, cluster_of(4, 0), sharded);
    const TensorParallelLayerCost f32 =
        tensor_parallel_layer_cost(512, 1024, 16, 1000, 1, 4, 8, sharding::MeshLinks{}, "f32");
    const TensorParallelLayerCost b16 =
        tensor_parallel_layer_cost(512, 1024, 16, 1000, 1, 4, 8, sharding::MeshLinks{}, "bf16");
    EXPECT_GT(f32.forward_ns, b16.forward_ns);
    EXPECT_EQ(tp.breakdown.tensor_parallel_ns, 8 * 16 * (f32.forward_ns + f32.backward_ns));
    // The boundary activation a pipeline sends: s b h elements of 4 bytes.
    const CostModel costs = plan_cost_model({1, 2, 1, ScheduleKind::one_f_one_b, 1, 1, 16}, model,
                                            cluster_of(2, 0), fp32);
    EXPECT_EQ(costs.activation_bytes.front(), 512 * 1024 * 4);
}

}  // namespace
}  // namespace pipelens::sim
