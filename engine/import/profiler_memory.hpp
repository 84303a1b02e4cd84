// A rank's memory curve from its profiler trace's `[memory]` samples. The profiler writes one
// sample per allocation or free with the allocator's "Total Allocated" after it, for whichever
// device the allocator served ("Device Type": c10::DeviceType, 0 the CPU, 1 CUDA; "Device Id").
// The accelerator's samples are kept where there are any, the host's otherwise, cut to the
// imported step's window: the samples inside it, after one at its start holding the level in
// force then (the last earlier sample's), so a step's peak is its own, not a later step's.
//
// Invariants: samples are given in time order; the result's times lie in the window (when given)
// and ascend; rank numbers are left 0 for the caller to set.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "traces/trace_records.hpp"

namespace pipelens::import {

struct MemorySample {
    std::int64_t time_ns = 0;
    std::int64_t bytes = 0;        // "Total Allocated" after the event
    std::int64_t device_type = 0;  // "Device Type": 0 the CPU
    std::int64_t device = -1;      // "Device Id"
};

// A span of a rank's clock: an imported step's.
struct TimeWindow {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

// `samples` by time; `window`: the step's, none for the whole trace.
std::vector<traces::MemoryRecord> rank_memory(const std::vector<MemorySample>& samples,
                                              std::optional<TimeWindow> window);

}  // namespace pipelens::import
