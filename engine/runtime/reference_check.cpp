// The single-rank reference and the stage-by-stage accuracy check (see reference_check.hpp).
#include "engine/runtime/reference_check.hpp"

#include <algorithm>
#include <cmath>

#include "engine/runtime/device_placement.hpp"
#include "engine/runtime/model_library.hpp"

namespace pipelens::runtime {
namespace {

// Whether `actual` is within tolerance of `expected`; raises `max_error` to their largest gap.
bool close(const torch::Tensor& actual, const torch::Tensor& expected,
           const run_record::ReferenceTolerance& tolerance, double& max_error) {
    max_error = run_record::larger_error(max_error, (actual - expected).abs().max().item<double>());
    return torch::allclose(actual, expected, tolerance.relative, tolerance.absolute);
}

// The reference model, built from the run's seed and placed as the rank's model is.
PipelineModel placed_reference(const run_record::PipelineRunOptions& options, int stage_count) {
    PipelineModel reference = build_model(model_spec(options), stage_count);
    place_model(reference, torch_device(options.device), run_scalar_type(options.dtype));
    return reference;
}

}  // namespace

// The single-rank reference: the whole model on the whole batch, compared with what this rank
// computed for its stages.
void compare_with_reference(const run_record::PipelineRunOptions& options, int stage_count,
                            const std::vector<StageLayers>& stages, const RankPlan& plan,
                            const Batch& batch, RankReport& report) {
    const run_record::ReferenceTolerance tolerance = run_record::reference_tolerance(options.dtype);
    PipelineModel reference = placed_reference(options, stage_count);
    const torch::Tensor output = run_layers(reference.layers, batch.whole_inputs).at(0);
    const torch::Tensor loss = model_loss(output, batch.whole_target);
    loss.backward();
    report.reference_loss = loss.item<double>();
    for (const auto& [index, stage] : plan.stages) {
        const std::vector<torch::Tensor> mine = stage->parameters();
        std::vector<torch::Tensor> theirs;
        for (const ModelLayer& layer : layers_of(reference, stages[index]))
            theirs.insert(theirs.end(), layer.parameters.begin(), layer.parameters.end());
        for (std::size_t at = 0; at < mine.size() && at < theirs.size(); ++at) {
            if (!mine[at].grad().defined() || !theirs[at].grad().defined()) {
                report.gradients_match &= mine[at].grad().defined() == theirs[at].grad().defined();
                continue;
            }
            report.gradients_match &=
                close(mine[at].grad(), theirs[at].grad(), tolerance, report.gradient_max_error);
        }
        if (stage->is_last()) {
            TensorList outputs;
            for (int microbatch = 0; microbatch < static_cast<int>(batch.targets.size());
                 ++microbatch)
                outputs.push_back(stage->output(microbatch));
            report.outputs_match = close(torch::cat(outputs, options.chunk_dim), output.detach(),
                                         tolerance, report.output_max_error);
        }
    }
}

// Every stage of this rank against the reference model run stage by stage on the same
// microbatch: the first stage whose outputs diverge is where the error entered.
std::vector<run_record::StageAccuracy> check_stage_accuracy(
    const run_record::PipelineRunOptions& options, int stage_count,
    const std::vector<StageLayers>& stages, const RankPlan& plan, const Batch& batch) {
    const run_record::ReferenceTolerance tolerance = run_record::reference_tolerance(options.dtype);
    PipelineModel reference = placed_reference(options, stage_count);
    torch::NoGradGuard no_grad;
    std::vector<run_record::StageAccuracy> results;
    for (int microbatch = 0; microbatch < static_cast<int>(batch.microbatch_inputs.size());
         ++microbatch) {
        TensorList values = batch.microbatch_inputs[microbatch];
        for (int index = 0; index < stage_count; ++index) {
            values = run_layers(layers_of(reference, stages[index]), values);
            const auto held = plan.stages.find(index);
            if (held == plan.stages.end())
                continue;
            const TensorList& actual = held->second->kept_outputs(microbatch);
            run_record::StageAccuracy entry{index, microbatch, 0, 0, false, false};
            double largest = 0;
            for (std::size_t at = 0; at < actual.size() && at < values.size(); ++at) {
                entry.non_finite |= actual[at].is_floating_point() &&
                                    !torch::isfinite(actual[at]).all().item<bool>();
                if (!actual[at].is_floating_point() || actual[at].sizes() != values[at].sizes()) {
                    entry.diverges |= !actual[at].equal(values[at]);
                    continue;
                }
                const torch::Tensor expected = values[at].to(actual[at].scalar_type());
                largest = std::max(largest, expected.abs().max().item<double>());
                entry.diverges |= !close(actual[at], expected, tolerance, entry.max_abs_error);
            }
            entry.max_relative_error =
                largest > 0 || std::isnan(entry.max_abs_error) ? entry.max_abs_error / largest : 0;
            results.push_back(entry);
        }
    }
    return results;
}

}  // namespace pipelens::runtime
