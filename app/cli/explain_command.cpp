// `pipelens explain [EXPERIMENT.toml] [--model … --schedule … --pp … --v … --m …] [--json]`: a
// pipeline's make-up before it runs (stages, split, ops, parameters, boundary metadata, the
// schedule's static check), in ExplainOutput's style or as JSON.
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/model_options.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "engine/runtime/pipeline_explain.hpp"
#include "sim/zero_bubble_inputs.hpp"

namespace pipelens::cli {
namespace {

struct ExplainOptions {
    ExperimentOptions experiment;
    ModelOptions model;
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
    json["graph_count"] = explanation.stages.size();
    json["graph_break_count"] = runtime::break_reasons(explanation).size();
    json["break_reasons"] = runtime::break_reasons(explanation);
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
    apply_model_options(options.model, experiment);
    sim::resolve_zero_bubble_inputs(experiment);  // after the overrides: they change stage costs
    const Schedule lowered = lowered_schedule_for(experiment);
    const run_record::PipelineRunOptions run = pipeline_options_for(experiment.model);
    refuse_model_too_large("explain", experiment, lowered, 1, /*reference=*/false);
    runtime::PipelineExplanation explanation;
    try {
        explanation = runtime::explain_pipeline(run, lowered);
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: explain: {}", error.what()));
    }
    if (options.json)
        fmt::print("{}\n", json_text(explanation_json(explanation)));
    else
        fmt::print("{}", runtime::format_explanation(explanation));
}

}  // namespace

void add_explain_command(CLI::App& app) {
    auto options = std::make_shared<ExplainOptions>();
    CLI::App* command = app.add_subcommand("explain", kExplainDescription);
    add_experiment_options(*command, options->experiment, /*with_costs=*/false);
    add_model_options(*command, options->model);
    command->add_flag("--json", options->json, "Print one JSON object");
    command->callback([options] { run_explain(*options); });
}

}  // namespace pipelens::cli
