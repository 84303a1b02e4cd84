// Pipeline explanation: set-up as a run does it, then each stage's ops captured while one
// microbatch goes through it (op_capture.hpp).
#include "engine/runtime/pipeline_explain.hpp"

#include <set>

#include <fmt/format.h>

#include "engine/runtime/op_capture.hpp"
#include "engine/runtime/pipeline_setup.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens::runtime {
namespace {

std::string split_policy(const run_record::PipelineRunOptions& options, std::size_t layer_count,
                         int stage_count) {
    if (options.split_points.empty())
        return fmt::format("even: {} layers over {} stages (no split points given)", layer_count,
                           stage_count);
    std::string points;
    for (const std::string& text : options.split_points) {
        const SplitPoint point = parse_split_point(text);
        points += fmt::format("{}{} ({})", points.empty() ? "" : ", ", point.layer,
                              point.at_end ? "END" : "BEGINNING");
    }
    return "split points: " + points;
}

std::string static_check_text(const Schedule& lowered) {
    const CheckReport report = check_structure(lowered);
    if (!report.ok())
        return report.text();
    const DryRunResult dry = dry_run(lowered);
    if (!dry.completed)
        return dry.hang.text();
    return "ok (structure checked, dry run completes without a wait cycle)";
}

}  // namespace

PipelineExplanation explain_pipeline(const run_record::PipelineRunOptions& given,
                                     const Schedule& lowered) {
    const run_record::PipelineRunOptions options = with_model_layers(given, lowered);
    const int stage_count = lowered.stage_count;
    const PipelineModel model = build_model(model_spec(options), stage_count);
    const std::vector<StageLayers> stages = plan_stages(model, options, stage_count);
    const Batch batch = make_batch(model, options, lowered.microbatch_count);
    const std::vector<StageMeta> metas = infer_shapes(model, stages, batch);

    PipelineExplanation explanation;
    explanation.model = options.model;
    explanation.stage_count = stage_count;
    explanation.split_policy = split_policy(options, model.layers.size(), stage_count);
    explanation.schedule = fmt::format("{} pp={} v={} m={}", lowered.name, lowered.rank_count,
                                       lowered.stages_per_rank, lowered.microbatch_count);
    explanation.static_check = static_check_text(lowered);
    TensorList values = batch.microbatch_inputs.at(0);
    std::set<const void*> counted;  // the parameters in the model's count so far
    for (int index = 0; index < stage_count; ++index) {
        StageExplanation stage;
        stage.stage = index;
        stage.rank = lowered.stage_to_rank[index];
        const std::vector<ModelLayer> layers = layers_of(model, stages[index]);
        for (const ModelLayer& layer : layers) {
            stage.layers.push_back(layer.name);
            for (const torch::Tensor& parameter : layer.parameters) {
                stage.parameter_count += parameter.numel();
                // A tied weight (one tensor in two layers) is the model's once, each stage's
                // that holds it.
                if (counted.insert(parameter.unsafeGetTensorImpl()).second)
                    explanation.parameter_count += parameter.numel();
            }
        }
        stage.inputs = metas[index].inputs;
        stage.outputs = metas[index].outputs;
        torch::NoGradGuard no_grad;
        stage.ops = capture_ops(layers, values);
        values = run_layers(layers, values);
        explanation.op_count += static_cast<std::int64_t>(stage.ops.size());
        explanation.stages.push_back(std::move(stage));
    }
    return explanation;
}

std::vector<std::string> break_reasons(const PipelineExplanation& explanation) {
    std::vector<std::string> reasons;
    for (std::size_t index = 1; index < explanation.stages.size(); ++index) {
        const StageExplanation& stage = explanation.stages[index];
        reasons.push_back(fmt::format("pipeline split: stage {} (rank {}) begins at {}",
                                      stage.stage, stage.rank,
                                      stage.layers.empty() ? "no layer" : stage.layers.front()));
    }
    return reasons;
}

std::string format_explanation(const PipelineExplanation& explanation) {
    // First upstream's ExplainOutput, line for line, with each stage a graph and each stage
    // boundary a break; then what only a pipeline has.
    const std::vector<std::string> reasons = break_reasons(explanation);
    std::string text = fmt::format("Graph Count: {}\nGraph Break Count: {}\nOp Count: {}\n",
                                   explanation.stages.size(), reasons.size(), explanation.op_count);
    text += "Break Reasons:\n";
    for (std::size_t index = 0; index < reasons.size(); ++index)
        text += fmt::format("  Break Reason {}:\n    Reason: {}\n    User Stack:\n      {}\n",
                            index + 1, reasons[index], explanation.split_policy);
    text += "Ops per Graph:\n";
    for (std::size_t index = 0; index < explanation.stages.size(); ++index) {
        text += fmt::format("  Ops {}:\n", index + 1);
        for (const std::string& op : explanation.stages[index].ops)
            text += fmt::format("    {}\n", op);
    }
    text += fmt::format("Model: {}\nStage Count: {}\nSplit: {}\nParameter Count: {}\n",
                        explanation.model, explanation.stage_count, explanation.split_policy,
                        explanation.parameter_count);
    text += "Stages:\n";
    for (const StageExplanation& stage : explanation.stages) {
        std::string layers;
        for (const std::string& layer : stage.layers)
            layers += (layers.empty() ? "" : ", ") + layer;
        text += fmt::format("  Stage {} (rank {}): {}\n", stage.stage, stage.rank, layers);
        text += fmt::format("    Inputs: {}\n", to_string(stage.inputs));
        text += fmt::format("    Outputs: {}\n", to_string(stage.outputs));
        text += fmt::format("    Parameters: {}\n", stage.parameter_count);
        text += fmt::format("    Ops: {} (Ops {} above)\n", stage.ops.size(), stage.stage + 1);
    }
    text += fmt::format("Schedule: {}\nStatic Check: {}\n", explanation.schedule,
                        explanation.static_check);
    return text;
}

}  // namespace pipelens::runtime
