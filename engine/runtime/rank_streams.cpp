// A rank's compute stream and the event hand-over between streams (see rank_streams.hpp).
#include "engine/runtime/rank_streams.hpp"

#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace pipelens::runtime {
namespace {

const c10::impl::DeviceGuardImplInterface& guard_impl(const c10::Device& device) {
    return *c10::impl::getDeviceGuardImpl(device.type());
}

// The device of the first tensor that is not on the CPU.
std::optional<c10::Device> device_of(const TensorList& tensors) {
    for (const torch::Tensor& tensor : tensors)
        if (tensor.defined() && !tensor.device().is_cpu())
            return tensor.device();
    return std::nullopt;
}

}  // namespace

RankComputeStream::RankComputeStream(const c10::Device& device) {
    if (device.is_cpu())
        return;
    guard_.emplace(guard_impl(device).getStreamFromGlobalPool(device, /*isHighPriority=*/false));
}

std::optional<c10::Stream> RankComputeStream::stream() const {
    if (!guard_)
        return std::nullopt;
    return guard_->current_stream();
}

StreamHandOver StreamHandOver::after_current_work(const TensorList& tensors) {
    StreamHandOver handover;
    const std::optional<c10::Device> device = device_of(tensors);
    if (!device)
        return handover;
    handover.ready_ = std::make_shared<c10::Event>(device->type());
    handover.ready_->record(guard_impl(*device).getStream(*device));
    return handover;
}

void StreamHandOver::before_use_on_current_stream(const TensorList& tensors) const {
    if (!ready_)
        return;
    const c10::Device device = ready_->device();
    const c10::impl::DeviceGuardImplInterface& impl = guard_impl(device);
    const c10::Stream stream = impl.getStream(device);
    ready_->block(stream);
    for (const torch::Tensor& tensor : tensors)
        if (tensor.defined() && tensor.device() == device)
            impl.recordDataPtrOnStream(tensor.storage().data_ptr(), stream);
}

}  // namespace pipelens::runtime
