// Setting a pipeline up, shared by runs and explanations: the model spec from run options, the
// split into stages, the batch cut into microbatches, and shape inference on one microbatch.
// Internal to engine/runtime (it speaks LibTorch).
#pragma once

#include <vector>

#include "engine/runtime/model_library.hpp"
#include "engine/runtime/pipeline_run.hpp"
#include "engine/runtime/pipeline_stage.hpp"
#include "engine/stage_plan/stage_split.hpp"

namespace pipelens::runtime {

// `options` with the model's layer count made explicit (model_layer_count: two per rank when
// none was given), so that every model built for this run, reference included, is the same.
run_record::PipelineRunOptions with_model_layers(run_record::PipelineRunOptions options,
                                                 const Schedule& lowered);

// Expects options.layers resolved by with_model_layers.
ModelSpec model_spec(const run_record::PipelineRunOptions& options);

std::vector<std::string> layer_names(const PipelineModel& model);  // in layer order
std::vector<StageLayers> plan_stages(const PipelineModel& model,
                                     const run_record::PipelineRunOptions& options,
                                     int stage_count);

std::vector<ModelLayer> layers_of(const PipelineModel& model, const StageLayers& stage);

struct Batch {
    std::vector<TensorList> microbatch_inputs;
    std::vector<torch::Tensor> targets;
    TensorList whole_inputs;
    torch::Tensor whole_target;
};

// The whole batch and its m microbatches, cut along options.chunk_dim. Throws
// std::invalid_argument when it does not split into equal microbatches.
Batch make_batch(const PipelineModel& model, const run_record::PipelineRunOptions& options,
                 int microbatches);

// Runs microbatch 0 through the stages in order, recording what crosses every boundary.
std::vector<StageMeta> infer_shapes(const PipelineModel& model,
                                    const std::vector<StageLayers>& stages, const Batch& batch);

}  // namespace pipelens::runtime
