// `pipelens explain [EXPERIMENT.toml] [--model … --schedule … --pp … --v … --m …] [--json]`: a
// pipeline's make-up before it runs (stages, split, ops, parameters, boundary metadata, the
// schedule's static check), in ExplainOutput's style or as JSON.
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "engine/experiment/experiment_schedule.hpp"
#include "engine/runtime/pipeline_explain.hpp"

namespace pipelens::cli {
namespace {

struct ExplainOptions {
    ExperimentOptions experiment;
    std::optional<std::string> model;
    std::optional<int> layers, hidden, batch;
    std::vector<std::string> split_points;
    bool json = false;
};

nlohmann::ordered_json metas_json(const std::vector<TensorMeta>& metas) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const TensorMeta& meta : metas)
        list.push_back({{"dtype", meta.dtype},
                        {"shape", meta.shape},
                        {"stride", meta.stride},
                        {"requires_grad", meta.requires_grad}});
    return list;
}

nlohmann::ordered_json explanation_json(const runtime::PipelineExplanation& explanation) {
    nlohmann::ordered_json json;
    json["model"] = explanation.model;
    json["stage_count"] = explanation.stage_count;
    json["split"] = explanation.split_policy;
    json["op_count"] = explanation.op_count;
    json["parameter_count"] = explanation.parameter_count;
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (const runtime::StageExplanation& stage : explanation.stages)
        stages.push_back({{"stage", stage.stage},
                          {"rank", stage.rank},
                          {"layers", stage.layers},
                          {"inputs", metas_json(stage.inputs)},
                          {"outputs", metas_json(stage.outputs)},
                          {"parameter_count", stage.parameter_count},
                          {"ops", stage.ops}});
    json["stages"] = std::move(stages);
    json["schedule"] = explanation.schedule;
    json["static_check"] = explanation.static_check;
    return json;
}

void run_explain(const ExplainOptions& options) {
    Experiment experiment = load_experiment(options.experiment);
    const Schedule lowered = lowered_schedule_for(experiment);
    runtime::PipelineRunOptions run;
    const ModelDescription& model = experiment.model;
    run.model = options.model.value_or(model.name);
    run.layers = options.layers.value_or(model.layers);
    run.hidden = options.hidden.value_or(model.hidden);
    run.sequence = model.sequence;
    run.heads = model.heads;
    run.input_shape = model.input_shape;
    run.seed = model.seed;
    run.split_points = options.split_points.empty() ? model.split_points : options.split_points;
    run.batch_size = options.batch.value_or(model.batch_size);
    run.chunk_dim = model.chunk_dim;
    runtime::PipelineExplanation explanation;
    try {
        explanation = runtime::explain_pipeline(run, lowered);
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: explain: {}", error.what()));
    }
    if (options.json)
        fmt::print("{}\n", explanation_json(explanation).dump());
    else
        fmt::print("{}", runtime::format_explanation(explanation));
}

}  // namespace

void add_explain_command(CLI::App& app) {
    auto options = std::make_shared<ExplainOptions>();
    CLI::App* command = app.add_subcommand(
        "explain", "Show a pipeline's stages, split, ops, parameters and boundary metadata");
    add_experiment_options(*command, options->experiment, /*with_costs=*/false);
    command->add_option("--model", options->model,
                        "mlp, example, kwargs, transformer, tied, empty, or a TorchScript .pt");
    command->add_option("--layers", options->layers, "Model layers (default: two per stage)");
    command->add_option("--hidden", options->hidden, "Hidden size");
    command->add_option("--batch", options->batch, "Batch size (split into m microbatches)");
    command->add_option("--split", options->split_points,
                        "Split point: LAYER (split before it) or LAYER:end; repeatable");
    command->add_flag("--json", options->json, "Print one JSON object");
    command->callback([options] { run_explain(*options); });
}

}  // namespace pipelens::cli
