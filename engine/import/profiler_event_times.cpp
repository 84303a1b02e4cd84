// Checks of a profiler event's times (profiler_event_times.hpp).
#include "engine/import/profiler_event_times.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/import/imported_run.hpp"
#include "engine/text/shortened.hpp"

namespace pipelens::import {

void check_range_times(const std::string& path, const ChromeEvent& event, std::string_view what) {
    const char* missing = !event.has_ts      ? "has no \"ts\""
                          : !event.has_dur   ? "has no \"dur\""
                          : event.dur_ns < 0 ? "has a negative \"dur\""
                                             : nullptr;
    if (missing != nullptr)
        throw ImportError(
            fmt::format("{}: byte {}: range \"{}\" {}: {} needs its start and duration", path,
                        event.offset, shown_text(event.name, 80), missing, what));
}

void check_event_time(const std::string& path, const ChromeEvent& event) {
    const std::int64_t duration = event.has_dur ? std::max<std::int64_t>(event.dur_ns, 0) : 0;
    if (event.ts_ns >= -kLatestEventNs && event.ts_ns <= kLatestEventNs &&
        duration <= kLatestEventNs && event.ts_ns + duration <= kLatestEventNs)
        return;
    throw ImportError(
        fmt::format("{}: byte {}: event \"{}\" lies more than 146 years from the "
                    "trace's zero (\"ts\" {} ns, \"dur\" {} ns)",
                    path, event.offset, shown_text(event.name, 80), event.ts_ns, event.dur_ns));
}

void check_base_time(const std::string& path, std::int64_t base_ns) {
    if (base_ns < 0 || base_ns > kLatestEventNs)
        throw ImportError(fmt::format(
            "{}: \"baseTimeNanoseconds\" {} is not a time since the Unix epoch (0 to 2^62 ns)",
            path, base_ns));
}

}  // namespace pipelens::import
