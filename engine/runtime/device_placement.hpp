// Where a rank's tensors live: the device `--device` resolves to on this process (what its
// LibTorch was built with and the GPUs it sees), and the model and batch moved there. Everything
// a rank computes follows from these: stages take their inputs' device, receive buffers and
// the single-rank reference are made on the same one.
//
// Invariants: on the CPU nothing is copied or replaced (a tensor already on the device is left
// as it is), so a CPU run is what it was before devices existed; parameters move in place
// (set_data), so every layer closure and every stage that holds one sees the moved tensor.
#pragma once

#include <string>

#include "engine/runtime/model_library.hpp"
#include "engine/runtime/pipeline_setup.hpp"
#include "engine/stage_plan/device_choice.hpp"

namespace pipelens::runtime {

// What this process's LibTorch offers: built with CUDA (its CUDA device support is loaded), the
// GPUs it sees, its version, CUDA_VISIBLE_DEVICES.
DeviceFacts runtime_device_facts(int local_rank);

// `--device` text ("" for the default) resolved on this process: "cpu" or "cuda:N". Throws
// DeviceChoiceError (a std::invalid_argument) saying why a request cannot be met.
std::string resolve_run_device(const std::string& requested, int local_rank);

// A resolved device text ("cpu", "cuda:0") as LibTorch's device; "" is the CPU.
c10::Device torch_device(const std::string& resolved);

// Makes a GPU the calling thread's current one (streams, events and LibTorch's own allocations
// without a device go there) while it lives; on the CPU it does nothing.
class ScopedDevice {
  public:
    explicit ScopedDevice(const std::string& resolved);

  private:
    c10::OptionalDeviceGuard guard_;
};

void place_model(PipelineModel& model, const c10::Device& device);
void place_batch(Batch& batch, const c10::Device& device);

}  // namespace pipelens::runtime
