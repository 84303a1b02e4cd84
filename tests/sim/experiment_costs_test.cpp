// Cost models from experiments: the Zero Bubble paper's FLOP counts worked out by hand for one
// layer shape, the layer split over stages, and explicit per-stage values expanded per stage.
#include <gtest/gtest.h>

#include "sim/experiment_costs.hpp"
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

}  // namespace
}  // namespace pipelens::sim
