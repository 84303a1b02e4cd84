// Printing durations and sizes; see quantities.hpp.
#include "traces/text/quantities.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

namespace pipelens {

std::string format_duration(std::int64_t nanoseconds) {
    const double value = static_cast<double>(nanoseconds);
    const double magnitude = std::fabs(value);
    if (magnitude < 1e3)
        return fmt::format("{} ns", nanoseconds);
    if (magnitude < 1e6)
        return fmt::format("{:.3f} us", value / 1e3);
    if (magnitude < 1e9)
        return fmt::format("{:.3f} ms", value / 1e6);
    return fmt::format("{:.3f} s", value / 1e9);
}

std::string format_tick(std::int64_t nanoseconds, std::int64_t step) {
    struct Unit {
        std::int64_t size;
        std::string_view name;
    };
    constexpr std::array<Unit, 4> kUnits{
        {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}}};
    const Unit& unit = *std::find_if(kUnits.begin(), kUnits.end() - 1,
                                     [&](const Unit& candidate) { return step >= candidate.size; });
    int decimals = 0;
    for (std::int64_t scaled = step % unit.size; scaled != 0 && decimals < 3; ++decimals)
        scaled = scaled * 10 % unit.size;
    return fmt::format("{:.{}f} {}",
                       static_cast<double>(nanoseconds) / static_cast<double>(unit.size), decimals,
                       unit.name);
}

ByteUnit byte_unit(std::int64_t bytes) {
    constexpr std::array<std::string_view, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
    double value = std::fabs(static_cast<double>(bytes));
    double size = 1;
    std::size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < kNames.size()) {
        value /= 1024.0;
        size *= 1024.0;
        ++unit;
    }
    return {kNames[unit], size};
}

std::string format_bytes(std::int64_t bytes) {
    const ByteUnit unit = byte_unit(bytes);
    if (unit.bytes == 1)
        return fmt::format("{} B", bytes);
    return fmt::format("{:.1f} {}", static_cast<double>(bytes) / unit.bytes, unit.name);
}

}  // namespace pipelens
