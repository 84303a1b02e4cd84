// Cost models from experiments: the Zero Bubble paper's FLOP counts worked out by hand for one
// layer shape, the layer split over stages, and explicit per-stage values expanded per stage;
// FLOP-derived times are all arithmetic, which no overlap hides.
#include <gtest/gtest.h>

#include "sim/experiment_costs.hpp"
#include "sim/experiment_simulation.hpp"
#include "sim/transformer_flops.hpp"

namespace pipelens::sim {
namespace {

TransformerSpec layer_1024() {
    TransformerSpec spec;
    spec.layers = 10;
    spec.hidden = 1024;
    spec.sequence = 1024;
    spec.microbatch_size = 1;
    spec.heads = 16;
    spec.dtype = "bf16";
    spec.device_tflops = 1;  // 1e12 FLOP/s = 1000 FLOP/ns
    return spec;
}

TEST(TransformerFlops, ZeroBubblePaperCounts) {
    const LayerFlops flops = transformer_layer_flops(layer_1024());
    // sbh = 2^20; F = sbh(24h + 4s) = 2^20 * 28672, I = sbh(24h + 8s), W = sbh(24h).
    EXPECT_DOUBLE_EQ(flops.forward, 30'064'771'072.0);
    EXPECT_DOUBLE_EQ(flops.input_gradient, 34'359'738'368.0);
    EXPECT_DOUBLE_EQ(flops.weight_gradient, 25'769'803'776.0);
    EXPECT_EQ(flops_to_ns(flops.forward, layer_1024()), 30'064'771);
    EXPECT_EQ(boundary_activation_bytes(layer_1024()), 2'097'152);  // s*b*h*2
    // sbh(34 + 5as/h) = 2^20 * (34 + 80) at 16 bits.
    EXPECT_EQ(layer_held_activation_bytes(layer_1024()), 119'537'664);
}

TEST(TransformerFlops, LayersSplitWithEarlierStagesTakingTheRemainder) {
    EXPECT_EQ(layers_of_stages(layer_1024(), 4), (std::vector<int>{3, 3, 2, 2}));
    TransformerSpec uneven = layer_1024();
    uneven.layers_per_stage = {1, 4};
    EXPECT_EQ(layers_of_stages(uneven, 2), (std::vector<int>{1, 4}));
}

TEST(ExperimentCosts, TransformerTimesScaleWithLayersPerStage) {
    Experiment experiment = plain_experiment();
    experiment.forward_ns.clear();
    experiment.input_ns.clear();
    experiment.weight_ns.clear();
    experiment.transformer = layer_1024();
    const CostModel costs = cost_model_for(experiment, 4);
    ASSERT_EQ(costs.stages.size(), 4u);
    EXPECT_EQ(costs.stages[0].forward_ns, 90'194'313);  // 3 layers
    EXPECT_EQ(costs.stages[3].forward_ns, 60'129'542);  // 2 layers
    EXPECT_EQ(costs.stages[3].input_ns, 68'719'477);
    EXPECT_EQ(costs.stages[3].weight_ns, 51'539'608);
    EXPECT_EQ(costs.bytes_of(2), 2'097'152);
    EXPECT_EQ(costs.held_bytes_of(0), 3 * 119'537'664LL);
}

// A full backward stated without its parts: the schedules that run I and W take the same
// backward. Halves when neither part is stated; beside one stated part, the rest. Kept as they
// were, I and W stayed at 1 us and ZeroBubbleH2 at F = 1 ms, B = 2 ms took 11.016 ms against
// 1F1B's 33 ms.
TEST(ExperimentCosts, AStatedBackwardWithoutItsPartsIsSplitIntoThem) {
    Experiment experiment = plain_experiment();
    experiment.forward_ns = {1'000'000};
    experiment.input_ns.clear();
    experiment.weight_ns.clear();
    experiment.backward_ns = {2'000'001, 3'000'000};
    CostModel costs = cost_model_for(experiment, 2);
    EXPECT_EQ(costs.stages[0].input_ns, 1'000'000);
    EXPECT_EQ(costs.stages[0].weight_ns, 1'000'001);
    EXPECT_EQ(costs.stages[1].input_ns + costs.stages[1].weight_ns, 3'000'000);
    EXPECT_EQ(costs.stages[0].backward_ns(), 2'000'001);

    experiment.input_ns = {500'000};  // one part stated: the other is the rest of B
    costs = cost_model_for(experiment, 2);
    EXPECT_EQ(costs.stages[0].weight_ns, 1'500'001);
    EXPECT_EQ(costs.stages[1].weight_ns, 2'500'000);

    experiment.weight_ns = {700'000};  // both stated: B may differ from I + W (a fused backward)
    costs = cost_model_for(experiment, 2);
    EXPECT_EQ(costs.stages[0].input_ns, 500'000);
    EXPECT_EQ(costs.stages[0].weight_ns, 700'000);
    EXPECT_EQ(costs.stages[0].backward_ns(), 2'000'001);

    // Simulated: ZeroBubbleH2 takes the zero-bubble paper's step at F = I = W = 1 ms, as with
    // the parts stated, instead of running its backwards in microseconds.
    Experiment stated_b = plain_experiment();
    stated_b.shape = {ScheduleKind::zero_bubble_h2, 4, 1, 8};
    stated_b.forward_ns = {1'000'000};
    stated_b.input_ns.clear();
    stated_b.weight_ns.clear();
    stated_b.backward_ns = {2'000'000};
    Experiment stated_parts = stated_b;
    stated_parts.backward_ns.clear();
    stated_parts.input_ns = stated_parts.weight_ns = {1'000'000};
    EXPECT_EQ(simulate_experiment(stated_b).result.step_time_ns, 27'000'000);
    EXPECT_EQ(simulate_experiment(stated_parts).result.step_time_ns, 27'000'000);
}

TEST(ExperimentCosts, ExplicitValuesExpandPerStageAndWinOverDerivedSizes) {
    Experiment experiment = plain_experiment();
    experiment.forward_ns = {5, 6};
    experiment.backward_ns = {40};
    experiment.activation_bytes = {100};
    experiment.intra_host = {7, 2.0};
    experiment.inter_host = {70, 0.5};
    experiment.ranks_per_host = 2;
    const CostModel costs = cost_model_for(experiment, 2);
    EXPECT_EQ(costs.stage(0).forward_ns, 5);
    EXPECT_EQ(costs.stage(1).forward_ns, 6);
    EXPECT_EQ(costs.stage(1).input_ns, 1000);
    EXPECT_EQ(costs.stage(1).backward_ns(), 40);
    EXPECT_EQ(costs.bytes_of(1), 100);
    EXPECT_EQ(costs.held_bytes_of(1), 100);             // held defaults to the boundary size
    EXPECT_EQ(costs.transfer_ns(0, 1, 100), 7 + 50);    // same host
    EXPECT_EQ(costs.transfer_ns(1, 2, 100), 70 + 200);  // across hosts
}

TEST(ExperimentCosts, PerModelFiguresAreSharedOverTheStagesAndAddUpExactly) {
    Experiment experiment = plain_experiment();
    experiment.cost_scope = CostScope::model;
    experiment.forward_ns = {
        8'000'003};  // 8 ms + 3 ns over 8 stages: the first three get 1 ns more
    experiment.input_ns = {800};
    experiment.weight_ns.clear();
    experiment.held_activation_bytes = {1000};
    experiment.activation_bytes = {64};  // per boundary whatever the scope
    const CostModel costs = cost_model_for(experiment, 8);
    std::int64_t forward = 0, held = 0;
    for (int stage = 0; stage < 8; ++stage) {
        forward += costs.stage(stage).forward_ns;
        held += costs.held_bytes_of(stage);
        EXPECT_EQ(costs.stage(stage).input_ns, 100);
        EXPECT_EQ(costs.stage(stage).weight_ns, 1000);  // not given: the unit time per stage
        EXPECT_EQ(costs.bytes_of(stage), 64);
    }
    EXPECT_EQ(forward, 8'000'003);
    EXPECT_EQ(held, 1000);
    EXPECT_EQ(costs.stage(0).forward_ns, 1'000'000);
    EXPECT_EQ(costs.stage(7).forward_ns, 1'000'001);
    // The same model at v = 1 over 4 stages: each stage is twice an 8-stage share.
    EXPECT_EQ(cost_model_for(experiment, 4).stage(0).input_ns, 200);
}

TEST(ExperimentCosts, PerLayerFiguresFollowTheRunsLayerSplit) {
    Experiment experiment = plain_experiment();
    experiment.cost_scope = CostScope::layer;
    experiment.model.layers = 10;
    experiment.forward_ns = {100};
    experiment.held_activation_bytes = {7};
    const CostModel costs = cost_model_for(experiment, 4);  // 3, 3, 2, 2 layers
    EXPECT_EQ(costs.stage(0).forward_ns, 300);
    EXPECT_EQ(costs.stage(3).forward_ns, 200);
    EXPECT_EQ(costs.held_bytes_of(1), 21);
    experiment.model.split_points = {"layers.1", "layers.2", "layers.3"};  // 1, 1, 1, 7
    EXPECT_EQ(cost_model_for(experiment, 4).stage(3).forward_ns, 700);
}

TEST(ExperimentCosts, PerModelScopeRefusesListsAndModelsThatDivideThemselves) {
    Experiment experiment = plain_experiment();
    experiment.cost_scope = CostScope::model;
    experiment.forward_ns = {1, 2, 3, 4};
    EXPECT_THROW(
        {
            try {
                validate_experiment(experiment);
            } catch (const ExperimentError& error) {
                EXPECT_STREQ(error.what(),
                             "command line: costs.f: has 4 values, but with costs.per = \"model\" "
                             "it is one figure, the whole model's, which pipelens divides over "
                             "the stages");
                throw;
            }
        },
        ExperimentError);
    experiment.cost_scope = CostScope::layer;
    experiment.forward_ns = {1};
    EXPECT_THROW(validate_experiment(experiment), ExperimentError);  // no layer count
    experiment.model.layers = 3;                                     // fewer than 4 stages
    EXPECT_THROW(validate_experiment(experiment), ExperimentError);
    experiment.model.layers = 4;
    EXPECT_NO_THROW(validate_experiment(experiment));
}

TEST(ExperimentCosts, OnlyFlatPerStageCostsAtVAboveOneGetTheNote) {
    Experiment experiment = plain_experiment();
    EXPECT_EQ(cost_scope_note(experiment, 1), "");
    EXPECT_EQ(cost_scope_note(experiment, 2),
              "costs are per stage: with v=2 each rank runs 2 stages, so a rank computes 2 x the "
              "given F, I and W, a model 2 times the size of the same pp at v=1; to compare one "
              "model across schedules give --costs-per model (costs.per = \"model\")");
    experiment.cost_scope = CostScope::model;
    EXPECT_EQ(cost_scope_note(experiment, 2), "");
    experiment.cost_scope = CostScope::stage;
    experiment.forward_ns = {1, 2, 3, 4, 5, 6, 7, 8};  // one per stage: nothing to misread
    EXPECT_EQ(cost_scope_note(experiment, 2), "");
}

// A [transformer]'s times are its FLOPs and nothing else: a DualPipeV step of it takes as long
// at overlap 1 as at 0 (the arithmetic survives the recorded cost model the simulation reads).
TEST(ExperimentCosts, TransformerTimesAreArithmeticNoOverlapHides) {
    Experiment experiment = plain_experiment();
    experiment.forward_ns.clear();
    experiment.input_ns.clear();
    experiment.weight_ns.clear();
    experiment.transformer = layer_1024();
    experiment.transformer->layers = 8;
    experiment.shape = {ScheduleKind::dual_pipe_v, 2, 2, 8};
    const CostModel costs = cost_model_for(experiment, 4);
    EXPECT_EQ(costs.stages[0].forward_arithmetic_ns, costs.stages[0].forward_ns);
    EXPECT_EQ(costs.stages[0].input_arithmetic_ns, costs.stages[0].input_ns);
    EXPECT_EQ(costs.stages[0].weight_arithmetic_ns, costs.stages[0].weight_ns);
    EXPECT_EQ(experiment.overlap_efficiency, 0);  // unless measured or stated
    const std::int64_t serial = simulate_experiment(experiment).result.step_time_ns;
    experiment.overlap_efficiency = 1;
    EXPECT_EQ(simulate_experiment(experiment).result.step_time_ns, serial);
}

}  // namespace
}  // namespace pipelens::sim
