// Quantities as people write them in experiments and flags: durations ("1.5ms", "20us",
// "300ns", a bare number is microseconds), bandwidths ("25GB/s", "200Gbit/s", a bare number is
// GB/s), sizes ("16MiB", "4GB", a bare number is bytes) and ratios ("0.2" or "20%"). Printing them
// is traces/text/quantities.hpp.
//
// Invariants: parsing is strict (the whole text must be one number and one known unit) and
// rejects negative or non-finite values; results are integer nanoseconds, bytes per nanosecond
// (1 GB/s = 1 byte/ns) and integer bytes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pipelens {

// A quantity that does not parse; the message quotes the text and lists the accepted units.
class UnitParseError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

std::int64_t parse_duration_ns(std::string_view text);
double parse_bandwidth_bytes_per_ns(std::string_view text);
std::int64_t parse_byte_count(std::string_view text);

// The same for a limit (a CI gate): the whole ns or bytes at or below the text's value, so a
// figure above it is never within it (to the nearest, 32999.5ns let a 33000 ns step pass).
std::int64_t parse_duration_limit_ns(std::string_view text);
std::int64_t parse_byte_limit(std::string_view text);

// A share of a whole, from 0 to 1: "0.2" or "20%". A bare number above 1 is refused rather than
// read as a share above the whole ("20 is above 1; did you mean 20%?"): every ratio a user gives
// (a CI gate, an efficiency, a fraction of peak) is at most the whole.
double parse_ratio(std::string_view text);

}  // namespace pipelens
