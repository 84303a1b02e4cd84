// Reads the calling thread's run-queue delay from /proc (see run_queue_wait.hpp).
#include "engine/run_record/run_queue_wait.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>

namespace pipelens::run_record {

RunQueueWait::RunQueueWait()
    : descriptor_(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}

RunQueueWait::~RunQueueWait() {
    if (descriptor_ >= 0)
        ::close(descriptor_);
}

std::optional<std::int64_t> RunQueueWait::waited_ns() const {
    if (descriptor_ < 0)
        return std::nullopt;
    char text[128];
    const ssize_t length = ::pread(descriptor_, text, sizeof text - 1, 0);
    if (length <= 0)
        return std::nullopt;
    return parse_run_queue_delay(std::string_view(text, static_cast<std::size_t>(length)));
}

std::optional<std::int64_t> parse_run_queue_delay(std::string_view schedstat) {
    const auto number_at = [&](std::size_t& at) -> std::optional<std::int64_t> {
        while (at < schedstat.size() && schedstat[at] == ' ')
            ++at;
        std::int64_t value = 0;
        const char* begin = schedstat.data() + at;
        const auto [end, error] =
            std::from_chars(begin, schedstat.data() + schedstat.size(), value);
        if (error != std::errc() || end == begin || value < 0)
            return std::nullopt;
        at += static_cast<std::size_t>(end - begin);
        return value;
    };
    std::size_t at = 0;
    // A thread that reads this has been given a core at least once, so its count of timeslices
    // is above 0 (its time on a core may still read 0: the kernel adds it up at ticks and
    // switches); a kernel that keeps no figure (sched_info off at run time) writes "0 0 0",
    // which is no measurement, not no wait.
    const std::optional<std::int64_t> on_core = number_at(at);
    const std::optional<std::int64_t> delay = on_core ? number_at(at) : std::nullopt;
    const std::optional<std::int64_t> timeslices = delay ? number_at(at) : std::nullopt;
    if (!timeslices || *timeslices == 0)
        return std::nullopt;
    return delay;
}

}  // namespace pipelens::run_record
