// Unit parsing. A table of suffixes per quantity keeps the accepted spellings in
// one place, so the error message lists exactly what the parser accepts.
#include "engine/experiment/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "engine/text/trim.hpp"

namespace pipelens {
namespace {

struct Unit {
    std::string_view suffix;
    double scale;  // multiplier into the result's unit
};

constexpr std::array kDurationUnits{
    Unit{"ns", 1.0}, Unit{"us", 1e3}, Unit{"\xC2\xB5s", 1e3}, Unit{"ms", 1e6}, Unit{"s", 1e9},
};
// Result unit: bytes per nanosecond (= GB/s).
constexpr std::array kBandwidthUnits{
    Unit{"B/s", 1e-9},         Unit{"KB/s", 1e-6},
    Unit{"MB/s", 1e-3},        Unit{"GB/s", 1.0},
    Unit{"TB/s", 1e3},         Unit{"KiB/s", 1024e-9},
    Unit{"MiB/s", 1048576e-9}, Unit{"GiB/s", 1073741824e-9},
    Unit{"Gbit/s", 0.125},     Unit{"Gbps", 0.125},
    Unit{"Mbit/s", 0.125e-3},  Unit{"Tbit/s", 125.0},
};
constexpr std::array kByteUnits{
    Unit{"B", 1.0},         Unit{"KB", 1e3},           Unit{"MB", 1e6},
    Unit{"GB", 1e9},        Unit{"TB", 1e12},          Unit{"KiB", 1024.0},
    Unit{"MiB", 1048576.0}, Unit{"GiB", 1073741824.0}, Unit{"TiB", 1099511627776.0},
};

template <std::size_t N>
std::string unit_list(const std::array<Unit, N>& units) {
    std::string list;
    for (const Unit& unit : units) {
        if (unit.suffix == "\xC2\xB5s")
            continue;  // an alias of us; keep the message ASCII
        if (!list.empty())
            list += ", ";
        list += unit.suffix;
    }
    return list;
}

// Splits "1.5 ms" into 1.5 and "ms"; errc::invalid_argument when no number leads the text,
// errc::result_out_of_range when it is past a double's range ("1e400ms").
std::errc split_number(std::string_view text, double& number, std::string_view& suffix) {
    const char* begin = text.data();
    const char* end = begin + text.size();
    const auto [rest, error] = std::from_chars(begin, end, number);
    if (rest == begin)
        return std::errc::invalid_argument;
    if (error != std::errc())
        return error;
    suffix = trim(std::string_view(rest, static_cast<std::size_t>(end - rest)));
    return std::errc();
}

template <std::size_t N>
double parse_quantity(std::string_view original, const std::array<Unit, N>& units,
                      double bare_scale, std::string_view what, std::string_view bare_meaning) {
    const std::string_view text = trim(original);
    double number = 0;
    std::string_view suffix;
    const auto fail = [&](std::string_view why) -> double {
        throw UnitParseError(fmt::format("'{}' is not a {}: {} (units: {}; a bare number is {})",
                                         original, what, why, unit_list(units), bare_meaning));
    };
    if (const std::errc error = split_number(text, number, suffix);
        error == std::errc::result_out_of_range)
        return fail("its number is out of any range");
    else if (error != std::errc())
        return fail("expected a number first");
    if (!std::isfinite(number) || number < 0)
        return fail("it must be a finite number, zero or more");
    if (suffix.empty())
        return number * bare_scale;
    for (const Unit& unit : units)
        if (unit.suffix == suffix)
            return number * unit.scale;
    return fail(fmt::format("unknown unit '{}'", suffix));
}

std::int64_t to_integer(double value, std::string_view original, std::string_view what) {
    if (value >= static_cast<double>(std::numeric_limits<std::int64_t>::max()))
        throw UnitParseError(fmt::format("'{}' is too large for a {}", original, what));
    return std::llround(value);
}

// Rounded down, but a value within a millionth of a whole unit is that unit: a decimal's binary
// error (0.29us is 289.99999999999997 ns) is no fraction the user wrote.
std::int64_t to_integer_at_most(double value, std::string_view original, std::string_view what) {
    if (value >= static_cast<double>(std::numeric_limits<std::int64_t>::max()))
        throw UnitParseError(fmt::format("'{}' is too large for a {}", original, what));
    const double nearest = std::round(value);
    return static_cast<std::int64_t>(std::abs(value - nearest) < 1e-6 ? nearest
                                                                      : std::floor(value));
}

}  // namespace

std::int64_t parse_duration_ns(std::string_view text) {
    const double value = parse_quantity(text, kDurationUnits, 1e3, "duration", "microseconds");
    return to_integer(value, text, "duration");
}

std::int64_t parse_duration_limit_ns(std::string_view text) {
    const double value = parse_quantity(text, kDurationUnits, 1e3, "duration", "microseconds");
    return to_integer_at_most(value, text, "duration");
}

std::int64_t parse_byte_limit(std::string_view text) {
    const double value = parse_quantity(text, kByteUnits, 1.0, "size", "bytes");
    return to_integer_at_most(value, text, "size");
}

double parse_bandwidth_bytes_per_ns(std::string_view text) {
    return parse_quantity(text, kBandwidthUnits, 1.0, "bandwidth", "GB/s");
}

std::int64_t parse_byte_count(std::string_view text) {
    const double value = parse_quantity(text, kByteUnits, 1.0, "size", "bytes");
    return to_integer(value, text, "size");
}

double parse_ratio(std::string_view text) {
    std::string_view number = trim(text);
    const bool percent = number.ends_with('%');
    if (percent)
        number = trim(number.substr(0, number.size() - 1));
    double value = 0;
    const auto [rest, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (number.empty() || error != std::errc() || rest != number.data() + number.size() ||
        !std::isfinite(value) || value < 0)
        throw UnitParseError(fmt::format("'{}' is not a ratio; give 0.2 or 20%", text));
    if (percent && value > 100)
        throw UnitParseError(fmt::format("{} is above 100%", text));
    if (!percent && value > 1)
        throw UnitParseError(fmt::format("{} is above 1; did you mean {}%?", text, number));
    return percent ? value / 100 : value;
}

}  // namespace pipelens
