// Exact decimal text to integers: the digits are used as written, never through a double, so
// an absolute timestamp in microseconds with a nanosecond fraction keeps every nanosecond.
#include "engine/import/decimal_text.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace pipelens::import {
namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Past the JSON number's digits from `at`; npos where none start there.
std::size_t skip_digits(std::string_view text, std::size_t at) {
    const std::size_t first = at;
    while (at < text.size() && is_digit(text[at]))
        ++at;
    return at == first ? std::string_view::npos : at;
}

bool is_json_number(std::string_view text) {
    std::size_t at = !text.empty() && text[0] == '-' ? 1 : 0;
    if (at < text.size() && text[at] == '0')
        ++at;
    else if ((at = skip_digits(text, at)) == std::string_view::npos)
        return false;
    if (at < text.size() && text[at] == '.' &&
        (at = skip_digits(text, at + 1)) == std::string_view::npos)
        return false;
    if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
        ++at;
        if (at < text.size() && (text[at] == '+' || text[at] == '-'))
            ++at;
        if ((at = skip_digits(text, at)) == std::string_view::npos)
            return false;
    }
    return at == text.size();
}

// Whether the 8 bytes at `q` are all ASCII digits (a word at a time).
bool eight_digits(const char* q) {
    std::uint64_t word;
    std::memcpy(&word, q, 8);
    return ((word & 0xF0F0F0F0F0F0F0F0ULL) |
            (((word + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
           0x3333333333333333ULL;
}

// The value of 8 ASCII digits at `q`: pairs, then quads, then the whole, by multiply-and-shift
// in one word (little-endian: the first digit is the lowest byte).
std::uint64_t eight_digits_value(const char* q) {
    if constexpr (std::endian::native != std::endian::little) {
        std::uint64_t value = 0;
        for (int i = 0; i < 8; ++i)
            value = value * 10 + static_cast<std::uint64_t>(q[i] - '0');
        return value;
    }
    std::uint64_t word;
    std::memcpy(&word, q, 8);
    word -= 0x3030303030303030ULL;
    word = (word * 10 + (word >> 8)) & 0x00FF00FF00FF00FFULL;      // 2-digit numbers
    word = (word * 100 + (word >> 16)) & 0x0000FFFF0000FFFFULL;    // 4-digit numbers
    word = (word * 10000 + (word >> 32)) & 0x00000000FFFFFFFFULL;  // the 8-digit number
    return word;
}

// scaled_json_number's common case, written for speed: no exponent, at most `scale` fraction
// digits (Kineto writes ns as three), and at most 18 digits in all, so that the result fits.
// Unsigned arithmetic: a longer number wraps (defined) before the digit count refuses it.
std::optional<std::int64_t> scaled_integer_plain(std::string_view text, int scale) {
    const bool negative = text[0] == '-';
    std::uint64_t value = 0;
    std::size_t i = negative;
    for (; i + 8 <= text.size() && i < 9 && eight_digits(text.data() + i); i += 8)
        value = value * 100'000'000 + eight_digits_value(text.data() + i);
    for (; i < text.size() && is_digit(text[i]); ++i)
        value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    std::size_t digits = i - negative;
    int scaled = 0;
    if (i < text.size() && text[i] == '.') {
        for (++i; i < text.size() && is_digit(text[i]); ++i, ++scaled)
            value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
        digits += static_cast<std::size_t>(scaled);
    }
    if (i != text.size() || scaled > scale ||
        digits + static_cast<std::size_t>(scale - scaled) > 18)
        return std::nullopt;
    for (; scaled < scale; ++scaled)
        value *= 10;
    const auto magnitude = static_cast<std::int64_t>(value);
    return negative ? -magnitude : magnitude;
}

}  // namespace

std::optional<std::int64_t> scaled_json_number(std::string_view text, int scale) {
    if (const auto fast = scaled_integer_plain(text, scale))
        return fast;
    std::size_t i = 0;
    const bool negative = !text.empty() && text[0] == '-';
    i += negative;
    const std::size_t int_begin = i;
    while (i < text.size() && is_digit(text[i]))
        ++i;
    const std::size_t int_size = i - int_begin;
    std::size_t frac_begin = i, frac_size = 0;
    if (i < text.size() && text[i] == '.') {
        frac_begin = ++i;
        while (i < text.size() && is_digit(text[i]))
            ++i;
        frac_size = i - frac_begin;
    }
    long exponent = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        const bool exponent_negative = text[++i] == '-';
        i += text[i] == '-' || text[i] == '+';
        for (; i < text.size(); ++i)
            exponent = std::min(exponent * 10 + (text[i] - '0'), 1'000'000L);
        exponent = exponent_negative ? -exponent : exponent;
    }
    const auto digit = [&](long j) {
        const auto k = static_cast<std::size_t>(j);
        return text[k < int_size ? int_begin + k : frac_begin + k - int_size] - '0';
    };
    const long digits = static_cast<long>(int_size + frac_size);
    const long shift = exponent + scale - static_cast<long>(frac_size);
    const long kept = std::max(0L, std::min(digits, digits + shift));  // digits left of the point
    constexpr std::uint64_t limit = std::numeric_limits<std::int64_t>::max();
    std::uint64_t value = 0;
    for (long j = 0; j < kept; ++j) {
        const auto d = static_cast<std::uint64_t>(digit(j));
        if (value > (limit - d) / 10)
            return std::nullopt;
        value = value * 10 + d;
    }
    for (long s = 0; s < shift && value != 0; ++s) {
        if (value > limit / 10)
            return std::nullopt;
        value *= 10;
    }
    if (kept < digits && digits + shift >= 0 && digit(kept) >= 5) {
        if (value == limit)
            return std::nullopt;
        ++value;
    }
    const auto magnitude = static_cast<std::int64_t>(value);
    return negative ? -magnitude : magnitude;
}

std::optional<std::int64_t> scaled_decimal(std::string_view text, int scale) {
    if (!is_json_number(text))
        return std::nullopt;
    return scaled_json_number(text, scale);
}

}  // namespace pipelens::import
