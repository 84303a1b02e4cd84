// How a rank times its actions and samples its memory, per device. On the CPU an action's time
// is the host's (steady_clock) and its memory the tensors the CPU allocator charged to the rank
// (memory_account.hpp). On a GPU the host only queues work: the time that matters is when the
// GPU ran it (CUDA events on the rank's stream, put on the run's clock through one event whose
// host time is known), and the memory is the CUDA caching allocator's (allocated and reserved
// bytes, and the peak since the action began). A GPU's allocator counts everything on the
// device, so a rank's recorded steps are charged only what it holds beyond what the device held
// when they began (MemoryAboveBaseline): the weights, optimizer state, cuBLAS workspaces (one
// per handle and stream, kept for the process's life) and whatever set-up or the reference check
// left are not the steps', just as the CPU account does not count them.
//
// The CUDA implementations need a CUDA LibTorch (c10/cuda): they are compiled only where CMake
// found one (PIPELENS_TORCH_CUDA, device_timing_cuda.cpp); elsewhere asking for them on a GPU
// says they were not built (device_timing_unavailable.cpp).
//
// Invariants: the host timer's spans are exactly the host times it was given, and the CPU
// sampler reads exactly the rank's MemoryAccount, so on the CPU timings and memory are what they
// were before devices existed; spans() and sample() never throw on the CPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "engine/runtime/memory_account.hpp"

namespace pipelens::runtime {

struct TimedSpan {
    std::int64_t start_ns = 0;  // on the run's clock: ns since the step's epoch
    std::int64_t end_ns = 0;
    friend bool operator==(const TimedSpan&, const TimedSpan&) = default;
};

class ActionTimer {
  public:
    virtual ~ActionTimer() = default;
    virtual std::string describe() const = 0;  // "host clock", "CUDA events on cuda:0"
    // An action begins / ends now; `host_ns` is the host's time of that moment on the run's
    // clock. begin returns the span's index.
    virtual std::size_t begin(std::int64_t host_ns) = 0;
    virtual void end(std::size_t span, std::int64_t host_ns) = 0;
    // Every span on the run's clock, in begin order, once the work they cover has finished
    // (a device timer waits for it).
    virtual std::vector<TimedSpan> spans() = 0;
};

// The host's clock: spans are the host times given to begin and end.
class HostActionTimer final : public ActionTimer {
  public:
    std::string describe() const override { return "host clock"; }
    std::size_t begin(std::int64_t host_ns) override;
    void end(std::size_t span, std::int64_t host_ns) override;
    std::vector<TimedSpan> spans() override { return spans_; }

  private:
    std::vector<TimedSpan> spans_;
};

struct MemorySample {
    std::int64_t allocated_bytes = 0;  // held by tensors now
    std::int64_t reserved_bytes =
        0;  // held by the allocator (a cache on a GPU; = allocated on CPU)
    std::int64_t peak_allocated_bytes = 0;  // the most held since the last mark
};

class DeviceMemory {
  public:
    virtual ~DeviceMemory() = default;
    virtual std::string describe() const = 0;
    virtual void mark() = 0;  // the peak starts again from what is held now (each action)
    virtual MemorySample sample() const = 0;
};

// The rank's CPU tensors, as its MemoryAccount counts them.
class HostMemory final : public DeviceMemory {
  public:
    explicit HostMemory(MemoryAccount& account) : account_(account) {}
    std::string describe() const override { return "CPU allocator (this rank's tensors)"; }
    void mark() override { account_.mark(); }
    MemorySample sample() const override;

  private:
    MemoryAccount& account_;
};

// What `device` holds beyond what it held when this was made: the baseline is taken once, and
// sample() and its peak count from it (never below zero: a step may free what was held before
// it, such as the last step's gradients).
class MemoryAboveBaseline final : public DeviceMemory {
  public:
    explicit MemoryAboveBaseline(DeviceMemory& device)
        : device_(device), baseline_(device.sample()) {}
    std::string describe() const override { return device_.describe() + ", above its baseline"; }
    void mark() override { device_.mark(); }
    MemorySample sample() const override;
    std::int64_t baseline_bytes() const { return baseline_.allocated_bytes; }

  private:
    DeviceMemory& device_;
    MemorySample baseline_;
};

// Whether this build has the CUDA timer and sampler.
bool device_timing_built_with_cuda();

// The CUDA halves of the two below, from device_timing_cuda.cpp (device_timing_unavailable.cpp
// where they were not built).
std::unique_ptr<ActionTimer> make_cuda_action_timer(const c10::Device& device,
                                                    std::chrono::steady_clock::time_point epoch);
std::unique_ptr<DeviceMemory> make_cuda_device_memory(const c10::Device& device);

// The timer for `device`: the host's on the CPU; on a GPU, CUDA events on the calling thread's
// current stream (the rank's compute stream, rank_streams.hpp), put on the run's clock (ns since
// `epoch`) through an anchor event recorded and waited for when the timer is made. Throws
// std::runtime_error saying "not built" for a GPU when this build has no CUDA LibTorch.
std::unique_ptr<ActionTimer> make_action_timer(const c10::Device& device,
                                               std::chrono::steady_clock::time_point epoch);

// The sampler for `device`: `account` on the CPU, the CUDA caching allocator on a GPU (throws
// as make_action_timer does when not built).
std::unique_ptr<DeviceMemory> make_device_memory(const c10::Device& device, MemoryAccount& account);

}  // namespace pipelens::runtime
