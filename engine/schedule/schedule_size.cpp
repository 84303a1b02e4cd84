// Schedule size bounds. Per (stage, microbatch) a lowered schedule has at most three
// computations (F, and B or I + W) and, at each stage boundary, four transfers (SEND/RECV of the
// activation and of its gradient). Bytes: about 22 per action in the IR and as many again in
// its lowered copy, 32 per action and 56 per (stage, microbatch) in a simulation's timeline.
#include "engine/schedule/schedule_size.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "traces/text/quantities.hpp"

namespace pipelens {
namespace {

constexpr double kComputationsPerStageMicrobatch = 3;
constexpr double kTransfersPerBoundaryMicrobatch = 4;
constexpr double kBytesPerAction = 80;           // IR + lowered copy + timeline entry
constexpr double kBytesPerStageMicrobatch = 64;  // the simulator's per-microbatch state

// MemAvailable from /proc/meminfo, in bytes; 0 when it cannot be read.
std::int64_t meminfo_available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::int64_t kibibytes = 0;
    std::string unit;
    while (meminfo >> key >> kibibytes >> unit)
        if (key == "MemAvailable:")
            return kibibytes * 1024;
    return 0;
}

}  // namespace

ScheduleSize estimate_schedule_size(const ScheduleShape& shape) {
    const double stages = double(shape.rank_count) * shape.stages_per_rank;
    const double microbatches = shape.microbatch_count;
    ScheduleSize size;
    size.actions = stages * microbatches * kComputationsPerStageMicrobatch +
                   std::max(stages - 1, 0.0) * microbatches * kTransfersPerBoundaryMicrobatch;
    size.bytes = size.actions * kBytesPerAction + stages * microbatches * kBytesPerStageMicrobatch;
    return size;
}

std::int64_t available_memory_bytes() {
    std::int64_t available = meminfo_available_bytes();
    if (available <= 0)
        available = std::int64_t{sysconf(_SC_AVPHYS_PAGES)} * sysconf(_SC_PAGESIZE);
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        available = std::min<std::int64_t>(available, static_cast<std::int64_t>(limit.rlim_cur));
    return available;
}

void check_schedule_fits(const ScheduleShape& shape, std::int64_t memory_bytes) {
    validate_shape(shape);  // a shape no family can run is wrong input, whatever its size
    const ScheduleSize size = estimate_schedule_size(shape);
    if (size.bytes <= double(memory_bytes))
        return;
    throw ScheduleTooLargeError(fmt::format(
        "{} pp={} v={} m={} is too large for this machine: up to {:.3g} actions, which need "
        "about {} of memory to build and simulate, and {} is available; use fewer ranks or "
        "microbatches",
        schedule_kind_name(shape.kind), shape.rank_count, shape.stages_per_rank,
        shape.microbatch_count, size.actions,
        format_bytes(static_cast<std::int64_t>(std::min(size.bytes, 9e18))),
        format_bytes(memory_bytes)));
}

}  // namespace pipelens
