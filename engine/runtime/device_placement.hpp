// Where a rank's tensors live and what they hold: the device `--device` resolves to on this
// process (what its LibTorch was built with and the GPUs it sees) and the dtype `--dtype` names,
// and the model and batch moved and cast there. Everything a rank computes follows from these:
// stages take their inputs' device and dtype, receive buffers (from the inferred metadata) and
// the single-rank reference are made the same way.
//
// Invariants: a float32 run on the CPU copies and replaces nothing (a tensor already on the
// device in the dtype is left as it is), so it is what it was before devices and dtypes existed;
// only float32 tensors are cast (the models and batches pipelens draws; integer inputs and a
// TorchScript model's other types stay); parameters move in place (set_data), so every layer
// closure and every stage that holds one sees the moved tensor.
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

// A `--dtype` name (run_record/run_dtype.hpp: float32, bfloat16) as LibTorch's scalar type.
// Throws std::invalid_argument for a name it does not list.
c10::ScalarType run_scalar_type(const std::string& dtype);

// Makes a GPU the calling thread's current one (streams, events and LibTorch's own allocations
// without a device go there) while it lives; on the CPU it does nothing.
class ScopedDevice {
  public:
    explicit ScopedDevice(const std::string& resolved);

  private:
    c10::OptionalDeviceGuard guard_;
};

void place_model(PipelineModel& model, const c10::Device& device,
                 c10::ScalarType dtype = c10::kFloat);
void place_batch(Batch& batch, const c10::Device& device, c10::ScalarType dtype = c10::kFloat);

}  // namespace pipelens::runtime
