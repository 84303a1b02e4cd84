// Resolving `--device` on this process and moving a model and a batch there (see
// device_placement.hpp).
#include "engine/runtime/device_placement.hpp"

#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <cstdlib>
#include <stdexcept>

#include "engine/run_record/run_dtype.hpp"

namespace pipelens::runtime {
namespace {

// The dtype a tensor takes in a run in `dtype`: float32 becomes the run's, the rest stays.
c10::ScalarType placed_type(const torch::Tensor& tensor, c10::ScalarType dtype) {
    return tensor.scalar_type() == c10::kFloat ? dtype : tensor.scalar_type();
}

// In place, so that whoever holds the tensor (a layer's closure, a module) sees it moved.
void move_in_place(torch::Tensor& tensor, const c10::Device& device, c10::ScalarType dtype) {
    if (!tensor.defined())
        return;
    const c10::ScalarType type = placed_type(tensor, dtype);
    if (tensor.device() == device && tensor.scalar_type() == type)
        return;
    tensor.set_data(tensor.to(device, type));
}

torch::Tensor moved(const torch::Tensor& tensor, const c10::Device& device, c10::ScalarType dtype) {
    const c10::ScalarType type = placed_type(tensor, dtype);
    return tensor.device() == device && tensor.scalar_type() == type ? tensor
                                                                     : tensor.to(device, type);
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

c10::ScalarType run_scalar_type(const std::string& dtype) {
    if (dtype == "float32")
        return c10::kFloat;
    if (dtype == "bfloat16")
        return c10::kBFloat16;
    throw std::invalid_argument(run_record::run_dtype_problem(dtype));
}

ScopedDevice::ScopedDevice(const std::string& resolved) {
    const c10::Device device = torch_device(resolved);
    if (device.is_cuda())
        guard_.reset_device(device);
}

void place_model(PipelineModel& model, const c10::Device& device, c10::ScalarType dtype) {
    for (ModelLayer& layer : model.layers)
        for (torch::Tensor& parameter : layer.parameters)
            move_in_place(parameter, device, dtype);
    for (torch::Tensor& buffer : model.buffers)
        move_in_place(buffer, device, dtype);
}

void place_batch(Batch& batch, const c10::Device& device, c10::ScalarType dtype) {
    for (TensorList& inputs : batch.microbatch_inputs)
        for (torch::Tensor& input : inputs)
            input = moved(input, device, dtype);
    for (torch::Tensor& target : batch.targets)
        target = moved(target, device, dtype);
    for (torch::Tensor& input : batch.whole_inputs)
        input = moved(input, device, dtype);
    batch.whole_target = moved(batch.whole_target, device, dtype);
}

}  // namespace pipelens::runtime
