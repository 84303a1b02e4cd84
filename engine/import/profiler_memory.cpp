// Cutting a rank's memory curve to its step (profiler_memory.hpp).
#include "engine/import/profiler_memory.hpp"

#include <algorithm>

namespace pipelens::import {
namespace {

// The samples inside `window`, after one at its start carrying the last earlier sample's level.
std::vector<traces::MemoryRecord> cut(const std::vector<const MemorySample*>& series,
                                      std::optional<TimeWindow> window) {
    std::vector<traces::MemoryRecord> points;
    const MemorySample* before = nullptr;  // the last sample before the window, until one inside
    for (const MemorySample* sample : series) {
        if (window && sample->time_ns < window->start_ns) {
            before = sample;
            continue;
        }
        if (window && sample->time_ns > window->end_ns)
            break;
        if (before != nullptr && sample->time_ns > window->start_ns)
            points.push_back({0, window->start_ns, before->bytes});
        before = nullptr;
        points.push_back({0, sample->time_ns, sample->bytes});
    }
    if (before != nullptr)  // no sample inside: the level stayed as it was
        points.push_back({0, window->start_ns, before->bytes});
    return points;
}

}  // namespace

std::vector<traces::MemoryRecord> rank_memory(const std::vector<MemorySample>& samples,
                                              std::optional<TimeWindow> window) {
    const bool accelerator = std::any_of(samples.begin(), samples.end(),
                                         [](const MemorySample& s) { return s.device_type != 0; });
    std::vector<const MemorySample*> series;
    for (const MemorySample& sample : samples)
        if ((sample.device_type != 0) == accelerator)
            series.push_back(&sample);
    return cut(series, window);
}

}  // namespace pipelens::import
