// The host timer and the CPU memory sampler, and the choice by device (see device_timing.hpp).
// The CUDA ones are in device_timing_cuda.cpp, or refused in device_timing_unavailable.cpp.
#include "engine/runtime/device_timing.hpp"

#include <algorithm>
#include <stdexcept>

namespace pipelens::runtime {

std::size_t HostActionTimer::begin(std::int64_t host_ns) {
    spans_.push_back({host_ns, host_ns});
    return spans_.size() - 1;
}

void HostActionTimer::end(std::size_t span, std::int64_t host_ns) {
    spans_.at(span).end_ns = host_ns;
}

MemorySample HostMemory::sample() const {
    const std::int64_t held = account_.current_bytes();
    return {held, held, account_.peak_bytes()};
}

MemorySample MemoryAboveBaseline::sample() const {
    const MemorySample held = device_.sample();
    const auto above = [](std::int64_t bytes, std::int64_t baseline) {
        return std::max<std::int64_t>(bytes - baseline, 0);
    };
    return {above(held.allocated_bytes, baseline_.allocated_bytes),
            above(held.reserved_bytes, baseline_.reserved_bytes),
            above(held.peak_allocated_bytes, baseline_.allocated_bytes)};
}

std::unique_ptr<ActionTimer> make_action_timer(const c10::Device& device,
                                               std::chrono::steady_clock::time_point epoch) {
    if (device.is_cpu())
        return std::make_unique<HostActionTimer>();
    if (device.is_cuda())
        return make_cuda_action_timer(device, epoch);
    throw std::runtime_error("no action timer for device " + device.str());
}

std::unique_ptr<DeviceMemory> make_device_memory(const c10::Device& device,
                                                 MemoryAccount& account) {
    if (device.is_cpu())
        return std::make_unique<HostMemory>(account);
    if (device.is_cuda())
        return make_cuda_device_memory(device);
    throw std::runtime_error("no memory sampler for device " + device.str());
}

}  // namespace pipelens::runtime
