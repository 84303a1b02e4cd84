// Choosing and cutting a rank's memory curve (profiler_memory.hpp).
#include "engine/import/profiler_memory.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace pipelens::import {
namespace {

using Device = std::pair<std::int64_t, std::int64_t>;  // ("Device Type", "Device Id")

bool is_accelerator(const Device& device) {
    return device.first != 0;
}

// c10::DeviceType's name for the kinds a profiler records memory of.
std::string device_name(const Device& device) {
    switch (device.first) {
        case 0:
            return "the CPU";
        case 1:
            return fmt::format("CUDA device {}", device.second);
        case 6:
            return fmt::format("HIP device {}", device.second);
        case 12:
            return fmt::format("XPU device {}", device.second);
        case 13:
            return fmt::format("MPS device {}", device.second);
        case 19:
            return fmt::format("MTIA device {}", device.second);
        default:
            return fmt::format("device {} of type {}", device.second, device.first);
    }
}

std::map<Device, std::int64_t> samples_per_device(const std::vector<MemorySample>& samples) {
    std::map<Device, std::int64_t> counts;
    for (const MemorySample& sample : samples)
        ++counts[{sample.device_type, sample.device}];
    return counts;
}

struct Choice {
    Device device;
    bool ran_work = false;  // chosen as the device the rank's GPU operations ran on
};

// The accelerator the rank's GPU operations ran on most, among those with samples; else the
// accelerator with the most samples; the host's series where there is no accelerator's.
Choice chosen_device(const std::map<Device, std::int64_t>& counts,
                     const std::map<std::int64_t, std::int64_t>& operations_by_device) {
    const bool accelerators = std::any_of(counts.begin(), counts.end(), [](const auto& count) {
        return is_accelerator(count.first);
    });
    Choice choice;
    std::int64_t most_work = 0;
    std::int64_t most_samples = -1;
    for (const auto& [device, samples] : counts) {
        if (is_accelerator(device) != accelerators)
            continue;
        const auto work = operations_by_device.find(device.second);
        if (accelerators && work != operations_by_device.end() && work->second > most_work) {
            most_work = work->second;
            choice = {device, true};
        }
        if (most_work == 0 && samples > most_samples) {
            most_samples = samples;
            choice = {device, false};
        }
    }
    return choice;
}

// Which device was kept and what of the others of its kind was left out ("" when nothing was).
std::string kept_note(const std::map<Device, std::int64_t>& counts, const Choice& choice,
                      const std::string& who) {
    std::string others;
    for (const auto& [device, samples] : counts)
        if (device != choice.device && is_accelerator(device) == is_accelerator(choice.device))
            others += others.empty() ? fmt::format("{} samples of {}", samples, device_name(device))
                                     : fmt::format(", {} of {}", samples, device_name(device));
    if (others.empty())
        return "";
    return fmt::format(
        "{}: memory is {}'s ({} samples: {}); left out: {} (each device's totals are a curve of "
        "their own)",
        who, device_name(choice.device), counts.at(choice.device),
        choice.ran_work ? "the device its GPU work ran on"
                        : "the device with the most samples, as its GPU work names none of them",
        others);
}

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

RankMemory rank_memory(const std::vector<MemorySample>& samples,
                       const std::map<std::int64_t, std::int64_t>& operations_by_device,
                       std::optional<TimeWindow> window, const std::string& who) {
    RankMemory memory;
    if (samples.empty())
        return memory;
    const std::map<Device, std::int64_t> counts = samples_per_device(samples);
    const Choice choice = chosen_device(counts, operations_by_device);
    std::vector<const MemorySample*> series;
    for (const MemorySample& sample : samples)
        if (Device{sample.device_type, sample.device} == choice.device)
            series.push_back(&sample);
    memory.points = cut(series, window);
    memory.note = kept_note(counts, choice, who);
    return memory;
}

}  // namespace pipelens::import
