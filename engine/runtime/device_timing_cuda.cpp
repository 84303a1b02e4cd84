// The CUDA action timer and memory sampler (see device_timing.hpp), compiled only against a CUDA
// LibTorch (PIPELENS_TORCH_CUDA). Only c10's CUDA headers and the CUDA runtime API are used, both
// stable across LibTorch versions: the current stream (c10::cuda::getCurrentCUDAStream), the
// caching allocator's statistics (getDeviceStats, resetPeakStats) and plain cudaEvent_t.
//
// Why the anchor: a CUDA event has a time only relative to another event. One anchor event is
// recorded and waited for when the timer is made; the host's clock read right after the wait is
// taken as its time (late by the wait's wake-up, a few microseconds). Every span is then the
// anchor's host time plus its events' elapsed time from the anchor, so GPU times land on the
// same clock as the host's (and the other ranks', once aligned) without any per-action wait.
//
// Invariants: events are recorded on the stream current when the timer was made (LibTorch's
// computations go there: under `--transport local` the rank thread's own stream, which
// RankComputeStream (rank_streams.hpp) makes current before the rank builds anything and keeps
// current until the rank thread ends, so every timer a rank makes, in every step, takes that
// one); spans() waits for the last event before reading any; every event is destroyed with the
// timer.
#include <cuda_runtime_api.h>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>

#include <stdexcept>
#include <string>

#include "engine/runtime/device_timing.hpp"

namespace pipelens::runtime {
namespace {

void check(cudaError_t result, const char* call) {
    if (result != cudaSuccess)
        throw std::runtime_error(std::string("CUDA-event timing: ") + call + ": " +
                                 cudaGetErrorString(result));
}

cudaEvent_t new_event() {
    cudaEvent_t event = nullptr;
    check(cudaEventCreate(&event), "cudaEventCreate");
    return event;
}

std::int64_t host_ns_since(std::chrono::steady_clock::time_point epoch) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                epoch)
        .count();
}

class CudaActionTimer final : public ActionTimer {
  public:
    CudaActionTimer(const c10::Device& device, std::chrono::steady_clock::time_point epoch)
        : device_(device),
          stream_(c10::cuda::getCurrentCUDAStream(device.index()).stream()),
          anchor_(new_event()) {
        check(cudaEventRecord(anchor_, stream_), "cudaEventRecord");
        check(cudaEventSynchronize(anchor_), "cudaEventSynchronize");
        anchor_host_ns_ = host_ns_since(epoch);
    }
    ~CudaActionTimer() override {
        for (const auto& [start, end] : events_) {
            cudaEventDestroy(start);
            cudaEventDestroy(end);
        }
        cudaEventDestroy(anchor_);
    }
    CudaActionTimer(const CudaActionTimer&) = delete;
    CudaActionTimer& operator=(const CudaActionTimer&) = delete;

    std::string describe() const override { return "CUDA events on " + device_.str(); }

    std::size_t begin(std::int64_t /*host_ns*/) override {
        events_.emplace_back(new_event(), new_event());
        check(cudaEventRecord(events_.back().first, stream_), "cudaEventRecord");
        return events_.size() - 1;
    }

    void end(std::size_t span, std::int64_t /*host_ns*/) override {
        check(cudaEventRecord(events_.at(span).second, stream_), "cudaEventRecord");
    }

    std::vector<TimedSpan> spans() override {
        std::vector<TimedSpan> spans;
        if (events_.empty())
            return spans;
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        for (const auto& [start, end] : events_)
            spans.push_back(
                {anchor_host_ns_ + since_anchor_ns(start), anchor_host_ns_ + since_anchor_ns(end)});
        return spans;
    }

  private:
    std::int64_t since_anchor_ns(cudaEvent_t event) const {
        float milliseconds = 0;
        check(cudaEventElapsedTime(&milliseconds, anchor_, event), "cudaEventElapsedTime");
        return static_cast<std::int64_t>(static_cast<double>(milliseconds) * 1e6);
    }

    c10::Device device_;
    cudaStream_t stream_;
    cudaEvent_t anchor_;
    std::int64_t anchor_host_ns_ = 0;
    std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events_;  // an action's start and end
};

// Index 0 of the allocator's statistics is the aggregate over its pools (StatType::AGGREGATE,
// whose namespace moved between LibTorch versions; its value did not).
constexpr std::size_t kAggregate = 0;

class CudaMemory final : public DeviceMemory {
  public:
    explicit CudaMemory(const c10::Device& device) : device_(device) {}
    std::string describe() const override { return "CUDA caching allocator on " + device_.str(); }
    void mark() override { c10::cuda::CUDACachingAllocator::resetPeakStats(device_.index()); }
    MemorySample sample() const override {
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_.index());
        return {stats.allocated_bytes[kAggregate].current, stats.reserved_bytes[kAggregate].current,
                stats.allocated_bytes[kAggregate].peak};
    }

  private:
    c10::Device device_;
};

}  // namespace

bool device_timing_built_with_cuda() {
    return true;
}

std::unique_ptr<ActionTimer> make_cuda_action_timer(const c10::Device& device,
                                                    std::chrono::steady_clock::time_point epoch) {
    return std::make_unique<CudaActionTimer>(device, epoch);
}

std::unique_ptr<DeviceMemory> make_cuda_device_memory(const c10::Device& device) {
    return std::make_unique<CudaMemory>(device);
}

}  // namespace pipelens::runtime
