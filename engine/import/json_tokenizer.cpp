// The JSON tokenizer's slow paths: refilling and growing the buffer, strings with escapes or cut
// by the end of the buffer, literals, skipping containers, and errors. Each scan that meets the
// end of the buffer before the end of the input refills and scans the token again from its
// start, so a JsonSpan is always one piece.
#include "engine/import/json_tokenizer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/import/imported_run.hpp"

namespace pipelens::import {
namespace {

// A byte for an error message: itself when printable, its code otherwise.
std::string describe(char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x20 && byte < 0x7F ? fmt::format("'{}'", c)
                                       : fmt::format("byte 0x{:02x}", byte);
}

// Newlines in [first, last), for line numbers in errors (counted as bytes leave the buffer).
std::uint64_t count_newlines(const char* first, const char* last) {
    std::uint64_t count = 0;
#if defined(__SSE2__)
    // Per-lane counts in bytes (at most 255 blocks), summed with psadbw; no popcnt needed.
    const __m128i newline = _mm_set1_epi8('\n');
    while (last - first >= 16) {
        __m128i lanes = _mm_setzero_si128();
        for (int block = 0; block < 255 && last - first >= 16; ++block, first += 16) {
            const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(first));
            lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(bytes, newline));
        }
        const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
        count += static_cast<std::uint64_t>(_mm_cvtsi128_si32(sums)) +
                 static_cast<std::uint64_t>(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
    }
#endif
    return count + static_cast<std::uint64_t>(std::count(first, last, '\n'));
}

void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

// Four hex digits at `q` as a number, or -1.
long hex4(const char* q) {
    long value = 0;
    for (int i = 0; i < 4; ++i) {
        const char c = q[i];
        const int d = is_json_digit(c)         ? c - '0'
                      : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                      : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                               : -1;
        if (d < 0)
            return -1;
        value = value * 16 + d;
    }
    return value;
}

}  // namespace

bool is_json_number(std::string_view text, bool& is_integer) {
    const std::string copy(text);  // match_json_number needs the '\0' after it
    const char* bad = nullptr;
    return match_json_number(copy.c_str(), bad, is_integer) == copy.c_str() + copy.size();
}

JsonTokenizer::JsonTokenizer(ByteSource& source, const std::string& name, bool decompressed)
    : source_(source),
      name_(name),
      decompressed_(decompressed),
      capacity_(kJsonInitialBuffer),
      buffer_(new char[kJsonInitialBuffer + 1 + kJsonPadding]()) {
    end_ = buffer_.get();
    p_ = keep_ = end_;
}

// Reads more input after what is kept; false at the end of the input.
bool JsonTokenizer::fill() {
    if (eof_)
        return false;
    const auto kept = static_cast<std::size_t>(end_ - keep_);
    if (keep_ != base()) {
        lines_before_ += count_newlines(base(), keep_);
        const std::ptrdiff_t shift = keep_ - base();
        base_offset_ += static_cast<std::uint64_t>(shift);
        std::memmove(base(), keep_, kept);
        p_ -= shift;
        keep_ = base();
        end_ = base() + kept;
    }
    if (capacity_ - kept < capacity_ / 4)  // an event fills most of it: make room
        grow();
    const std::size_t n = source_.read(end_, capacity_ - kept);
    end_ += n;
    *end_ = '\0';
    eof_ = n == 0;
    return n != 0;
}

// Doubles the buffer for an event that (nearly) fills it; keep_ == base() here.
void JsonTokenizer::grow() {
    if (capacity_ >= kJsonMaxBuffer && end_ - keep_ < static_cast<std::ptrdiff_t>(capacity_))
        return;  // at the limit, but some room is left: read into that
    if (capacity_ >= kJsonMaxBuffer)
        fail_at(keep_, fmt::format("an event (or top-level member) larger than {} MiB; pipelens "
                                   "reads events of at most that size",
                                   kJsonMaxBuffer >> 20));
    const std::size_t capacity = std::min(capacity_ * 2, kJsonMaxBuffer);
    std::unique_ptr<char[]> bigger(new char[capacity + 1 + kJsonPadding]());
    const auto kept = static_cast<std::size_t>(end_ - base());
    std::memcpy(bigger.get(), base(), kept);
    p_ = bigger.get() + (p_ - base());
    keep_ = bigger.get();
    end_ = bigger.get() + kept;
    buffer_ = std::move(bigger);
    capacity_ = capacity;
}

void JsonTokenizer::fail_at(const char* at, std::string_view what) const {
    const auto offset = base_offset_ + static_cast<std::uint64_t>(at - base());
    const auto line = lines_before_ + count_newlines(base(), at) + 1;
    throw ImportError(fmt::format("{}: {} at byte {}{} (line {})", name_, what, offset,
                                  decompressed_ ? " of the decompressed JSON" : "", line));
}

void JsonTokenizer::unexpected(std::string_view expected) const {
    if (p_ == end_)
        fail_at(p_, fmt::format("the JSON ends where {} was expected (truncated file?)", expected));
    fail_at(p_, fmt::format("unexpected {} where {} was expected", describe(*p_), expected));
}

void JsonTokenizer::unexpected_after(const char* at, std::string_view what) const {
    fail_at(at, fmt::format("unexpected {} after {}", describe(*at), what));
}

// scan_string past an escape or the end of the buffer.
JsonSpan JsonTokenizer::scan_string_rest(std::size_t start) {
    for (;;) {
        const char* q = find_json_string_special(keep_ + start);
        if (*q == '"') {
            p_ = q + 1;
            return span_from(start, q);
        }
        if (*q == '\\')
            return scan_escaped_string(start);
        if (q != end_)
            fail_at(q, "a control character inside a string (JSON needs it escaped)");
        p_ = end_;
        if (!fill())
            unexpected("the end of a string");
    }
}

// The slow path: a string with escapes, unescaped into scratch_ (from the start again after a
// refill, so that the JsonSpan stays one piece).
JsonSpan JsonTokenizer::scan_escaped_string(std::size_t start) {
    const std::size_t mark = scratch_.size();
    for (;;) {
        scratch_.resize(mark);
        const char* q = keep_ + start;
        for (;;) {
            const char* special = find_json_string_special(q);
            scratch_.append(q, special);
            q = special;
            if (*q == '"') {
                p_ = q + 1;
                return {static_cast<std::uint32_t>(mark),
                        static_cast<std::uint32_t>(scratch_.size() - mark), true};
            }
            if (end_ - q < 12 && !eof_)  // a \uXXXX\uXXXX pair may be cut: read on first
                break;
            if (*q != '\\') {
                if (q != end_)
                    fail_at(q, "a control character inside a string (JSON needs it escaped)");
                p_ = q;
                unexpected("the end of a string");
            }
            const char e = q[1];
            if (q + 1 == end_ || (e == 'u' && end_ - q < 6)) {  // the input ends in it
                p_ = end_;
                unexpected("the end of a string");
            }
            static constexpr std::string_view kFrom = "\"\\/bfnrt", kTo = "\"\\/\b\f\n\r\t";
            if (const std::size_t k = kFrom.find(e); e != '\0' && k != std::string_view::npos) {
                scratch_ += kTo[k];
                q += 2;
                continue;
            }
            if (e != 'u' || end_ - q < 6 || hex4(q + 2) < 0)
                fail_at(q, "an invalid escape sequence in a string");
            auto code = static_cast<std::uint32_t>(hex4(q + 2));
            q += 6;
            if (code >= 0xD800 && code < 0xDC00 && end_ - q >= 6 && q[0] == '\\' && q[1] == 'u') {
                const long low = hex4(q + 2);
                if (low >= 0xDC00 && low < 0xE000) {
                    code = 0x10000 + ((code - 0xD800) << 10) +
                           static_cast<std::uint32_t>(low - 0xDC00);
                    q += 6;
                }
            }
            append_utf8(scratch_, code >= 0xD800 && code < 0xE000 ? 0xFFFD : code);
        }
        p_ = end_;
        fill();
    }
}

JsonValue JsonTokenizer::scan_literal() {
    const auto start = static_cast<std::size_t>(p_ - keep_);
    for (;;) {
        const char* q = keep_ + start;
        const std::size_t size = *q == 'f' ? 5 : 4;
        if (static_cast<std::size_t>(end_ - q) <= size && !eof_) {
            p_ = end_;
            fill();
            continue;
        }
        p_ = q;
        if (static_cast<std::size_t>(end_ - q) < size) {
            p_ = end_;
            unexpected("true, false or null");
        }
        const std::string_view text(q, size);
        if (text != "true" && text != "false" && text != "null")
            unexpected("a value (true, false or null)");
        p_ = q + size;
        if (p_ != end_ && !ends_json_token(*p_))
            unexpected_after(p_, text);
        return {JsonKind::literal, span_from(start, p_), false, false};
    }
}

// Validates the object or array at p_ and steps over it, without recursion (any depth). With
// `retain`, keep_ stays put and the JsonValue's span is the container's raw text; without, keep_
// follows p_ so that a container of any size passes through the buffer.
JsonValue JsonTokenizer::skip_container(bool retain) {
    const auto start = static_cast<std::size_t>(p_ - keep_);
    const JsonKind kind = *p_ == '{' ? JsonKind::object : JsonKind::array;
    const std::size_t scratch_mark = scratch_.size();  // unescaped text of skipped strings: drop
    bool holds_object = false;
    containers_.clear();
    const auto release_unless_retained = [&] {
        if (!retain)
            keep_ = p_;
    };
    const auto skip_member_name = [&](char c) {
        if (c != '"')
            unexpected("a member name");
        scan_string();
        scratch_.resize(scratch_mark);
        expect(':', "':'");
        release_unless_retained();
        return skip_ws();
    };
    char c = *p_;
    for (;;) {
        if (c == '{' || c == '[') {  // open, then the first member, or the close
            holds_object |= !containers_.empty() && c == '{';
            containers_ += c;
            ++p_;
            release_unless_retained();
            c = skip_ws();
            if (c != (containers_.back() == '{' ? '}' : ']')) {
                if (containers_.back() == '{')
                    c = skip_member_name(c);
                continue;
            }
            ++p_;
            containers_.pop_back();
        } else {
            release_unless_retained();
            scan_scalar(c);
            scratch_.resize(scratch_mark);
        }
        // After a value: closes, then the next member.
        for (;;) {
            if (containers_.empty())
                return {kind, retain ? span_from(start, p_) : JsonSpan{}, false, holds_object};
            release_unless_retained();
            c = skip_ws();
            const bool in_object = containers_.back() == '{';
            if (c != (in_object ? '}' : ']'))
                break;
            ++p_;
            containers_.pop_back();
        }
        if (c != ',')
            unexpected(containers_.back() == '{' ? "',' or '}'" : "',' or ']'");
        ++p_;
        release_unless_retained();
        c = skip_ws();
        if (containers_.back() == '{')
            c = skip_member_name(c);
    }
}

}  // namespace pipelens::import
