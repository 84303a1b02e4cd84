// The GPU work a span of CPU time launched, read from a profiler trace: each kernel, copy or
// memset the trace holds is tied by its "correlation" to the runtime or driver call that
// launched it ("cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpyAsync", ...), and that call
// says when and on which thread the CPU launched it.
//
// Why not the range's gpu_user_annotation twin: Kineto puts a kernel under an annotation only
// when the thread that holds the range launched it. A backward's kernels are launched by the
// autograd engine's device thread while the range's thread waits, so a `PP:1B0` twin spans one
// small kernel (1 us, where the GPU worked for 12.8 ms) or there is no twin at all. Launches
// are counted on every thread of the trace: a pipeline rank runs one action at a time, and what
// its CPU range waited for is what the action ran.
//
// Invariants: memory is 16 bytes per launch and 24 per GPU operation kept, and a count per device,
// nothing else (deques:
// no vector's doubling, which would hold half as much again while it grows); a
// correlation that launched several GPU operations (a CUDA graph) spans all of them; a launch
// without its GPU operation (the profiler's buffer ran out) and a GPU operation without its
// launch are ignored; queries are only answered after finish().
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>

#include "engine/import/chrome_trace_stream.hpp"

namespace pipelens::import {

struct GpuSpan {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

class GpuLaunches {
  public:
    GpuLaunches() = default;
    // Not copyable: a copy would hold all of a trace's kernels twice. (A vector of holders
    // would otherwise copy them when it grows, since a deque's move may throw.)
    GpuLaunches(const GpuLaunches&) = delete;
    GpuLaunches& operator=(const GpuLaunches&) = delete;
    GpuLaunches(GpuLaunches&&) = default;
    GpuLaunches& operator=(GpuLaunches&&) = default;

    // Keeps `event` if it is a launch or a GPU operation with a correlation; returns whether
    // it did.
    bool keep(const ChromeEvent& event);
    // Applies `shift` to every time kept (Kineto's relative times moved to the epoch).
    void shift_times(const std::function<void(std::int64_t&)>& shift);
    // Sorts what was kept; call once, after the last keep().
    void finish();

    // From the start of the first to the end of the last GPU operation launched at or after
    // `from_ns` and at or before `to_ns`; nothing when none was.
    std::optional<GpuSpan> work_launched(std::int64_t from_ns, std::int64_t to_ns) const;

    // How many GPU operations ran on each device (the operation's "device", else its pid, which
    // Kineto sets to the device): which device the rank's work ran on.
    const std::map<std::int64_t, std::int64_t>& operations_by_device() const {
        return operations_by_device_;
    }

  private:
    struct Launch {
        std::int64_t time_ns;
        std::uint64_t correlation;
    };
    struct GpuOperation {
        std::uint64_t correlation;
        std::int64_t start_ns;
        std::int64_t end_ns;
    };
    const GpuOperation* operation_of(std::uint64_t correlation) const;

    std::deque<Launch> launches_;          // by time after finish()
    std::deque<GpuOperation> operations_;  // by correlation, one per correlation, after finish()
    std::map<std::int64_t, std::int64_t> operations_by_device_;
};

}  // namespace pipelens::import
