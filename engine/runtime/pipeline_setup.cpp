// Pipeline set-up: everything decided before a step runs. Split and shape errors surface here,
// once, with messages naming the split point, the dim or the batch size.
#include "engine/runtime/pipeline_setup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/runtime/out_of_memory.hpp"
#include "engine/runtime/torch_meta.hpp"

namespace pipelens::runtime {
namespace {

// Splits along options.chunk_dim into m equal microbatches (upstream's TensorChunkSpec).
TensorList split_into_microbatches(const torch::Tensor& tensor, int microbatches, int dim,
                                   const std::string& what) {
    if (dim < 0 || dim >= tensor.dim())
        throw std::invalid_argument(fmt::format("cannot split the {} along dim {}: it has {} dims",
                                                what, dim, tensor.dim()));
    if (tensor.size(dim) < microbatches || tensor.size(dim) % microbatches != 0)
        throw std::invalid_argument(
            fmt::format("{} of size {} along dim {} does not split into m={} equal microbatches",
                        what, tensor.size(dim), dim, microbatches));
    return tensor.chunk(microbatches, dim);
}

}  // namespace

run_record::PipelineRunOptions with_model_layers(run_record::PipelineRunOptions options,
                                                 const Schedule& lowered) {
    options.layers = model_layer_count(options.layers, lowered.rank_count, lowered.stage_count);
    return options;
}

ModelSpec model_spec(const run_record::PipelineRunOptions& options) {
    ModelSpec spec;
    spec.name = options.model;
    spec.layers = options.layers;
    spec.hidden = options.hidden;
    spec.sequence = options.sequence;
    spec.heads = options.heads;
    spec.input_shape = options.input_shape;
    spec.seed = options.seed;
    return spec;
}

std::vector<std::string> layer_names(const PipelineModel& model) {
    std::vector<std::string> names;
    for (const ModelLayer& layer : model.layers)
        names.push_back(layer.name);
    return names;
}

std::vector<StageLayers> plan_stages(const PipelineModel& model,
                                     const run_record::PipelineRunOptions& options,
                                     int stage_count) {
    std::vector<SplitPoint> points;
    for (const std::string& text : options.split_points)
        points.push_back(parse_split_point(text));
    return split_layers(layer_names(model), stage_count, points);
}

std::vector<ModelLayer> layers_of(const PipelineModel& model, const StageLayers& stage) {
    return {model.layers.begin() + stage.first, model.layers.begin() + stage.first + stage.count};
}

Batch make_batch(const PipelineModel& model, const run_record::PipelineRunOptions& options,
                 int microbatches) {
    if (options.chunk_dim == 0 &&
        (options.batch_size < microbatches || options.batch_size % microbatches != 0))
        throw std::invalid_argument(
            fmt::format("batch size {} does not split into m={} equal microbatches",
                        options.batch_size, microbatches));
    Batch batch;
    std::tie(batch.whole_inputs, batch.whole_target) =
        model.make_batch(options.batch_size, options.seed);
    batch.microbatch_inputs.resize(microbatches);
    for (const torch::Tensor& input : batch.whole_inputs) {
        const TensorList chunks =
            split_into_microbatches(input, microbatches, options.chunk_dim, "input");
        for (int index = 0; index < microbatches; ++index)
            batch.microbatch_inputs[index].push_back(chunks[index].contiguous());
    }
    for (const torch::Tensor& chunk :
         split_into_microbatches(batch.whole_target, microbatches, options.chunk_dim, "target"))
        batch.targets.push_back(chunk.contiguous());
    return batch;
}

std::vector<StageMeta> infer_shapes(const PipelineModel& model,
                                    const std::vector<StageLayers>& stages, const Batch& batch) {
    std::vector<StageMeta> metas(stages.size());
    TensorList values = batch.microbatch_inputs.at(0);
    for (std::size_t index = 0; index < stages.size(); ++index) {
        TensorList inputs;
        for (const torch::Tensor& value : values)
            inputs.push_back(value.detach().requires_grad_(index > 0 && value.requires_grad()));
        metas[index].inputs = metas_of(inputs);
        try {
            values = run_layers(layers_of(model, stages[index]), inputs);
        } catch (const c10::Error& error) {
            if (is_torch_out_of_memory(error))
                throw;  // too large, not a model that cannot take its microbatches
            // Found once, here, rather than as a LibTorch error on a rank: the model cannot
            // take the microbatches it is given (another --chunk-dim, --input-shape or split).
            std::string shapes;
            for (const torch::Tensor& input : inputs)
                shapes += fmt::format("{}[{}]", shapes.empty() ? "" : ", ",
                                      fmt::join(input.sizes().vec(), ", "));
            throw std::invalid_argument(fmt::format(
                "stage {} cannot run on its first microbatch ({}; the batch is cut into "
                "microbatches along --chunk-dim): {}",
                index, shapes, error.what_without_backtrace()));
        }
        metas[index].outputs = metas_of(values);
    }
    return metas;
}

}  // namespace pipelens::runtime
