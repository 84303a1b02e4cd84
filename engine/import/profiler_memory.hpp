// A rank's memory curve from its profiler trace's `[memory]` samples. The profiler writes one
// sample per allocation or free with the allocator's "Total Allocated" after it, for whichever
// device the allocator served ("Device Type": c10::DeviceType, 0 the CPU, 1 CUDA; "Device Id"),
// so a trace can hold several curves: the host's, and one per GPU the process touched. Totals
// of different devices do not add up to one curve, so one series is kept:
//  - an accelerator's where there are any (the host's otherwise): the device the rank's GPU
//    operations ran on (the most of them), else, where that cannot be told (no GPU operations,
//    or none on a device with samples), the device with the most samples; a note names it and
//    counts the other accelerators' samples left out;
//  - cut to the imported step's window: the samples inside it, after one at its start holding
//    the level in force then (the last earlier sample's), so a step's peak is its own, not a
//    later step's.
//
// Invariants: samples are given in time order; the result's times lie in the window (when given)
// and ascend; one device's samples only; rank numbers are left 0 for the caller to set.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
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

struct RankMemory {
    std::vector<traces::MemoryRecord> points;
    std::string note;  // which device was kept, when another accelerator's samples were left out
};

// `samples` by time; `operations_by_device`: the rank's GPU operations per device
// (GpuLaunches::operations_by_device); `window`: the step's, none for the whole trace; `who`
// ("rank0.json (global rank 0)") names the rank in the note.
RankMemory rank_memory(const std::vector<MemorySample>& samples,
                       const std::map<std::int64_t, std::int64_t>& operations_by_device,
                       std::optional<TimeWindow> window, const std::string& who);

}  // namespace pipelens::import
