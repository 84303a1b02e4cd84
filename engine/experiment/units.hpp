// Quantities as people write them in experiments and flags: durations ("1.5ms", "20us",
// "300ns", a bare number is microseconds), bandwidths ("25GB/s", "200Gbit/s", a bare number is
// GB/s) and sizes ("16MiB", "4GB", a bare number is bytes). Printing them is
// engine/text/quantities.hpp.
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

}  // namespace pipelens
