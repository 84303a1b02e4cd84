// A [transformer]'s vocabulary: its output layer's logits (2 s b h V FLOPs in each of F, I and
// W) weigh on the last stage alike in `simulate`'s stage costs and in `partition`'s per-layer
// costs (as the loss), and partition moves layers off that stage; without a vocabulary nothing
// changes.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/experiment/experiment_toml.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/partition.hpp"
#include "sim/transformer_flops.hpp"

namespace pipelens::sim {
namespace {

// 100 TFLOP/s: 1e5 FLOPs per ns.
Experiment transformer_experiment(int vocabulary) {
    Experiment experiment;
    experiment.shape = {ScheduleKind::one_f_one_b, 4, 1, 8};
    TransformerSpec spec;
    spec.layers = 8;
    spec.hidden = 1024;
    spec.sequence = 512;
    spec.microbatch_size = 2;
    spec.heads = 16;
    spec.device_tflops = 100;
    spec.vocabulary = vocabulary;
    experiment.transformer = spec;
    return experiment;
}

TEST(TransformerVocabulary, TheOutputLayerIsTwoSbhVFlopsPerPass) {
    EXPECT_EQ(output_layer_flops(*transformer_experiment(1000).transformer),
              2.0 * 512 * 2 * 1024 * 1000);
    EXPECT_EQ(output_layer_flops(*transformer_experiment(0).transformer), 0);
}

TEST(TransformerVocabulary, SimulateAddsTheLogitsToTheLastStageOnly) {
    const CostModel plain = cost_model_for(transformer_experiment(0), 4);
    const CostModel with_output = cost_model_for(transformer_experiment(64000), 4);
    const double sbh = 512.0 * 2 * 1024, logits = 2 * sbh * 64000;
    for (int stage = 0; stage < 3; ++stage)
        EXPECT_EQ(with_output.stages[stage].forward_ns, plain.stages[stage].forward_ns);
    EXPECT_EQ(with_output.stages[3].forward_ns,
              std::llround((2 * sbh * (24 * 1024 + 4 * 512) + logits) / 1e5));
    EXPECT_EQ(with_output.stages[3].input_ns,
              std::llround((2 * sbh * (24 * 1024 + 8 * 512) + logits) / 1e5));
    EXPECT_EQ(with_output.stages[3].weight_ns, std::llround((2 * sbh * 24 * 1024 + logits) / 1e5));
}

TEST(TransformerVocabulary, PartitionWeighsTheOutputLayerAndMovesLayersOffTheLastStage) {
    const LayerCosts costs = partition_layer_costs(transformer_experiment(64000));
    const std::int64_t output = std::llround(2.0 * 512 * 2 * 1024 * 64000 / 1e5);
    EXPECT_EQ(costs.loss.forward_ns, output);
    EXPECT_EQ(costs.loss.input_ns, output);
    EXPECT_EQ(costs.loss.weight_ns, output);
    EXPECT_EQ(costs.loss.backward_ns, 2 * output);
    EXPECT_EQ(partition_layer_costs(transformer_experiment(0)).loss.forward_ns, 0);
    const PartitionResult result = best_partition(transformer_experiment(64000));
    EXPECT_EQ(result.layers_per_stage, (std::vector<int>{2, 2, 3, 1}));
    EXPECT_EQ(best_partition(transformer_experiment(0)).layers_per_stage,
              (std::vector<int>{2, 2, 2, 2}));
}

TEST(TransformerVocabulary, AFileReadsAndWritesIt) {
    const Experiment read = parse_experiment_toml(
        "[schedule]\nkind = \"1F1B\"\npp = 4\nm = 8\n[transformer]\nlayers = 8\nhidden = 1024\n"
        "sequence = 512\nheads = 16\ndevice_tflops = 100\nvocabulary = 64000\n",
        "exp.toml");
    ASSERT_TRUE(read.transformer);
    EXPECT_EQ(read.transformer->vocabulary, 64000);
    EXPECT_NE(experiment_to_toml(read).find("vocabulary = 64000"), std::string::npos);
    // Without one, a written file stays as it was.
    EXPECT_EQ(experiment_to_toml(transformer_experiment(0)).find("vocabulary"), std::string::npos);
}

}  // namespace
}  // namespace pipelens::sim
