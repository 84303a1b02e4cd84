// Option checks whose refusals say what the value must be. CLI11's own range checks print their
// bounds, and a positive number's upper bound is the largest double written out in full.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace pipelens::cli {

// A finite ratio above 0, as a straggler threshold is.
inline CLI::Validator positive_ratio() {
    return CLI::Validator(
        [](const std::string& text) -> std::string {
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !(value > 0) || !std::isfinite(value))
                return text + " is not a ratio above 0 (e.g. 1.2)";
            return "";
        },
        "RATIO");
}

// A count of 1 or more (processes, ranks).
inline CLI::Validator count_of(const std::string& what) {
    return CLI::Validator(
        [what](const std::string& text) -> std::string {
            char* end = nullptr;
            const long value = std::strtol(text.c_str(), &end, 10);
            if (end == text.c_str() || *end != '\0' || value < 1)
                return text + " is not a " + what + " count (1 or more)";
            return "";
        },
        "N");
}

// A whole number int64 holds (a run id, an event number): CLI11 reads a larger one as int64's
// largest, and "no run 9223372036854775807" names a run nobody asked for.
inline CLI::Validator int64_number() {
    return CLI::Validator(
        [](const std::string& text) -> std::string {
            std::int64_t value = 0;
            const auto [end, error] =
                std::from_chars(text.data(), text.data() + text.size(), value);
            if (error == std::errc::result_out_of_range)
                return text + " is out of range (at most 9223372036854775807)";
            if (error != std::errc() || end != text.data() + text.size())
                return text + " is not a whole number";
            return "";
        },
        "N");
}

}  // namespace pipelens::cli
