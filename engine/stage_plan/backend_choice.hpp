// Which backend executes each stage, from `--backend` texts. A backend is how a stage's layers
// run, after PyTorch's debugging backends for TorchDynamo:
//   eager           the layers as they are
//   checked         every input and output checked against the stage's metadata, and for
//                   NaN/Inf, on every microbatch
//   compile-error   fails while the stage is built if its layers use a ReLU
//   runtime-error   fails when a ReLU of the stage runs
//   accuracy-error  a ReLU is replaced by x + 1 (torch.add(x, 1)): wrong values, no error
// The last three exist to test the diagnosis tools (replay, bisect, --check-accuracy).
// Torch-free: parsed on the command line and recorded as events.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::runtime {

std::span<const std::string_view> stage_backend_names();
bool is_stage_backend(std::string_view name);

class BackendChoiceError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// One backend per stage. Each text is `NAME` (every stage) or `stageN=NAME` (stage N, which
// wins over a NAME for all); later texts win over earlier ones of the same reach.
std::vector<std::string> choose_stage_backends(const std::vector<std::string>& texts,
                                               int stage_count);

}  // namespace pipelens::runtime
