// Resolving `--device` on this process and moving a model and a batch there (see
// device_placement.hpp).
#include "engine/runtime/device_placement.hpp"

#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <cstdlib>

namespace pipelens::runtime {
namespace {

// In place, so that whoever holds the tensor (a layer's closure, a module) sees it moved.
void move_in_place(torch::Tensor& tensor, const c10::Device& device) {
    if (!tensor.defined() || tensor.device() == device)
        return;
    tensor.set_data(tensor.to(device));
}

torch::Tensor moved(const torch::Tensor& tensor, const c10::Device& device) {
    return tensor.device() == device ? tensor : tensor.to(device);
}

}  // namespace

DeviceFacts runtime_device_facts(int local_rank) {
    DeviceFacts facts;
    // A CPU-only LibTorch registers no CUDA device guard; a CUDA one does as soon as its CUDA
    // library is loaded, GPU or not. That tells "not built with CUDA" from "no GPU seen".
    facts.build_has_cuda = c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA);
    facts.torch_version = TORCH_VERSION;
    facts.gpu_count = facts.build_has_cuda ? static_cast<int>(torch::cuda::device_count()) : 0;
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
        facts.cuda_visible_devices = visible;
    facts.local_rank = local_rank;
    return facts;
}

std::string resolve_run_device(const std::string& requested, int local_rank) {
    const DeviceChoice choice = requested.empty() ? DeviceChoice{} : parse_device_choice(requested);
    return resolve_device(choice, runtime_device_facts(local_rank));
}

c10::Device torch_device(const std::string& resolved) {
    return resolved.empty() ? c10::Device(c10::kCPU) : c10::Device(resolved);
}

ScopedDevice::ScopedDevice(const std::string& resolved) {
    const c10::Device device = torch_device(resolved);
    if (device.is_cuda())
        guard_.reset_device(device);
}

void place_model(PipelineModel& model, const c10::Device& device) {
    for (ModelLayer& layer : model.layers)
        for (torch::Tensor& parameter : layer.parameters)
            move_in_place(parameter, device);
    for (torch::Tensor& buffer : model.buffers)
        move_in_place(buffer, device);
}

void place_batch(Batch& batch, const c10::Device& device) {
    for (TensorList& inputs : batch.microbatch_inputs)
        for (torch::Tensor& input : inputs)
            input = moved(input, device);
    for (torch::Tensor& target : batch.targets)
        target = moved(target, device);
    for (torch::Tensor& input : batch.whole_inputs)
        input = moved(input, device);
    batch.whole_target = moved(batch.whole_target, device);
}

}  // namespace pipelens::runtime
