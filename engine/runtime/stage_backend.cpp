// Stage backends. The ReLU-acting ones reach the layers through model_relu's thread-local
// stand-in, installed only for the duration of this stage's forward; tracing the layers once at
// construction tells whether there is a ReLU to act on (and, for compile-error, fails there).
#include "engine/runtime/stage_backend.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "engine/runtime/op_capture.hpp"
#include "engine/runtime/torch_meta.hpp"

namespace pipelens::runtime {
namespace {

bool is_relu(const std::string& op) {
    return op == "aten::relu" || op == "aten::relu_";
}

std::string layer_names(const std::vector<ModelLayer>& layers) {
    std::vector<std::string> names;
    for (const ModelLayer& layer : layers)
        names.push_back(layer.name);
    return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

BackendError::BackendError(std::string kind, int stage, const std::string& message,
                           std::string expected, std::string actual)
    : std::runtime_error(message),
      kind_(std::move(kind)),
      stage_(stage),
      expected_(std::move(expected)),
      actual_(std::move(actual)) {}

StageBackend::StageBackend(std::string name, int stage, const std::vector<ModelLayer>& layers,
                           const TensorList& example_inputs)
    : name_(std::move(name)), stage_(stage) {
    if (name_ == "eager" || name_ == "checked")
        return;
    torch::NoGradGuard no_grad;
    const std::vector<std::string> ops = capture_ops(layers, example_inputs);
    const bool uses_relu = std::any_of(ops.begin(), ops.end(), is_relu);
    if (name_ == "compile-error") {
        if (uses_relu)
            throw BackendError(
                "compile_error", stage_,
                fmt::format("stage {}: backend 'compile-error' raised "
                            "ReluCompileError while compiling {}: it runs aten::relu",
                            stage_, layer_names(layers)));
        throw std::invalid_argument(
            fmt::format("backend 'compile-error' has nothing to act on: stage {} ({}) runs no ReLU",
                        stage_, layer_names(layers)));
    }
    // Count the ReLUs the stand-in reaches: a TorchScript model's own ReLUs it cannot.
    auto reached = std::make_shared<int>(0);
    const ReluReplacement counter = [reached](const torch::Tensor& input) {
        ++*reached;
        return torch::relu(input);
    };
    {
        const ScopedReluReplacement scope(&counter);
        run_layers(layers, example_inputs);
    }
    if (*reached == 0)
        throw std::invalid_argument(fmt::format(
            "backend '{}' has nothing to act on: stage {} ({}) calls no ReLU it can reach{}", name_,
            stage_, layer_names(layers),
            uses_relu ? " (a TorchScript module's ReLUs are out of its reach)" : ""));
    if (name_ == "runtime-error") {
        const int stage_index = stage_;
        replacement_ = [stage_index](const torch::Tensor&) -> torch::Tensor {
            throw BackendError("runtime_error", stage_index,
                               fmt::format("stage {}: backend 'runtime-error' raised "
                                           "ReluRuntimeError: a ReLU ran",
                                           stage_index));
        };
    } else if (name_ == "accuracy-error") {
        replacement_ = [](const torch::Tensor& input) { return torch::add(input, 1); };
    }
}

TensorList StageBackend::run(const std::vector<ModelLayer>& layers,
                             const TensorList& inputs) const {
    if (!replacement_)
        return run_layers(layers, inputs);
    const ScopedReluReplacement scope(&replacement_);
    return run_layers(layers, inputs);
}

void StageBackend::check(const std::string& what, int microbatch,
                         const std::vector<TensorMeta>& expected, const TensorList& actual) const {
    if (const auto mismatch = check_tensors_metadata(what, expected, metas_of(actual)))
        throw BackendError(mismatch->kind + "_mismatch", stage_,
                           fmt::format("backend 'checked': {} (stage {}, microbatch {})",
                                       mismatch->message, stage_, microbatch),
                           mismatch->expected, mismatch->actual);
    check_finite(what, microbatch, actual);
}

void StageBackend::check_finite(const std::string& what, int microbatch,
                                const TensorList& values) const {
    for (std::size_t index = 0; index < values.size(); ++index) {
        const torch::Tensor& value = values[index];
        if (!value.defined() || !value.is_floating_point())
            continue;
        const std::int64_t bad = (~torch::isfinite(value.detach())).sum().item<std::int64_t>();
        if (bad > 0)
            throw BackendError(
                "non_finite", stage_,
                fmt::format("backend 'checked': {}[{}] has {} non-finite value{} (NaN or Inf) "
                            "(stage {}, microbatch {})",
                            what, index, bad, bad == 1 ? "" : "s", stage_, microbatch),
                "finite values", fmt::format("{} NaN/Inf", bad));
    }
}

}  // namespace pipelens::runtime
