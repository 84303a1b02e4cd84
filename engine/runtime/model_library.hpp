// The built-in models a pipeline can run, each as an ordered list of named layers that map a
// list of tensors to a list of tensors, so a model splits into stages between any two layers
// and a stage boundary may carry several tensors (some without gradients):
//
//   mlp          a stack of MLP blocks (Linear, ReLU, Linear), like upstream's MultiMLP
//   example      upstream's ExampleCode, repeated: matmul with a parameter, ReLU, a value that
//                does not require grad carried across the boundary, a skip connection
//   kwargs       upstream's ModelWithKwargs: a second input `y` passed by keyword into layer 0
//   transformer  pre-norm transformer blocks (self-attention and MLP with residuals)
//   tied         an embedding-like projection whose weight the last layer reuses transposed
//                (a parameter used by two stages, replicated; see shared_parameters.hpp)
//   empty        layers that only scale by a scalar parameter (the runtime's own overhead)
//   FILE.pt      a TorchScript module, its top-level children as the layers (each called with
//                the previous child's output)
//
// Every rank builds the whole model from the same seed, so all ranks and the single-rank
// reference agree on the parameters without sending them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace pipelens::runtime {

using TensorList = std::vector<torch::Tensor>;

struct ModelLayer {
    std::string name;
    std::function<TensorList(const TensorList&)> forward;
    std::vector<torch::Tensor> parameters;
};

struct ModelSpec {
    std::string name = "mlp";  // a built-in name or a TorchScript file path
    int layers = 2;            // resolved by with_model_layers; at least the stage count
    int hidden = 64;
    int sequence = 16;                      // transformer only
    int heads = 4;                          // transformer only
    std::vector<std::int64_t> input_shape;  // TorchScript only: one sample's shape
    std::uint64_t seed = 0;
};

struct PipelineModel {
    std::string name;
    std::vector<ModelLayer> layers;
    std::vector<std::string> input_names;       // model inputs, e.g. {"x"} or {"x", "y"}
    std::vector<std::shared_ptr<void>> owners;  // keeps the modules the layers call alive
    // Tensors the layers use that are not parameters (constants, TorchScript buffers): they
    // move to the run's device with the parameters (device_placement.hpp).
    std::vector<torch::Tensor> buffers;
    // A batch of `batch_size` samples: the model inputs and the regression target.
    std::function<std::pair<TensorList, torch::Tensor>(int batch_size, std::uint64_t seed)>
        make_batch;
};

// Builds the model for `stage_count` stages (layers = 2 per stage unless given). Throws
// std::invalid_argument naming the model for an unknown name or an unloadable file.
PipelineModel build_model(const ModelSpec& spec, int stage_count);

// The ReLU every built-in model calls. While a ScopedReluReplacement is alive on this thread,
// the replacement runs instead: that is how the fault-injecting stage backends reach a stage's
// activation functions (a TorchScript model's ReLUs are out of their reach).
torch::Tensor model_relu(const torch::Tensor& input);

using ReluReplacement = std::function<torch::Tensor(const torch::Tensor&)>;

class ScopedReluReplacement {
  public:
    explicit ScopedReluReplacement(const ReluReplacement* replacement);
    ~ScopedReluReplacement();
    ScopedReluReplacement(const ScopedReluReplacement&) = delete;
    ScopedReluReplacement& operator=(const ScopedReluReplacement&) = delete;

  private:
    const ReluReplacement* previous_;
};

// Runs all layers in order: the single-rank reference.
TensorList run_layers(const std::vector<ModelLayer>& layers, TensorList values);

// The loss every model trains with, the last stage's and the reference's alike: the mean squared
// error, computed in float32 whatever the run's dtype (a bfloat16 output and target are widened,
// as mixed-precision training computes its loss; LibTorch 1.13's CPU mse_loss has no bfloat16
// kernel). A float32 output and target are used as they are.
torch::Tensor model_loss(const torch::Tensor& output, const torch::Tensor& target);

}  // namespace pipelens::runtime
