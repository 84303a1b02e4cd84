// LibTorch's profiler around a rank's recorded steps (see torch_profile.hpp). The events are
// written here rather than by ProfilerResult::save, which needs a LibTorch built with Kineto
// (Debian's is not); what LibTorch records without Kineto (operators, user ranges, their threads)
// is enough for a Chrome trace, and a Kineto build adds the GPU's kernels.
#include "engine/runtime/torch_profile.hpp"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include <ATen/record_function.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <nlohmann/json.hpp>

namespace pipelens::runtime {
namespace {

namespace profiler = torch::autograd::profiler;
// The configuration's types live here in every LibTorch since 1.13 (2.x mirrors them into the
// autograd namespace only for old callers).
namespace profiler_impl = torch::profiler::impl;

// LibTorch 1.x gives an event's times in microseconds, 2.x in nanoseconds; both since the Unix
// epoch. The first overload that compiles is taken.
template <typename Event>
auto start_ns(const Event& event, int) -> decltype(event.startNs(), std::int64_t()) {
    return static_cast<std::int64_t>(event.startNs());
}
template <typename Event>
std::int64_t start_ns(const Event& event, long) {
    return static_cast<std::int64_t>(event.startUs()) * 1000;
}
template <typename Event>
auto duration_ns(const Event& event, int) -> decltype(event.durationNs(), std::int64_t()) {
    return static_cast<std::int64_t>(event.durationNs());
}
template <typename Event>
std::int64_t duration_ns(const Event& event, long) {
    return static_cast<std::int64_t>(event.durationUs()) * 1000;
}

std::set<profiler_impl::ActivityType> activities_for(const c10::Device& device) {
    std::set<profiler_impl::ActivityType> activities{profiler_impl::ActivityType::CPU};
    if (device.is_cuda())
        activities.insert(profiler_impl::ActivityType::CUDA);
    return activities;
}

profiler_impl::ProfilerConfig config() {
    return profiler_impl::ProfilerConfig(profiler_impl::ProfilerState::KINETO,
                                         /*report_input_shapes=*/false,
                                         /*profile_memory=*/false, /*with_stack=*/false,
                                         /*with_flops=*/false, /*with_modules=*/false);
}

// One event as a Chrome trace complete event: host events on this process and their thread,
// device events (kernels, copies) on the device's index and their stream, as PyTorch's traces do.
nlohmann::ordered_json trace_event(const profiler::KinetoEvent& event, int process) {
    const bool on_host = event.deviceType() == c10::DeviceType::CPU;
    const bool user_range = event.scope() == static_cast<std::uint8_t>(at::RecordScope::USER_SCOPE);
    return {{"ph", "X"},
            {"cat", on_host ? (user_range ? "user_annotation" : "cpu_op") : "kernel"},
            {"name", event.name()},
            {"pid", on_host ? process : static_cast<int>(event.deviceIndex())},
            {"tid", on_host ? static_cast<std::int64_t>(event.startThreadId())
                            : static_cast<std::int64_t>(event.deviceResourceId())},
            {"ts", static_cast<double>(start_ns(event, 0)) / 1000.0},
            {"dur", static_cast<double>(duration_ns(event, 0)) / 1000.0}};
}

}  // namespace

std::string torch_profile_path(const std::string& directory, int rank) {
    return fmt::format("{}/rank{}.json", directory, rank);
}

TorchProfile::TorchProfile(const c10::Device& device) {
    const std::set<profiler_impl::ActivityType> activities = activities_for(device);
    try {
        profiler::prepareProfiler(config(), activities);
        profiler::enableProfiler(config(), activities);
    } catch (const std::exception& error) {
        throw std::runtime_error(
            fmt::format("--torch-profile: LibTorch's profiler did not start: {}", error.what()));
    }
    active_ = true;
}

TorchProfile::~TorchProfile() {
    if (!active_)
        return;
    try {
        profiler::disableProfiler();
    } catch (const std::exception&) {
        // Nothing is written; the run's own records are kept.
    }
}

void TorchProfile::write(const std::string& path, int rank, int world_size,
                         const std::string& backend) {
    active_ = false;
    const std::unique_ptr<profiler::ProfilerResult> result = profiler::disableProfiler();
    const int process = static_cast<int>(::getpid());
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    for (const profiler::KinetoEvent& event : result->events())
        events.push_back(trace_event(event, process));
    const nlohmann::ordered_json trace = {
        {"schemaVersion", 1},
        {"distributedInfo", {{"backend", backend}, {"rank", rank}, {"world_size", world_size}}},
        {"displayTimeUnit", "ms"},
        {"traceEvents", std::move(events)}};
    std::ofstream file(path);
    file << trace.dump() << '\n';
    file.close();
    if (!file) {
        std::error_code ignored;  // a cut-off profile is no profile: nothing is left to open
        std::filesystem::remove(path, ignored);
        throw std::runtime_error(fmt::format("--torch-profile: cannot write {}", path));
    }
}

}  // namespace pipelens::runtime
