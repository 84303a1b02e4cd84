// Ties a trace's GPU operations to the CPU calls that launched them: see gpu_launches.hpp.
#include "engine/import/gpu_launches.hpp"

#include <algorithm>
#include <iterator>

#include "engine/import/profiler_args.hpp"

namespace pipelens::import {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Kineto's categories: "cuda_runtime" and "cuda_driver" (ROCm's HIP calls are written the same
// way), "xpu_runtime", "privateuse1_runtime", ...; before PyTorch 1.13, "Runtime" and "Kernel",
// "Memcpy", "Memset".
bool is_launch_category(std::string_view category) {
    return ends_with(category, "_runtime") || ends_with(category, "_driver") ||
           category == "Runtime" || category == "Driver";
}

bool is_gpu_category(std::string_view category) {
    return category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset" ||
           category == "Kernel" || category == "Memcpy" || category == "Memset";
}

}  // namespace

bool GpuLaunches::keep(const ChromeEvent& event) {
    if (event.ph != "X" || !(is_launch_category(event.cat) || is_gpu_category(event.cat)))
        return false;
    const std::optional<std::int64_t> correlation = integer_of(arg_text(event, "correlation"));
    if (!correlation || *correlation <= 0)
        return false;
    const auto id = static_cast<std::uint64_t>(*correlation);
    if (is_gpu_category(event.cat)) {
        operations_.push_back(
            {id, event.ts_ns, event.ts_ns + std::max<std::int64_t>(event.dur_ns, 0)});
        ++operations_by_device_[integer_of(arg_text(event, "device")).value_or(event.pid)];
    } else {
        launches_.push_back({event.ts_ns, id});
    }
    return true;
}

void GpuLaunches::shift_times(const std::function<void(std::int64_t&)>& shift) {
    for (Launch& launch : launches_)
        shift(launch.time_ns);
    for (GpuOperation& operation : operations_) {
        const std::int64_t length = operation.end_ns - operation.start_ns;
        shift(operation.start_ns);
        operation.end_ns = operation.start_ns + length;
    }
}

void GpuLaunches::finish() {
    std::sort(launches_.begin(), launches_.end(),
              [](const Launch& left, const Launch& right) { return left.time_ns < right.time_ns; });
    std::sort(operations_.begin(), operations_.end(),
              [](const GpuOperation& left, const GpuOperation& right) {
                  return left.correlation < right.correlation;
              });
    // One span per correlation: a graph launch's kernels share their launch's correlation.
    // Merged in place, so that finishing needs no second copy.
    if (operations_.empty())
        return;
    auto kept = operations_.begin();
    for (auto next = std::next(kept); next != operations_.end(); ++next) {
        if (kept->correlation != next->correlation) {
            *++kept = *next;
            continue;
        }
        kept->start_ns = std::min(kept->start_ns, next->start_ns);
        kept->end_ns = std::max(kept->end_ns, next->end_ns);
    }
    operations_.erase(std::next(kept), operations_.end());
}

const GpuLaunches::GpuOperation* GpuLaunches::operation_of(std::uint64_t correlation) const {
    const auto found = std::lower_bound(
        operations_.begin(), operations_.end(), correlation,
        [](const GpuOperation& operation, std::uint64_t id) { return operation.correlation < id; });
    return found != operations_.end() && found->correlation == correlation ? &*found : nullptr;
}

std::optional<GpuSpan> GpuLaunches::work_launched(std::int64_t from_ns, std::int64_t to_ns) const {
    std::optional<GpuSpan> span;
    auto launch =
        std::lower_bound(launches_.begin(), launches_.end(), from_ns,
                         [](const Launch& kept, std::int64_t time) { return kept.time_ns < time; });
    for (; launch != launches_.end() && launch->time_ns <= to_ns; ++launch) {
        const GpuOperation* operation = operation_of(launch->correlation);
        if (operation == nullptr)
            continue;
        if (!span)
            span = GpuSpan{operation->start_ns, operation->end_ns};
        span->start_ns = std::min(span->start_ns, operation->start_ns);
        span->end_ns = std::max(span->end_ns, operation->end_ns);
    }
    return span;
}

}  // namespace pipelens::import
