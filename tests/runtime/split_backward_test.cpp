// The split backward of PipelineStage: I then W accumulates exactly the parameter gradients B
// does (and I returns B's input gradients) for every built-in model on multi-layer stages,
// first, middle and last; W runs only weight gradients, never a later layer's input path
// again; a parameter tied within a stage makes W fall back to the whole-stage backward, still
// exact.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <string>
#include <vector>

#include "engine/runtime/model_library.hpp"
#include "engine/runtime/pipeline_stage.hpp"
#include "engine/runtime/torch_meta.hpp"

namespace pipelens::runtime {
namespace {

constexpr int kMicrobatches = 2;

struct StageRun {
    TensorList parameter_gradients;
    std::vector<TensorList> input_gradients;  // per microbatch
    std::vector<bool> split;                  // per microbatch: W used what I captured
};

// The stage's inputs for one microbatch: what the layers before it produce, cut into fresh
// values (a received buffer), and the metadata shape inference would fix.
struct StageCase {
    std::vector<ModelLayer> layers;
    StageMeta meta;
    std::vector<TensorList> inputs;  // per microbatch
    std::vector<torch::Tensor> targets;
    std::vector<TensorList> output_gradients;
};

StageCase stage_case(const PipelineModel& model, std::size_t first, std::size_t last) {
    StageCase result;
    result.layers.assign(model.layers.begin() + first, model.layers.begin() + last);
    for (int microbatch = 0; microbatch < kMicrobatches; ++microbatch) {
        auto [values, target] = model.make_batch(4, 7 + microbatch);
        for (std::size_t layer = 0; layer < first; ++layer)
            values = model.layers[layer].forward(values);
        const TensorList outputs = run_layers(result.layers, values);
        if (microbatch == 0)
            result.meta = {metas_of(values), metas_of(outputs)};
        TensorList inputs;
        for (const torch::Tensor& value : values)
            inputs.push_back(value.detach().clone());
        result.inputs.push_back(inputs);
        result.targets.push_back(target);
        TensorList gradients;
        for (const torch::Tensor& output : outputs)
            gradients.push_back(torch::randn_like(output));
        result.output_gradients.push_back(gradients);
    }
    return result;
}

TensorList gradients_of(const PipelineStage& stage) {
    TensorList gradients;
    for (const torch::Tensor& parameter : stage.parameters())
        gradients.push_back(parameter.grad().defined() ? parameter.grad().clone()
                                                       : torch::Tensor());
    return gradients;
}

// F of every microbatch, then their backwards: B each, or I each then W each (as zero-bubble
// schedules defer W).
StageRun run(PipelineStage& stage, const StageCase& input, bool split) {
    stage.reset();
    StageRun result;
    for (int microbatch = 0; microbatch < kMicrobatches; ++microbatch)
        stage.forward(microbatch, input.inputs[microbatch], input.targets[microbatch]);
    for (int microbatch = 0; microbatch < kMicrobatches; ++microbatch) {
        const TensorList& gradients = input.output_gradients[microbatch];
        result.input_gradients.push_back(split ? stage.backward_input(microbatch, gradients)
                                               : stage.full_backward(microbatch, gradients));
        result.split.push_back(split && stage.splits_weight_backward(microbatch));
    }
    if (split)
        for (int microbatch = 0; microbatch < kMicrobatches; ++microbatch)
            stage.backward_weight(microbatch);
    result.parameter_gradients = gradients_of(stage);
    return result;
}

void expect_identical(const TensorList& expected, const TensorList& actual,
                      const std::string& what) {
    ASSERT_EQ(expected.size(), actual.size()) << what;
    for (std::size_t index = 0; index < expected.size(); ++index) {
        ASSERT_EQ(expected[index].defined(), actual[index].defined()) << what << " " << index;
        if (expected[index].defined()) {
            EXPECT_TRUE(torch::equal(expected[index], actual[index])) << what << " " << index;
        }
    }
}

// Compares I+W with B on the stage of `layers` [first, last) of `model_name` (4 layers), as
// stage `index` of `stage_count`; returns whether W used what I captured.
bool split_matches_full(const std::string& model_name, std::size_t first, std::size_t last,
                        int index, int stage_count) {
    ModelSpec spec;
    spec.name = model_name;
    spec.layers = 4;
    spec.hidden = 16;
    spec.sequence = 4;
    spec.heads = 2;
    const PipelineModel model = build_model(spec, 2);
    const StageCase input = stage_case(model, first, last);
    PipelineStage stage(index, stage_count, kMicrobatches, input.layers, input.meta);
    const StageRun full = run(stage, input, false);
    const StageRun split = run(stage, input, true);
    const std::string what = model_name + " layers " + std::to_string(first) + ".." +
                             std::to_string(last) + " stage " + std::to_string(index);
    expect_identical(full.parameter_gradients, split.parameter_gradients,
                     what + " parameter gradient");
    for (int microbatch = 0; microbatch < kMicrobatches; ++microbatch)
        expect_identical(full.input_gradients[microbatch], split.input_gradients[microbatch],
                         what + " input gradient");
    EXPECT_EQ(split.split[0], split.split[1]) << what;
    return split.split[0];
}

const std::vector<std::string> kBuiltInModels = {"mlp",         "example", "kwargs",
                                                 "transformer", "tied",    "empty"};

TEST(SplitBackward, MiddleStageGivesBsGradientsFromWeightNodesAlone) {
    for (const std::string& model : kBuiltInModels)
        EXPECT_TRUE(split_matches_full(model, 1, 3, 1, 3)) << model;
}

TEST(SplitBackward, LastStageGivesBsGradientsFromWeightNodesAlone) {
    for (const std::string& model : kBuiltInModels)
        EXPECT_TRUE(split_matches_full(model, 2, 4, 1, 2)) << model;
}

// No stage input needs a gradient: I has nothing to compute and W is the whole backward.
TEST(SplitBackward, FirstStageFallsBackToTheWholeBackwardInW) {
    for (const std::string& model : kBuiltInModels)
        EXPECT_FALSE(split_matches_full(model, 0, 2, 0, 2)) << model;
}

// Identity forward whose backward counts its runs in `count` (an int64 scalar tensor).
struct CountingIdentity : torch::autograd::Function<CountingIdentity> {
    static torch::Tensor forward(torch::autograd::AutogradContext* context, torch::Tensor input,
                                 torch::Tensor count) {
        context->saved_data["count"] = count;
        return input.clone();
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                   torch::autograd::variable_list gradients) {
        context->saved_data["count"].toTensor().add_(1);
        return {gradients[0], torch::Tensor()};
    }
};

ModelLayer matmul_layer(const std::string& name, const torch::Tensor& weight,
                        const torch::Tensor& count = {}) {
    return {name,
            [weight, count](const TensorList& in) -> TensorList {
                const torch::Tensor x =
                    count.defined() ? CountingIdentity::apply(in.at(0), count) : in.at(0);
                return {torch::mm(x, weight)};
            },
            {weight}};
}

StageMeta square_meta(int size) {
    const torch::Tensor value = torch::zeros({size, size}).requires_grad_();
    return {metas_of({value}), metas_of({value})};
}

// Layer 1's input path (the counting identity) runs once in I; the old W ran it again to reach
// layer 0's weight.
TEST(SplitBackward, WeightBackwardDoesNotRunALaterLayersInputPath) {
    const torch::Tensor count = torch::zeros({}, torch::kInt64);
    const torch::Tensor first = torch::randn({3, 3}).requires_grad_();
    const torch::Tensor second = torch::randn({3, 3}).requires_grad_();
    PipelineStage stage(1, 3, 1,
                        {matmul_layer("first", first), matmul_layer("second", second, count)},
                        square_meta(3));
    const torch::Tensor input = torch::randn({3, 3});
    const torch::Tensor output_gradient = torch::randn({3, 3});
    stage.forward(0, {input}, {});
    stage.full_backward(0, {output_gradient});
    EXPECT_EQ(count.item<std::int64_t>(), 1);
    const TensorList full = gradients_of(stage);

    stage.reset();
    stage.forward(0, {input}, {});
    stage.backward_input(0, {output_gradient});
    EXPECT_EQ(count.item<std::int64_t>(), 2);
    ASSERT_TRUE(stage.splits_weight_backward(0));
    stage.backward_weight(0);
    EXPECT_EQ(count.item<std::int64_t>(), 2);
    expect_identical(full, gradients_of(stage), "parameter gradient");
}

// One weight used by both layers: two weight nodes feed it, so W walks the whole stage.
TEST(SplitBackward, WeightTiedWithinTheStageFallsBackAndStaysExact) {
    const torch::Tensor count = torch::zeros({}, torch::kInt64);
    const torch::Tensor tied = torch::randn({3, 3}).requires_grad_();
    PipelineStage stage(1, 3, 1,
                        {matmul_layer("embed", tied), matmul_layer("project", tied, count)},
                        square_meta(3));
    const torch::Tensor input = torch::randn({3, 3});
    const torch::Tensor output_gradient = torch::randn({3, 3});
    stage.forward(0, {input}, {});
    stage.full_backward(0, {output_gradient});
    const torch::Tensor full = tied.grad().clone();

    stage.reset();
    stage.forward(0, {input}, {});
    stage.backward_input(0, {output_gradient});
    EXPECT_FALSE(stage.splits_weight_backward(0));
    stage.backward_weight(0);
    EXPECT_EQ(count.item<std::int64_t>(), 3);  // B once, I once, the whole-stage W once
    EXPECT_TRUE(torch::equal(full, tied.grad()));
    // d/dW of sum(g * (x W) W) = x^T g W^T + (x W)^T g
    const torch::Tensor expected = torch::mm(torch::mm(input.t(), output_gradient), tied.t()) +
                                   torch::mm(torch::mm(input, tied).t(), output_gradient);
    EXPECT_TRUE(torch::allclose(expected, tied.grad(), 1e-5, 1e-6));
}

}  // namespace
}  // namespace pipelens::runtime
