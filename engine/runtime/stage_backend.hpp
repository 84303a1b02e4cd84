// StageBackend: how one stage's layers run (see backend_choice.hpp for the names). It is built
// with the stage ("compiled"), which is when compile-error fails, and then runs every forward:
// plain for eager, with metadata and NaN/Inf checks for checked, with a ReLU stand-in for
// runtime-error (throws when a ReLU runs) and accuracy-error (x + 1 in place of ReLU(x)), as
// upstream's relu_*_error_TESTING_ONLY backends rewrite torch.relu nodes.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/runtime/model_library.hpp"
#include "engine/tensor/tensor_meta.hpp"

namespace pipelens::runtime {

// A failure a backend raised for a stage: `kind` is what the trace's errors table records
// (compile_error, runtime_error, non_finite, shape_mismatch, dtype_mismatch, stride_mismatch,
// count_mismatch).
class BackendError : public std::runtime_error {
  public:
    BackendError(std::string kind, int stage, const std::string& message, std::string expected = "",
                 std::string actual = "");
    const std::string& kind() const { return kind_; }
    int stage() const { return stage_; }
    const std::string& expected() const { return expected_; }
    const std::string& actual() const { return actual_; }

  private:
    std::string kind_;
    int stage_;
    std::string expected_;
    std::string actual_;
};

class StageBackend {
  public:
    // `example_inputs`: one microbatch's inputs, to trace the layers once. Throws BackendError
    // (compile_error) for compile-error on layers that use a ReLU, and std::invalid_argument
    // when a ReLU-acting backend finds no ReLU it can reach in the layers.
    StageBackend(std::string name, int stage, const std::vector<ModelLayer>& layers,
                 const TensorList& example_inputs);

    const std::string& name() const { return name_; }
    bool checks() const { return name_ == "checked"; }

    TensorList run(const std::vector<ModelLayer>& layers, const TensorList& inputs) const;

    // checked: metadata against `expected`, then every value finite; BackendError otherwise.
    void check(const std::string& what, int microbatch, const std::vector<TensorMeta>& expected,
               const TensorList& actual) const;
    void check_finite(const std::string& what, int microbatch, const TensorList& values) const;

  private:
    std::string name_;
    int stage_;
    ReluReplacement replacement_;  // empty for eager and checked
};

}  // namespace pipelens::runtime
