// One pipeline stage on a rank: its layers, the metadata its boundaries were fixed to, and per
// microbatch the state backward needs. F keeps the graph; I computes the input gradients and,
// in the same pass, captures the gradient arriving at each weight-using autograd node (keeping
// the graph); W computes from those only the weight gradients; B does both in one pass.
// The last stage computes the loss (mean squared error against the target, divided by the
// microbatch count, so gradients accumulated over microbatches equal the whole batch's).
//
// Invariants: a stage's inputs are leaves cut from whatever produced them (a receive buffer or
// the previous stage on the same rank), so each stage's graph ends at its own boundary; state
// for a microbatch (with what I captured for W) is dropped once its last backward part ran;
// I then W accumulates the same parameter gradients as B.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/csrc/autograd/edge.h>

#include "engine/runtime/model_library.hpp"
#include "engine/runtime/stage_backend.hpp"
#include "engine/tensor/tensor_meta.hpp"

namespace pipelens::runtime {

struct StageMeta {
    std::vector<TensorMeta> inputs;   // per microbatch, as shape inference fixed them
    std::vector<TensorMeta> outputs;  // the last stage's: the model's outputs
};

class PipelineStage {
  public:
    // Builds the stage's backend (backend_choice.hpp), which may throw BackendError. With
    // `keep_outputs` every forward's outputs are kept for the accuracy check. `device` is where
    // the layers' parameters are (device_placement.hpp): the backend traces them there.
    PipelineStage(int index, int stage_count, int microbatch_count, std::vector<ModelLayer> layers,
                  StageMeta meta, const std::string& backend = "eager", bool keep_outputs = false,
                  const c10::Device& device = c10::kCPU);

    int index() const { return index_; }
    bool is_last() const { return index_ == stage_count_ - 1; }
    const StageMeta& meta() const { return meta_; }
    const std::string& backend_name() const { return backend_.name(); }
    const std::vector<ModelLayer>& layers() const { return layers_; }

    // Runs the layers on `inputs` (cut into leaves here). Returns the outputs detached, ready
    // to send; on the last stage also computes the loss against `target`. `on_outputs`, when
    // given, sees the outputs (after the backend's own checks), on every stage the last
    // included, and returns what the stage goes on with: the executor injects faults and
    // validates the outputs' metadata there (it may throw; then nothing of the microbatch is
    // kept).
    using OutputHook = std::function<TensorList(TensorList)>;
    TensorList forward(int microbatch, const TensorList& inputs, const torch::Tensor& target,
                       const OutputHook& on_outputs = {});
    // Input gradients (undefined for inputs without gradient), keeping the graph and what W
    // needs.
    TensorList backward_input(int microbatch, const TensorList& output_gradients);
    void backward_weight(int microbatch);
    // After I: whether W will compute only weight gradients from what I captured (false: W
    // walks the whole stage's backward again, see pipeline_stage.cpp for when).
    bool splits_weight_backward(int microbatch) const;
    // Forgets a microbatch's forward without running its backward (a forward timed alone).
    void drop(int microbatch) { states_.erase(microbatch); }
    // I and W together: accumulates weight gradients, returns the input gradients.
    TensorList full_backward(int microbatch, const TensorList& output_gradients);

    // Starts a new step: clears gradients and per-microbatch state, as optimizer.zero_grad()
    // would between steps.
    void reset();

    // Last stage, after F. Waits for the device: read it after the step, not inside it.
    double loss(int microbatch) const;
    const torch::Tensor& output(int microbatch) const;  // last stage: the model's output
    // With keep_outputs: what the forward of `microbatch` produced (the model's output on the
    // last stage).
    const TensorList& kept_outputs(int microbatch) const;
    std::vector<torch::Tensor> parameters() const;

  private:
    // One autograd node on the input gradients' path that also feeds parameters: the gradients
    // I captured at its inputs, the parameters' accumulators W reaches from it, and which of its
    // edges continue down the input path (W cuts them).
    struct WeightPart {
        torch::autograd::edge_list inputs;  // (node, input_nr) with a captured gradient
        TensorList gradients;
        torch::autograd::edge_list parameters;
        std::vector<std::uint32_t> input_path_edges;
    };

    struct MicrobatchState {
        TensorList inputs;  // leaves
        TensorList outputs;
        torch::Tensor loss;
        torch::Tensor final_output;
        TensorList roots;                    // what backward starts from
        TensorList root_grads;               // and with which gradients
        bool weight_parts_captured = false;  // by I; otherwise W runs from the roots
        std::vector<WeightPart> weight_parts;
    };

    MicrobatchState& state(int microbatch, const char* action);
    void set_roots(MicrobatchState& state, const TensorList& output_gradients) const;
    TensorList input_gradients_of(const MicrobatchState& state) const;
    // The accumulator node of each parameter some recorded graph uses, by address.
    std::unordered_map<const torch::autograd::Node*, std::shared_ptr<torch::autograd::Node>>
    parameter_accumulators() const;

    int index_;
    int stage_count_;
    int microbatch_count_;
    std::vector<ModelLayer> layers_;
    StageMeta meta_;
    std::map<int, MicrobatchState> states_;
    // Kept on the device until read: reading each microbatch's loss to the host as F computed it
    // made the host wait for the GPU once per microbatch, in the timed step.
    std::map<int, torch::Tensor> losses_;
    std::map<int, torch::Tensor> final_outputs_;
    bool keep_outputs_;
    std::map<int, TensorList> kept_outputs_;
    StageBackend backend_;
};

}  // namespace pipelens::runtime
