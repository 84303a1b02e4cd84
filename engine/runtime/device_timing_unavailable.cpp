// The CUDA timer and memory sampler where LibTorch has no CUDA (CMake found no c10_cuda): a GPU
// cannot be asked for here, since --device cuda is refused first, but a caller that does gets
// told why rather than a link error.
#include <stdexcept>

#include "engine/runtime/device_timing.hpp"

namespace pipelens::runtime {

bool device_timing_built_with_cuda() {
    return false;
}

std::unique_ptr<ActionTimer> make_cuda_action_timer(const c10::Device& device,
                                                    std::chrono::steady_clock::time_point) {
    throw std::runtime_error("CUDA-event timing for " + device.str() +
                             " was not built (this LibTorch has no CUDA)");
}

std::unique_ptr<DeviceMemory> make_cuda_device_memory(const c10::Device& device) {
    throw std::runtime_error("CUDA memory statistics for " + device.str() +
                             " were not built (this LibTorch has no CUDA)");
}

}  // namespace pipelens::runtime
