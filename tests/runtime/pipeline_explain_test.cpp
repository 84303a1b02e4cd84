// `explain` on real models: the ops each stage dispatches (top-level only, named as LibTorch
// 1.13 dispatches them: Linear is aten::t + aten::addmm there), parameter counts
// worked out by hand, boundary metadata, the split policy in words, and the static check.
#include <gtest/gtest.h>

#include "engine/runtime/pipeline_explain.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"

namespace pipelens::runtime {
namespace {

TEST(Explain, MlpStagesOpsAndParameters) {
    run_record::PipelineRunOptions options;
    options.model = "mlp";
    options.hidden = 16;
    options.batch_size = 8;
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4}));
    const PipelineExplanation explanation = explain_pipeline(options, lowered);
    EXPECT_EQ(explanation.stage_count, 2);
    EXPECT_EQ(explanation.split_policy, "even: 4 layers over 2 stages (no split points given)");
    // Each layer: Linear(16, 16), ReLU, Linear(16, 16): 2 * (16 * 16 + 16) = 544 parameters.
    ASSERT_EQ(explanation.stages.size(), 2u);
    EXPECT_EQ(explanation.stages[1].parameter_count, 1088);
    EXPECT_EQ(explanation.parameter_count, 2176);
    EXPECT_EQ(explanation.stages[1].layers, (std::vector<std::string>{"layers.2", "layers.3"}));
    EXPECT_EQ(explanation.stages[1].rank, 1);
    const std::vector<std::string> linear_relu_linear{"aten::t", "aten::addmm", "aten::relu",
                                                      "aten::t", "aten::addmm"};
    std::vector<std::string> two_layers = linear_relu_linear;
    two_layers.insert(two_layers.end(), linear_relu_linear.begin(), linear_relu_linear.end());
    EXPECT_EQ(explanation.stages[0].ops, two_layers);
    EXPECT_EQ(explanation.op_count, 20);
    EXPECT_EQ(to_string(explanation.stages[0].outputs), "(f32[2, 16])");
    EXPECT_EQ(explanation.schedule, "1F1B pp=2 v=1 m=4");
    EXPECT_EQ(explanation.static_check,
              "ok (structure checked, dry run completes without a wait cycle)");
    const std::string text = format_explanation(explanation);
    // Upstream's ExplainOutput, line for line (a stage a graph, a stage boundary a break),
    // then the pipeline's own facts.
    std::string ops;
    for (const std::string& op : two_layers)
        ops += "    " + op + "\n";
    EXPECT_EQ(text.rfind("Graph Count: 2\nGraph Break Count: 1\nOp Count: 20\nBreak Reasons:\n"
                         "  Break Reason 1:\n"
                         "    Reason: pipeline split: stage 1 (rank 1) begins at layers.2\n"
                         "    User Stack:\n"
                         "      even: 4 layers over 2 stages (no split points given)\n"
                         "Ops per Graph:\n  Ops 1:\n" +
                             ops + "  Ops 2:\n" + ops +
                             "Model: mlp\nStage Count: 2\nSplit: even: 4 layers over 2 stages "
                             "(no split points given)\nParameter Count: 2176\nStages:\n"
                             "  Stage 0 (rank 0): layers.0, layers.1\n    Inputs: (f32[2, 16])\n"
                             "    Outputs: (f32[2, 16])\n    Parameters: 1088\n"
                             "    Ops: 10 (Ops 1 above)\n",
                         0),
              0u)
        << text;
}

TEST(Explain, SplitPointsAndMultiTensorBoundaries) {
    run_record::PipelineRunOptions options;
    options.model = "example";
    options.layers = 4;
    options.hidden = 8;
    options.batch_size = 4;
    options.split_points = {"layers.0:end"};
    const Schedule lowered = lower(generate_schedule({ScheduleKind::gpipe, 2, 1, 2}));
    const PipelineExplanation explanation = explain_pipeline(options, lowered);
    EXPECT_EQ(explanation.split_policy, "split points: layers.0 (END)");
    EXPECT_EQ(explanation.stages[0].layers, (std::vector<std::string>{"layers.0"}));
    EXPECT_EQ(to_string(explanation.stages[1].inputs), "(f32[2, 8], f32[8], f32[2, 8])");
    // Layer 0 of ExampleCode: mm, relu, the constant's clone, then the Linear.
    EXPECT_EQ(explanation.stages[0].ops,
              (std::vector<std::string>{"aten::mm", "aten::relu", "aten::clone", "aten::t",
                                        "aten::addmm"}));
}

}  // namespace
}  // namespace pipelens::runtime
