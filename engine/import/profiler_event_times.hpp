// The times a profiler event may carry, checked as each event streams past: a pipeline action's
// range must say when it started and how long it ran, and no time may lie so far from the
// trace's zero that its end, or the difference between two ranks' times, wraps round int64.
//
// Invariant: every check throws ImportError naming the file and the event's byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/import/chrome_trace_stream.hpp"

namespace pipelens::import {

// The farthest from the trace's zero an event may lie, about 146 years (2^62 ns; a Unix-epoch
// timestamp is a quarter of it).
inline constexpr std::int64_t kLatestEventNs = std::int64_t{1} << 62;

// An action range without "ts" (it was placed at time 0: a 97 us step read as 5 ms), without
// "dur" or with a negative one (it was taken as empty). `what` names what the range is for.
void check_range_times(const std::string& path, const ChromeEvent& event,
                       std::string_view what = "a pipeline action's range");

// An event (ts, and ts + dur) more than kLatestEventNs from zero: a "ts" near the int64 limit
// once made the step 10 us and every other action -9.2e15 us.
void check_event_time(const std::string& path, const ChromeEvent& event);

// Kineto's baseTimeNanoseconds, which later times are shifted by: 0 to kLatestEventNs.
void check_base_time(const std::string& path, std::int64_t base_ns);

}  // namespace pipelens::import
