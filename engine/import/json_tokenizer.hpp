// A streaming JSON tokenizer over one refillable buffer (internal to engine/import): it validates
// JSON (RFC 8259; UTF-8 passed through unchecked, a lone \uD800-\uDFFF escape becomes U+FFFD)
// and hands out what it scanned as Spans into the buffer, decoding only what a caller asks for.
// What the JSON means is the caller's business (chrome_trace_stream.cpp reads trace events).
//
// Invariants:
//  - the buffer holds [keep_, end_) across refills, with a '\0' sentinel at *end_ and
//    kJsonPadding readable bytes after it, so that scans stop at the end without bounds checks
//    and 16-byte loads never leave the allocation; keep_ <= p_ <= end_;
//  - every Span is an offset from keep_ (or into the scratch string), so it stays valid when a
//    refill moves the bytes, until the caller calls release(); a token cut by the end of the
//    buffer is scanned again from its start after the refill (at most once per refill);
//  - after release() keep_ follows p_, so values of any size can pass through the buffer;
//  - the buffer grows only when what is kept fills most of it, up to kJsonMaxBuffer (64 MiB);
//  - every error is an ImportError naming the input and the byte offset (and line).
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "engine/import/byte_source.hpp"

namespace pipelens::import {

inline constexpr std::size_t kJsonInitialBuffer = 256 * 1024;
inline constexpr std::size_t kJsonMaxBuffer = 64 * 1024 * 1024;
inline constexpr std::size_t kJsonPadding = 16;  // readable bytes after the sentinel

// A piece of the text: an offset from keep_ in the buffer, or from the start of the scratch
// string where an unescaped copy was needed.
struct JsonSpan {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
    bool in_scratch = false;
};

enum class JsonKind : std::uint8_t { string, number, literal, object, array };

struct JsonValue {
    JsonKind kind = JsonKind::literal;
    JsonSpan span;              // unescaped string, number text, literal, or container's raw text
    bool is_integer = false;    // number with neither fraction nor exponent
    bool holds_object = false;  // container with an object somewhere inside
};

// The first '"', '\\' or control byte (the sentinel included) at or after `q`, 16 bytes at a
// time with SSE2 (every x86-64 has it), else 8 at a time in a word: there the lowest flagged
// byte of each test is exact, so the lowest of their union is too. Inline: it is the hot loop.
inline const char* find_json_string_special(const char* q) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i slash = _mm_set1_epi8('\\');
    const __m128i below_space = _mm_set1_epi8(0x1F);
    for (;; q += 16) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
        const __m128i found =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, slash)),
                         _mm_cmpeq_epi8(_mm_max_epu8(bytes, below_space), below_space));
        if (const int mask = _mm_movemask_epi8(found))
            return q + std::countr_zero(static_cast<unsigned>(mask));
    }
#else
    if constexpr (std::endian::native == std::endian::little) {
        constexpr std::uint64_t ones = 0x0101010101010101ULL;
        constexpr std::uint64_t highs = 0x8080808080808080ULL;
        for (;; q += 8) {
            std::uint64_t word;
            std::memcpy(&word, q, 8);
            const std::uint64_t quote = word ^ (ones * '"');
            const std::uint64_t slash = word ^ (ones * '\\');
            const std::uint64_t found = ((quote - ones) & ~quote) | ((slash - ones) & ~slash) |
                                        ((word - ones * 0x20) & ~word);
            if (found & highs)
                return q + (std::countr_zero(found & highs) >> 3);
        }
    }
    while (*q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20)
        ++q;
    return q;
#endif
}

inline bool is_json_digit(char c) {
    return c >= '0' && c <= '9';
}

// What may follow a number or literal.
inline bool ends_json_token(char c) {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Past a JSON number starting at `q` (which must be followed by a byte that is not part of
// one, such as '\0'), or nullptr with `bad` at the byte that breaks the grammar.
inline const char* match_json_number(const char* q, const char*& bad, bool& is_integer) {
    is_integer = true;
    if (*q == '-')
        ++q;
    if (*q == '0') {
        ++q;
    } else if (is_json_digit(*q)) {
        while (is_json_digit(*q))
            ++q;
    } else {
        bad = q;
        return nullptr;
    }
    if (*q == '.') {
        is_integer = false;
        if (!is_json_digit(*++q)) {
            bad = q;
            return nullptr;
        }
        while (is_json_digit(*q))
            ++q;
    }
    if (*q == 'e' || *q == 'E') {
        is_integer = false;
        ++q;
        if (*q == '+' || *q == '-')
            ++q;
        if (!is_json_digit(*q)) {
            bad = q;
            return nullptr;
        }
        while (is_json_digit(*q))
            ++q;
    }
    return q;
}

// Whether `text` is exactly one JSON number (is_integer: without fraction or exponent).
bool is_json_number(std::string_view text, bool& is_integer);

class JsonTokenizer {
  public:
    // `name` is used in error messages; `decompressed` says the offsets are of gunzipped bytes.
    JsonTokenizer(ByteSource& source, const std::string& name, bool decompressed);

    // Reads the first bytes; call once before anything else.
    void start() { fill(); }

    // Skips JSON whitespace; returns the next byte, '\0' with at_end() at the end of the input.
    char skip_ws() {
        for (;;) {
            char c = *p_;
            while (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                c = *++p_;
            if (p_ != end_ || !fill())
                return c;
        }
    }
    // Steps over `c` after whitespace, else fails naming `expected`.
    void expect(char c, std::string_view expected);
    // Steps over the byte skip_ws() returned.
    void step() { ++p_; }
    // Lets a refill drop everything before the next byte: Spans taken so far become invalid.
    void release() { keep_ = p_; }
    bool at_end() const { return p_ == end_; }
    // Offset of the next byte in the (decompressed) input.
    std::uint64_t offset() const {
        return base_offset_ + static_cast<std::uint64_t>(p_ - buffer_.get());
    }

    // A string at the next byte ('"'); the Span is the raw bytes when there is no escape in it.
    // The common case (whole in the buffer, no escape) is inline.
    JsonSpan scan_string() {
        const char* q = find_json_string_special(p_ + 1);
        const auto start = static_cast<std::size_t>(p_ + 1 - keep_);
        if (*q != '"')
            return scan_string_rest(start);
        p_ = q + 1;
        return span_from(start, q);
    }
    // The value after whitespace. An object or array is validated and stepped over without
    // recursion (any depth); with `retain` its Span is its raw text, without it is empty and
    // the container passes through the buffer whatever its size (release() as it goes).
    JsonValue parse_value(bool retain);

    std::string_view view(JsonSpan span) const {
        const char* start = span.in_scratch ? scratch_.data() : keep_;
        return {start + span.offset, span.size};
    }
    bool is_null(const JsonValue& value) const {
        return value.kind == JsonKind::literal && view(value.span) == "null";
    }
    // Drops the unescaped copies of strings: their Spans become invalid.
    void clear_scratch() { scratch_.clear(); }

    // After the '{' of an object (the next byte): steps over it and returns true at the first
    // member's name ('"'), or steps over the '}' of an empty object and returns false; anything
    // else fails naming `expected_name`.
    bool first_member(std::string_view expected_name);
    // After a member's value: steps over the ',' and returns true at the next member's name, or
    // steps over the closing '}' and returns false. Fails naming `expected_separator` when
    // neither follows, or `expected_name` when no name follows the ','.
    bool next_member(std::string_view expected_separator,
                     std::string_view expected_name = "a member name after ','");

    // ImportError "<name>: <what> at byte N[ of the decompressed JSON] (line L)" at the next byte.
    [[noreturn]] void fail(std::string_view what) const { fail_at(p_, what); }
    // "unexpected X where <expected> was expected", or that the input ends there.
    [[noreturn]] void unexpected(std::string_view expected) const;

  private:
    char* base() const { return buffer_.get(); }
    bool fill();
    void grow();
    [[noreturn]] void fail_at(const char* at, std::string_view what) const;
    // "unexpected X after <what>" at `at`.
    [[noreturn]] void unexpected_after(const char* at, std::string_view what) const;
    JsonSpan span_from(std::size_t offset, const char* stop) const {
        return {static_cast<std::uint32_t>(offset),
                static_cast<std::uint32_t>(stop - (keep_ + offset)), false};
    }
    // Steps over a '}' after whitespace, if that is what follows.
    bool closes_object();
    // Fails naming `expected_name` unless a '"' follows whitespace.
    void expect_member_name(std::string_view expected_name);
    JsonSpan scan_string_rest(std::size_t start);
    JsonSpan scan_escaped_string(std::size_t start);
    JsonValue scan_number();
    JsonValue scan_literal();
    JsonValue scan_scalar(char c);
    JsonValue skip_container(bool retain);

    ByteSource& source_;
    const std::string& name_;
    const bool decompressed_;

    std::size_t capacity_;  // bytes of data the buffer holds, sentinel and padding not counted
    std::unique_ptr<char[]> buffer_;
    const char* p_;     // next byte to read
    char* end_;         // end of the data; *end_ == '\0'
    const char* keep_;  // first byte a refill must keep (Spans are offsets from here)
    bool eof_ = false;
    std::uint64_t base_offset_ = 0;   // stream offset of base()
    std::uint64_t lines_before_ = 0;  // newlines before base()

    std::string scratch_;     // unescaped strings
    std::string containers_;  // open '{'/'[' while skipping a value
};

// The hot paths, inline: once per member or value of every event.

inline void JsonTokenizer::expect(char c, std::string_view expected) {
    if (skip_ws() != c)
        unexpected(expected);
    ++p_;
}

inline bool JsonTokenizer::closes_object() {
    if (skip_ws() != '}')
        return false;
    ++p_;
    return true;
}

inline void JsonTokenizer::expect_member_name(std::string_view expected_name) {
    if (skip_ws() != '"')
        unexpected(expected_name);
}

inline bool JsonTokenizer::first_member(std::string_view expected_name) {
    ++p_;
    if (closes_object())
        return false;
    expect_member_name(expected_name);
    return true;
}

inline bool JsonTokenizer::next_member(std::string_view expected_separator,
                                       std::string_view expected_name) {
    if (closes_object())
        return false;
    expect(',', expected_separator);
    expect_member_name(expected_name);
    return true;
}

inline JsonValue JsonTokenizer::scan_number() {
    const auto start = static_cast<std::size_t>(p_ - keep_);
    for (;;) {
        const char* bad = nullptr;
        bool is_integer = false;
        const char* stop = match_json_number(keep_ + start, bad, is_integer);
        const char* at = stop ? stop : bad;
        if (at == end_ && !eof_) {
            p_ = end_;
            fill();
            continue;
        }
        p_ = at;
        if (!stop)
            unexpected("a digit");
        if (stop != end_ && !ends_json_token(*stop))
            unexpected_after(stop, "a number");
        return {JsonKind::number, span_from(start, stop), is_integer, false};
    }
}

inline JsonValue JsonTokenizer::scan_scalar(char c) {
    if (c == '"')
        return {JsonKind::string, scan_string(), false, false};
    if (c == '-' || is_json_digit(c))
        return scan_number();
    if (c == 't' || c == 'f' || c == 'n')
        return scan_literal();
    unexpected("a value");
}

inline JsonValue JsonTokenizer::parse_value(bool retain) {
    const char c = skip_ws();
    if (c != '{' && c != '[')
        return scan_scalar(c);
    return skip_container(retain);
}

}  // namespace pipelens::import
