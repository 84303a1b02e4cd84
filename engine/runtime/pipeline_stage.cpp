// Stage execution on LibTorch autograd. I uses autograd::grad on the stage inputs with the
// graph retained; W then runs autograd::backward restricted to the parameters. That recomputes
// nothing in the forward but walks the backward graph twice, which is the price of splitting
// it without hooking autograd internals.
#include "engine/runtime/pipeline_stage.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "engine/runtime/torch_meta.hpp"

namespace pipelens::runtime {

namespace {

// Zeros shaped like the stage's inputs: enough to trace its layers once.
TensorList example_inputs(const StageMeta& meta) {
    TensorList inputs;
    for (const TensorMeta& input : meta.inputs)
        inputs.push_back(empty_like_meta(input).zero_());
    return inputs;
}

}  // namespace

PipelineStage::PipelineStage(int index, int stage_count, int microbatch_count,
                             std::vector<ModelLayer> layers, StageMeta meta,
                             const std::string& backend, bool keep_outputs)
    : index_(index),
      stage_count_(stage_count),
      microbatch_count_(microbatch_count),
      layers_(std::move(layers)),
      meta_(std::move(meta)),
      keep_outputs_(keep_outputs),
      backend_(backend, index, layers_, example_inputs(meta_)) {}

PipelineStage::MicrobatchState& PipelineStage::state(int microbatch, const char* action) {
    const auto found = states_.find(microbatch);
    if (found == states_.end())
        throw std::logic_error(fmt::format("stage {} runs {} of microbatch {} before its forward",
                                           index_, action, microbatch));
    return found->second;
}

TensorList PipelineStage::forward(int microbatch, const TensorList& inputs,
                                  const torch::Tensor& target, const OutputHook& on_outputs) {
    MicrobatchState state;
    for (std::size_t index = 0; index < inputs.size(); ++index) {
        const bool wants_grad = index < meta_.inputs.size() && meta_.inputs[index].requires_grad;
        state.inputs.push_back(inputs[index].detach().requires_grad_(wants_grad));
    }
    if (backend_.checks())
        backend_.check(fmt::format("stage {} inputs", index_), microbatch, meta_.inputs,
                       state.inputs);
    state.outputs = backend_.run(layers_, state.inputs);
    if (backend_.checks())
        backend_.check(fmt::format("stage {} outputs", index_), microbatch, meta_.outputs,
                       state.outputs);
    if (on_outputs)
        state.outputs = on_outputs(std::move(state.outputs));
    if (keep_outputs_) {
        TensorList kept;
        for (const torch::Tensor& output : state.outputs)
            kept.push_back(output.detach().clone());
        kept_outputs_[microbatch] = std::move(kept);
    }
    TensorList sent;
    if (is_last()) {
        state.final_output = state.outputs.at(0);
        state.loss = torch::mse_loss(state.final_output, target);
        if (backend_.checks())
            backend_.check_finite(fmt::format("stage {} loss", index_), microbatch, {state.loss});
        losses_[microbatch] = state.loss.item<double>();
        final_outputs_[microbatch] = state.final_output.detach();
    } else {
        for (const torch::Tensor& output : state.outputs)
            sent.push_back(output.detach());
    }
    states_[microbatch] = std::move(state);
    return sent;
}

void PipelineStage::set_roots(MicrobatchState& state, const TensorList& output_gradients) const {
    state.roots.clear();
    state.root_grads.clear();
    if (is_last()) {
        state.roots.push_back(state.loss / static_cast<double>(microbatch_count_));
        state.root_grads.push_back(torch::ones_like(state.loss));
        return;
    }
    for (std::size_t index = 0; index < state.outputs.size(); ++index) {
        if (!state.outputs[index].requires_grad())
            continue;
        if (index >= output_gradients.size() || !output_gradients[index].defined())
            throw std::runtime_error(fmt::format(
                "stage {}: no gradient arrived for output {}, which requires one", index_, index));
        state.roots.push_back(state.outputs[index]);
        state.root_grads.push_back(output_gradients[index]);
    }
}

TensorList PipelineStage::input_gradients_of(const MicrobatchState& state) const {
    TensorList gradients;
    for (const torch::Tensor& input : state.inputs)
        gradients.push_back(input.requires_grad() && input.grad().defined() ? input.grad()
                                                                            : torch::Tensor());
    return gradients;
}

TensorList PipelineStage::backward_input(int microbatch, const TensorList& output_gradients) {
    MicrobatchState& current = state(microbatch, "I");
    set_roots(current, output_gradients);
    TensorList wanted;
    for (const torch::Tensor& input : current.inputs)
        if (input.requires_grad())
            wanted.push_back(input);
    TensorList gradients(current.inputs.size());
    if (wanted.empty() || current.roots.empty())
        return gradients;
    const TensorList computed = torch::autograd::grad(current.roots, wanted, current.root_grads,
                                                      /*retain_graph=*/true,
                                                      /*create_graph=*/false,
                                                      /*allow_unused=*/true);
    std::size_t next = 0;
    for (std::size_t index = 0; index < current.inputs.size(); ++index)
        if (current.inputs[index].requires_grad())
            gradients[index] = computed[next++];
    if (backend_.checks())
        backend_.check_finite(fmt::format("stage {} input gradients", index_), microbatch,
                              gradients);
    return gradients;
}

void PipelineStage::backward_weight(int microbatch) {
    MicrobatchState& current = state(microbatch, "W");
    const std::vector<torch::Tensor> weights = parameters();
    if (!current.roots.empty() && !weights.empty())
        torch::autograd::backward(current.roots, current.root_grads, /*retain_graph=*/false,
                                  /*create_graph=*/false, weights);
    states_.erase(microbatch);
}

TensorList PipelineStage::full_backward(int microbatch, const TensorList& output_gradients) {
    MicrobatchState& current = state(microbatch, "B");
    set_roots(current, output_gradients);
    if (!current.roots.empty())
        torch::autograd::backward(current.roots, current.root_grads);
    TensorList gradients = input_gradients_of(current);
    if (backend_.checks())
        backend_.check_finite(fmt::format("stage {} input gradients", index_), microbatch,
                              gradients);
    states_.erase(microbatch);
    return gradients;
}

void PipelineStage::reset() {
    for (torch::Tensor& parameter : parameters())
        if (parameter.grad().defined())
            parameter.mutable_grad().reset();
    states_.clear();
    losses_.clear();
    final_outputs_.clear();
    kept_outputs_.clear();
}

const TensorList& PipelineStage::kept_outputs(int microbatch) const {
    const auto found = kept_outputs_.find(microbatch);
    if (found == kept_outputs_.end())
        throw std::logic_error(
            fmt::format("stage {} kept no outputs of microbatch {} (built without keep_outputs?)",
                        index_, microbatch));
    return found->second;
}

double PipelineStage::loss(int microbatch) const {
    return losses_.at(microbatch);
}

const torch::Tensor& PipelineStage::output(int microbatch) const {
    return final_outputs_.at(microbatch);
}

std::vector<torch::Tensor> PipelineStage::parameters() const {
    std::vector<torch::Tensor> all;
    for (const ModelLayer& layer : layers_)
        all.insert(all.end(), layer.parameters.begin(), layer.parameters.end());
    return all;
}

}  // namespace pipelens::runtime
