// Durations and sizes printed for people: what the CLI's tables, the viewer's panels and the
// reports show. Kept apart from parsing (engine/experiment/units.hpp) so a reader of traces
// formats a duration without linking the experiment parser.
//
// It lives with the trace store (layer 0, which depends on nothing of ours) because the timeline
// picture prints sizes with it; every layer above includes it from here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pipelens {

// "1.234 ms", "850 ns", "12.5 s": three significant decimals in the largest fitting unit.
std::string format_duration(std::int64_t nanoseconds);
// A ruler's label for the tick at `nanoseconds`, ticks `step` apart: every label of a ruler in
// the unit its step picks and with the decimals the step needs (a 5 ms step: "0 ms", "5 ms"; a
// 2.5 ms step: "0.0 ms", "2.5 ms", "5.0 ms"), so that neighbouring labels read alike.
std::string format_tick(std::int64_t nanoseconds, std::int64_t step);
// "16.0 MiB", "512 B": binary units, the largest that keeps the value at 1 or more.
std::string format_bytes(std::int64_t bytes);

// The unit format_bytes prints `bytes` in, for a scale of figures (a chart's axis) to share.
struct ByteUnit {
    std::string_view name;  // "B", "KiB", ... "TiB"
    double bytes = 1;       // its size: 1, 1024, ...
};
ByteUnit byte_unit(std::int64_t bytes);

}  // namespace pipelens
