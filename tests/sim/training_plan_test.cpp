// The planner on cases with closed forms: one GPU (no bubble, no communication) runs at exactly
// the achieved fraction of peak and holds exactly the layers' activations and 18 bytes per
// parameter; tensor parallelism adds the sharding module's collectives; the enumeration obeys
// the divisibility rules; pins that break a rule are refused naming it; ranking puts layouts
// that fit first; no schedule runs above the achieved fraction of peak, whatever its overlap;
// the breakdown adds up to the step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/parallel_costs.hpp"
#include "sim/training_plan.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::sim {
namespace {

ModelSpec small_model() {
    return {{8, 1024, 16, 512, 1000}, 16};
}

ClusterSpec small_cluster(int gpus) {
    ClusterSpec cluster;
    cluster.gpus = gpus;
    cluster.gpus_per_host = 8;
    cluster.memory_per_gpu_bytes = 80LL << 30;
    cluster.peak_tflops = 312;
    cluster.achieved_fraction = 0.5;
    return cluster;
}

// Tensor parallelism splits what Megatron-LM's parallel layers split (12h^2 + 7h a layer, the
// word embedding) and every tp rank holds the rest whole: the position embedding (once divided
// over tp), two biases and two layer norms a layer, the final norm.
TEST(TrainingPlan, TensorParallelRanksEachHoldWhatTheParallelLayersDoNotSplit) {
    PlanOptions options;
    options.recompute = Recompute::none;
    options.sequence_parallel = false;
    options.zero1 = false;
    const PlanResult result = evaluate_layout({2, 1, 1, ScheduleKind::gpipe, 1, 2, 8},
                                              small_model(), small_cluster(2), options);
    const double h = 1024;
    const double split = 8 * (12 * h * h + 7 * h) + 1000 * h;
    const double whole = 8 * 6 * h + 512 * h + 2 * h;
    EXPECT_EQ(result.breakdown.weight_bytes, std::llround((split / 2 + whole) * 18));
}

TEST(TrainingPlan, OneGpuRunsAtTheAchievedFractionAndHoldsExactlyItsModel) {
    PlanOptions options;
    options.recompute = Recompute::none;
    options.sequence_parallel = false;
    options.zero1 = false;
    const ModelSpec model = small_model();
    const PlanResult result =
        evaluate_layout({1, 1, 1, ScheduleKind::gpipe, 1, 2, 8}, model, small_cluster(1), options);
    EXPECT_NEAR(result.tflops_per_gpu, 312 * 0.5, 1e-3);
    EXPECT_EQ(result.breakdown.bubble_ns, 0);
    EXPECT_EQ(result.breakdown.tensor_parallel_ns, 0);
    EXPECT_EQ(result.breakdown.data_parallel_ns, 0);
    const double parameters =
        8 * gpt_layer_parameter_count(1024) + (1000.0 + 512.0) * 1024 + 2 * 1024;  // final norm
    EXPECT_EQ(result.breakdown.weight_bytes, std::llround(parameters * 18));
    // GPipe on one stage holds every microbatch's activations before the first backward.
    EXPECT_EQ(
        result.breakdown.activation_bytes,
        8 * 8 *
            layer_activation_bytes(model.shape, 2, 1, Recompute::none, false, Attention::flash));
}

// Each rank holds its own stages' layers and only the embeddings of the stages it runs; the
// memory is the fullest rank's weights and activations together. Split 1|1|5|1 over 1F1B pp=4:
// rank 2 holds five layers and two microbatches of their activations, and no embedding (the
// plan once added the first rank's embeddings to the most layers any rank held).
TEST(TrainingPlan, TheMemoryIsTheFullestRanksOwnLayersEmbeddingsAndActivations) {
    PlanOptions options;
    options.recompute = Recompute::none;
    options.sequence_parallel = false;
    options.zero1 = false;
    const ModelSpec model = small_model();
    const PlanResult result = evaluate_layout({1, 4, 1, ScheduleKind::one_f_one_b, 1, 1, 16}, model,
                                              small_cluster(4), options, {1, 1, 5, 1});
    EXPECT_EQ(result.breakdown.weight_bytes,
              std::llround(5 * gpt_layer_parameter_count(1024) * 18));
    EXPECT_EQ(
        result.breakdown.activation_bytes,
        2 * 5 *
            layer_activation_bytes(model.shape, 1, 1, Recompute::none, false, Attention::flash));
    EXPECT_EQ(result.memory_per_gpu_bytes,
              result.breakdown.weight_bytes + result.breakdown.activation_bytes);
}

// Fused attention (the default) never holds the s x s scores and computes Q K^T again in its
// backward; unfused attention holds them (Korthikanti et al.'s 5as/h term) and does not.
TEST(TrainingPlan, FusedAttentionHoldsNoScoresAndComputesQueryKeyAgainInItsBackward) {
    PlanOptions options;
    options.recompute = Recompute::none;
    options.sequence_parallel = false;
    options.zero1 = false;
    const ModelSpec model = small_model();  // s = 512, h = 1024, a = 16
    const PlanLayout layout{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    const PlanResult flash = evaluate_layout(layout, model, small_cluster(1), options);
    options.attention = Attention::unfused;
    const PlanResult unfused = evaluate_layout(layout, model, small_cluster(1), options);
    // Held: sbh(10 + 24) against sbh(10 + 24 + 5as/h), per layer and microbatch.
    const double sbh = 512.0 * 2 * 1024;
    EXPECT_EQ(flash.breakdown.activation_bytes, std::llround(8 * 8 * sbh * 34));
    EXPECT_EQ(unfused.breakdown.activation_bytes,
              std::llround(8 * 8 * sbh * (34 + 5.0 * 16 * 512 / 1024)));
    // 2 s^2 b h more per layer and microbatch, at 156 TFLOP/s (each pass rounded up once).
    const double again = 8 * 8 * 2 * 512.0 * 512 * 2 * 1024;
    EXPECT_NEAR(static_cast<double>(flash.breakdown.compute_ns - unfused.breakdown.compute_ns),
                again / 156e3, 8 * 3);
    // Both at the achieved rate: the count includes what the fused backward computes again.
    EXPECT_NEAR(flash.tflops_per_gpu, 156, 1e-3);
    EXPECT_NEAR(unfused.tflops_per_gpu, 156, 1e-3);
}

TEST(TrainingPlan, TensorParallelTimeIsTheShardingModulesCollectives) {
    const ModelSpec model = small_model();
    PlanOptions options;
    const PlanResult result =
        evaluate_layout({4, 1, 1, ScheduleKind::gpipe, 1, 1, 16}, model, small_cluster(4), options);
    const TensorParallelLayerCost per_layer =
        tensor_parallel_layer_cost(512, 1024, 16, 1000, 1, 4, 8, sharding::MeshLinks{});
    EXPECT_GT(per_layer.forward_ns, 0);
    EXPECT_EQ(result.breakdown.tensor_parallel_ns,
              8 * 16 * (per_layer.forward_ns + per_layer.backward_ns));
    EXPECT_LT(result.tflops_per_gpu, 312 * 0.5);
}

TEST(TrainingPlan, LayoutsFollowTheDivisibilityRules) {
    PlanOptions options;
    options.microbatch_sizes = {1, 2};
    options.virtual_stages = {2};
    const auto layouts = plan_layouts(small_model(), small_cluster(8), options);
    ASSERT_FALSE(layouts.empty());
    for (const PlanLayout& layout : layouts) {
        EXPECT_EQ(layout.tp * layout.pp * layout.dp, 8);
        EXPECT_EQ(layout.dp * layout.microbatch_size * layout.m, 16);
        EXPECT_EQ(8 % (layout.pp * layout.v), 0);
        EXPECT_EQ(16 % layout.tp, 0);
    }
    const auto has = [&](PlanLayout wanted) {
        return std::any_of(layouts.begin(), layouts.end(), [&](const PlanLayout& layout) {
            return layout.tp == wanted.tp && layout.pp == wanted.pp && layout.dp == wanted.dp &&
                   layout.schedule == wanted.schedule && layout.v == wanted.v &&
                   layout.microbatch_size == wanted.microbatch_size && layout.m == wanted.m;
        });
    };
    EXPECT_TRUE(has({2, 4, 1, ScheduleKind::one_f_one_b, 1, 2, 8}));
    EXPECT_TRUE(has({1, 4, 2, ScheduleKind::interleaved_1f1b, 2, 1, 8}));
    EXPECT_FALSE(has({1, 8, 1, ScheduleKind::interleaved_1f1b, 2, 1, 16}));  // 8 layers < 16
}

TEST(TrainingPlan, PinsThatBreakARuleAreRefusedNamingIt) {
    PlanOptions options;
    options.pins.tp = 3;
    try {
        plan_layouts(small_model(), small_cluster(8), options);
        FAIL() << "tp 3 accepted";
    } catch (const PlanError& error) {
        EXPECT_STREQ(error.what(),
                     "--tp 3: must divide the GPUs (8), the hidden size (1024) and the heads (16)");
    }
    options.pins = {};
    options.pins.tp = 2;
    options.pins.pp = 2;
    options.pins.dp = 4;
    EXPECT_THROW(plan_layouts(small_model(), small_cluster(8), options), PlanError);
    // A dp pin that cannot divide the GPUs was reported as "no layout of 8 GPUs fits".
    options.pins = {};
    options.pins.dp = 3;
    EXPECT_EQ(testing::thrown_message<PlanError>(
                  [&] { plan_layouts(small_model(), small_cluster(8), options); }, "dp 3 accepted"),
              fmt::format("--dp 3: must divide the GPUs (8) and the global batch ({})",
                          small_model().global_batch));
}

TEST(TrainingPlan, LayoutsThatFitComeFirstFastestFirst) {
    ClusterSpec cluster = small_cluster(8);
    cluster.memory_per_gpu_bytes = 700LL << 20;  // tight: tp = pp = 1 needs 0.9 GB
    PlanOptions options;
    options.microbatch_sizes = {1};
    const auto results = plan_training(small_model(), cluster, options);
    ASSERT_GT(results.size(), 2u);
    EXPECT_TRUE(results.front().fits);
    EXPECT_FALSE(results.back().fits);
    bool seen_unfit = false;
    for (std::size_t index = 0; index < results.size(); ++index) {
        seen_unfit |= !results[index].fits;
        EXPECT_FALSE(seen_unfit && results[index].fits)
            << "a fitting layout after one that does not";
        if (index > 0 && results[index].fits) {
            EXPECT_LE(results[index - 1].step_time_ns, results[index].step_time_ns);
        }
    }
}

// An overlapped F and B share one GPU's arithmetic: whatever the overlap hides, the step's FLOPs
// still run at the achieved rate at best, so no layout reports more TFLOP/s than that rate.
// The case: DualPipeV on 16 GPUs reported 926.7 TFLOP/s against a 692.3 ceiling. Every
// kind, ZeroBubbleAuto too (which `pipelens plan` refuses, but the planner orders with unit times).
TEST(TrainingPlan, NoScheduleRunsAboveTheAchievedFractionOfPeak) {
    const ModelSpec model{{32, 4096, 32, 4096, 32000}, 512};
    ClusterSpec cluster = small_cluster(16);
    cluster.peak_tflops = 989;
    cluster.achieved_fraction = 0.7;
    const double ceiling = 989 * 0.7;
    for (const ScheduleKind kind : all_schedule_kinds())
        for (const double overlap : {0.0, 1.0}) {
            PlanOptions options;
            options.overlap_efficiency = overlap;
            options.pins.schedule = kind;
            options.microbatch_sizes = {1, 4};
            for (const PlanResult& result : plan_training(model, cluster, options))
                EXPECT_LE(result.tflops_per_gpu, ceiling)
                    << schedule_kind_name(kind) << " overlap " << overlap << " tp "
                    << result.layout.tp << " pp " << result.layout.pp << " v " << result.layout.v;
        }
}

// compute (arithmetic) + tensor-parallel (not hidden) + bubble + data-parallel (not hidden) is
// the step, exactly, on every layout of every kind, overlapped or not.
TEST(TrainingPlan, TheBreakdownAddsUpToTheStep) {
    std::size_t layouts = 0;
    for (const ScheduleKind kind : all_schedule_kinds())
        for (const double overlap : {0.0, 0.5, 1.0})
            for (const bool overlap_reduce : {true, false}) {
                PlanOptions options;
                options.overlap_efficiency = overlap;
                options.overlap_gradient_reduce = overlap_reduce;
                options.pins.schedule = kind;
                for (const PlanResult& result :
                     plan_training(small_model(), small_cluster(8), options)) {
                    const PlanBreakdown& parts = result.breakdown;
                    EXPECT_EQ(parts.compute_ns + parts.tensor_parallel_ns + parts.bubble_ns +
                                  parts.data_parallel_ns,
                              result.step_time_ns)
                        << schedule_kind_name(kind) << " tp " << result.layout.tp;
                    EXPECT_GT(parts.compute_ns, 0);
                    EXPECT_GE(parts.tensor_parallel_ns, 0);
                    if (result.layout.tp == 1) {
                        EXPECT_EQ(parts.tensor_parallel_ns, 0);
                    }
                    ++layouts;
                }
            }
    EXPECT_GT(layouts, 500u);
}

// What DualPipeV's overlap hides is the tensor-parallel collectives: none with tp = 1, so the
// step is the same at any efficiency; with tp = 2 the step shrinks by at most the collectives,
// and the arithmetic is the same.
TEST(TrainingPlan, DualPipeVOverlapHidesOnlyCollectives) {
    PlanOptions none;
    PlanOptions full;
    full.overlap_efficiency = 1;
    const ClusterSpec cluster = small_cluster(4);
    const PlanLayout alone{1, 2, 2, ScheduleKind::dual_pipe_v, 2, 1, 8};
    EXPECT_EQ(evaluate_layout(alone, small_model(), cluster, none).step_time_ns,
              evaluate_layout(alone, small_model(), cluster, full).step_time_ns);
    const PlanLayout sharded{2, 2, 1, ScheduleKind::dual_pipe_v, 2, 1, 16};
    const PlanResult serial = evaluate_layout(sharded, small_model(), cluster, none);
    const PlanResult overlapped = evaluate_layout(sharded, small_model(), cluster, full);
    EXPECT_LT(overlapped.step_time_ns, serial.step_time_ns);
    EXPECT_GE(overlapped.step_time_ns, serial.step_time_ns - serial.breakdown.tensor_parallel_ns);
    EXPECT_EQ(overlapped.breakdown.compute_ns, serial.breakdown.compute_ns);
    EXPECT_LT(overlapped.breakdown.tensor_parallel_ns, serial.breakdown.tensor_parallel_ns);
}

}  // namespace
}  // namespace pipelens::sim
