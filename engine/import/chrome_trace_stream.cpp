// A hand-written JSON tokenizer over one refillable buffer, specialised to Chrome traces: it
// validates the whole document but only decodes what a trace event needs, and hands each event
// out as views into the buffer. (nlohmann's SAX parser was the alternative: with a handler that
// does nothing it reads ~0.47 M Kineto events/s, this reader ~2 M/s plain and ~1.4 M/s gzip on
// the same core (tests/bench/import_bench.cpp), against a target of 1 M/s. The difference: no
// string is copied unless it has an escape, numbers are converted only where a field needs them,
// strings are scanned 16 bytes at a time, and ts digits 8 at a time.)
//
// Invariants:
//  - the buffer holds [keep_, end_) across refills, with a '\0' sentinel at *end_ and
//    kPadding readable bytes after it, so that scans stop at the end without bounds checks and
//    16-byte loads never leave the allocation; keep_ <= p_ <= end_;
//  - while an event is parsed keep_ is its '{', so every Span (an offset from keep_) stays valid
//    when a refill moves the bytes; a token cut by the end of the buffer is scanned again from
//    its start after the refill (at most once per refill, so the cost is nil);
//  - outside events keep_ follows p_, so top-level members of any size (deviceProperties, or a
//    foreign array) are skipped with no growth of the buffer;
//  - the buffer grows only when a single event fills most of it, up to kMaxBuffer (64 MiB).
#include "engine/import/chrome_trace_stream.hpp"

#include "engine/import/byte_source.hpp"
#include "engine/import/decimal_text.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <fmt/format.h>

namespace pipelens::import {
namespace {

constexpr std::size_t kInitialBuffer = 256 * 1024;
constexpr std::size_t kMaxBuffer = 64 * 1024 * 1024;
constexpr std::size_t kPadding = 16;  // readable bytes after the sentinel (16-byte loads)

// A piece of the current event's text: an offset from the event's start in the buffer, or
// from the start of the scratch string where an unescaped copy was needed.
struct Span {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
    bool in_scratch = false;
};

enum class ValueKind : std::uint8_t { string, number, literal, object, array };

struct Value {
    ValueKind kind = ValueKind::literal;
    Span span;                  // unescaped string, number text, literal, or container's raw text
    bool is_integer = false;    // number with neither fraction nor exponent
    bool holds_object = false;  // container with an object somewhere inside
};

struct ArgSlot {
    Span key;
    Value value;
};

// The members of an event the reader interprets; everything else is validated and skipped.
enum class Field : std::uint8_t { other, name, cat, ph, ts, dur, pid, tid, id, bp, args };

struct EventFields {
    Span name, cat, ph, pid, tid, id, bp;
    std::int64_t ts_ns = 0, dur_ns = -1;
    std::optional<std::int64_t> pid_number, tid_number, id_number;
    bool has_ts = false, has_dur = false;
};

Field classify(std::string_view key) {
    switch (key.size()) {
        case 2:
            return key == "ph"   ? Field::ph
                   : key == "ts" ? Field::ts
                   : key == "id" ? Field::id
                   : key == "bp" ? Field::bp
                                 : Field::other;
        case 3:
            return key == "cat"   ? Field::cat
                   : key == "dur" ? Field::dur
                   : key == "pid" ? Field::pid
                   : key == "tid" ? Field::tid
                                  : Field::other;
        case 4:
            return key == "name" ? Field::name : key == "args" ? Field::args : Field::other;
        default:
            return Field::other;
    }
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// A byte for an error message: itself when printable, its code otherwise.
std::string describe(char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x20 && byte < 0x7F ? fmt::format("'{}'", c)
                                       : fmt::format("byte 0x{:02x}", byte);
}

bool ends_token(char c) {  // what may follow a number or literal
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The first '"', '\\' or control byte (the sentinel included) at or after `q`, 16 bytes at a
// time with SSE2 (every x86-64 has it), else 8 at a time in a word: there the lowest flagged
// byte of each test is exact, so the lowest of their union is too.
const char* find_string_special(const char* q) {
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

// Past a JSON number starting at `q`, or nullptr with `bad` at the byte that breaks the grammar.
const char* match_number(const char* q, const char*& bad, bool& is_integer) {
    is_integer = true;
    if (*q == '-')
        ++q;
    if (*q == '0') {
        ++q;
    } else if (is_digit(*q)) {
        while (is_digit(*q))
            ++q;
    } else {
        bad = q;
        return nullptr;
    }
    if (*q == '.') {
        is_integer = false;
        if (!is_digit(*++q)) {
            bad = q;
            return nullptr;
        }
        while (is_digit(*q))
            ++q;
    }
    if (*q == 'e' || *q == 'E') {
        is_integer = false;
        ++q;
        if (*q == '+' || *q == '-')
            ++q;
        if (!is_digit(*q)) {
            bad = q;
            return nullptr;
        }
        while (is_digit(*q))
            ++q;
    }
    return q;
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
        const int d = is_digit(c)              ? c - '0'
                      : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                      : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                               : -1;
        if (d < 0)
            return -1;
        value = value * 16 + d;
    }
    return value;
}

class TraceParser {
  public:
    TraceParser(ByteSource& source, const std::string& name, bool decompressed,
                const std::function<void(const ChromeEvent&)>& on_event)
        : source_(source),
          name_(name),
          decompressed_(decompressed),
          on_event_(on_event),
          capacity_(kInitialBuffer),
          buffer_(new char[kInitialBuffer + 1 + kPadding]()) {
        end_ = buffer_.get();
        p_ = keep_ = end_;
    }

    ChromeTraceHeader parse();

  private:
    char* base() const { return buffer_.get(); }
    bool fill();
    void grow();
    [[noreturn]] void fail(const char* at, std::string_view what) const;
    [[noreturn]] void unexpected(std::string_view expected) const;
    char skip_ws();
    void expect(char c, std::string_view expected);
    std::string_view view(Span span) const;
    bool is_null(const Value& value) const {
        return value.kind == ValueKind::literal && view(value.span) == "null";
    }
    Span span_from(std::size_t offset, const char* stop) const;

    // A string at p_ ('"'); the Span is the raw bytes when there is no escape in it. The common
    // case (whole in the buffer, no escape) is inline.
    Span scan_string() {
        const char* q = find_string_special(p_ + 1);
        const auto start = static_cast<std::size_t>(p_ + 1 - keep_);
        if (*q != '"')
            return scan_string_rest(start);
        p_ = q + 1;
        return span_from(start, q);
    }
    Span scan_string_rest(std::size_t start);
    Span scan_escaped_string(std::size_t start);
    Value scan_number();
    Value scan_literal();
    Value scan_scalar(char c);
    Value skip_container(bool retain);
    Value parse_value(bool retain);

    void parse_top_object();
    void parse_header_member(std::string_view key);
    void parse_distributed_info();
    std::optional<std::int64_t> integer_member(const Value& value, std::string_view what);
    void parse_events();
    void parse_event();
    void parse_event_member(Field field, EventFields& fields);
    std::int64_t time_ns(const Value& value, std::string_view what);
    void parse_args();
    void emit(const EventFields& fields, std::uint64_t offset);

    ByteSource& source_;
    const std::string& name_;
    const bool decompressed_;
    const std::function<void(const ChromeEvent&)>& on_event_;

    std::size_t capacity_;  // bytes of data the buffer holds, sentinel and padding not counted
    std::unique_ptr<char[]> buffer_;
    const char* p_;     // next byte to read
    char* end_;         // end of the data; *end_ == '\0'
    const char* keep_;  // first byte a refill must keep (Spans are offsets from here)
    bool eof_ = false;
    std::uint64_t base_offset_ = 0;   // stream offset of base()
    std::uint64_t lines_before_ = 0;  // newlines before base()

    std::string scratch_;     // unescaped strings of the current event
    std::string containers_;  // open '{'/'[' while skipping a value
    std::vector<ArgSlot> args_;
    std::vector<ChromeArg> arg_views_;
    ChromeTraceHeader header_;
};

// Reads more input after what is kept; false at the end of the input.
bool TraceParser::fill() {
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
void TraceParser::grow() {
    if (capacity_ >= kMaxBuffer && end_ - keep_ < static_cast<std::ptrdiff_t>(capacity_))
        return;  // at the limit, but some room is left: read into that
    if (capacity_ >= kMaxBuffer)
        fail(keep_, fmt::format("an event (or top-level member) larger than {} MiB; pipelens "
                                "reads events of at most that size",
                                kMaxBuffer >> 20));
    const std::size_t capacity = std::min(capacity_ * 2, kMaxBuffer);
    std::unique_ptr<char[]> bigger(new char[capacity + 1 + kPadding]());
    const auto kept = static_cast<std::size_t>(end_ - base());
    std::memcpy(bigger.get(), base(), kept);
    p_ = bigger.get() + (p_ - base());
    keep_ = bigger.get();
    end_ = bigger.get() + kept;
    buffer_ = std::move(bigger);
    capacity_ = capacity;
}

void TraceParser::fail(const char* at, std::string_view what) const {
    const auto offset = base_offset_ + static_cast<std::uint64_t>(at - base());
    const auto line = lines_before_ + count_newlines(base(), at) + 1;
    throw ImportError(fmt::format("{}: {} at byte {}{} (line {})", name_, what, offset,
                                  decompressed_ ? " of the decompressed JSON" : "", line));
}

void TraceParser::unexpected(std::string_view expected) const {
    if (p_ == end_)
        fail(p_, fmt::format("the JSON ends where {} was expected (truncated file?)", expected));
    fail(p_, fmt::format("unexpected {} where {} was expected", describe(*p_), expected));
}

// Skips JSON whitespace; returns the next byte, '\0' with p_ == end_ at the end of the input.
char TraceParser::skip_ws() {
    for (;;) {
        char c = *p_;
        while (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            c = *++p_;
        if (p_ != end_ || !fill())
            return c;
    }
}

void TraceParser::expect(char c, std::string_view expected) {
    if (skip_ws() != c)
        unexpected(expected);
    ++p_;
}

std::string_view TraceParser::view(Span span) const {
    const char* start = span.in_scratch ? scratch_.data() : keep_;
    return {start + span.offset, span.size};
}

Span TraceParser::span_from(std::size_t offset, const char* stop) const {
    return {static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(stop - (keep_ + offset)),
            false};
}

// scan_string past an escape or the end of the buffer.
Span TraceParser::scan_string_rest(std::size_t start) {
    for (;;) {
        const char* q = find_string_special(keep_ + start);
        if (*q == '"') {
            p_ = q + 1;
            return span_from(start, q);
        }
        if (*q == '\\')
            return scan_escaped_string(start);
        if (q != end_)
            fail(q, "a control character inside a string (JSON needs it escaped)");
        p_ = end_;
        if (!fill())
            unexpected("the end of a string");
    }
}

// The slow path: a string with escapes, unescaped into scratch_ (from the start again after a
// refill, so that the Span stays one piece).
Span TraceParser::scan_escaped_string(std::size_t start) {
    const std::size_t mark = scratch_.size();
    for (;;) {
        scratch_.resize(mark);
        const char* q = keep_ + start;
        for (;;) {
            const char* special = find_string_special(q);
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
                    fail(q, "a control character inside a string (JSON needs it escaped)");
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
                fail(q, "an invalid escape sequence in a string");
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

Value TraceParser::scan_number() {
    const auto start = static_cast<std::size_t>(p_ - keep_);
    for (;;) {
        const char* bad = nullptr;
        bool is_integer = false;
        const char* stop = match_number(keep_ + start, bad, is_integer);
        const char* at = stop ? stop : bad;
        if (at == end_ && !eof_) {
            p_ = end_;
            fill();
            continue;
        }
        p_ = at;
        if (!stop)
            unexpected("a digit");
        if (stop != end_ && !ends_token(*stop))
            fail(stop, fmt::format("unexpected {} after a number", describe(*stop)));
        return {ValueKind::number, span_from(start, stop), is_integer, false};
    }
}

Value TraceParser::scan_literal() {
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
        if (p_ != end_ && !ends_token(*p_))
            fail(p_, fmt::format("unexpected {} after {}", describe(*p_), text));
        return {ValueKind::literal, span_from(start, p_), false, false};
    }
}

Value TraceParser::scan_scalar(char c) {
    if (c == '"')
        return {ValueKind::string, scan_string(), false, false};
    if (c == '-' || is_digit(c))
        return scan_number();
    if (c == 't' || c == 'f' || c == 'n')
        return scan_literal();
    unexpected("a value");
}

// Validates the object or array at p_ and steps over it, without recursion (any depth). With
// `retain`, keep_ stays put and the Value's span is the container's raw text; without, keep_
// follows p_ so that a container of any size passes through the buffer.
Value TraceParser::skip_container(bool retain) {
    const auto start = static_cast<std::size_t>(p_ - keep_);
    const ValueKind kind = *p_ == '{' ? ValueKind::object : ValueKind::array;
    const std::size_t scratch_mark = scratch_.size();  // unescaped text of skipped strings: drop
    bool holds_object = false;
    containers_.clear();
    const auto release = [&] {
        if (!retain)
            keep_ = p_;
    };
    const auto skip_member_name = [&](char c) {
        if (c != '"')
            unexpected("a member name");
        scan_string();
        scratch_.resize(scratch_mark);
        expect(':', "':'");
        release();
        return skip_ws();
    };
    char c = *p_;
    for (;;) {
        if (c == '{' || c == '[') {  // open, then the first member, or the close
            holds_object |= !containers_.empty() && c == '{';
            containers_ += c;
            ++p_;
            release();
            c = skip_ws();
            if (c != (containers_.back() == '{' ? '}' : ']')) {
                if (containers_.back() == '{')
                    c = skip_member_name(c);
                continue;
            }
            ++p_;
            containers_.pop_back();
        } else {
            release();
            scan_scalar(c);
            scratch_.resize(scratch_mark);
        }
        // After a value: closes, then the next member.
        for (;;) {
            if (containers_.empty())
                return {kind, retain ? span_from(start, p_) : Span{}, false, holds_object};
            release();
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
        release();
        c = skip_ws();
        if (containers_.back() == '{')
            c = skip_member_name(c);
    }
}

Value TraceParser::parse_value(bool retain) {
    const char c = skip_ws();
    if (c != '{' && c != '[')
        return scan_scalar(c);
    return skip_container(retain);
}

ChromeTraceHeader TraceParser::parse() {
    fill();
    const char c = skip_ws();
    if (c == '{')
        parse_top_object();
    else if (c == '[')
        parse_events();
    else if (p_ == end_)
        fail(p_, "the file is empty: expected a Chrome trace (a JSON object or array)");
    else
        unexpected("'{' or '[' (a Chrome trace is a JSON object or array)");
    keep_ = p_;
    if (skip_ws() != '\0' || p_ != end_)
        fail(p_, "unexpected data after the end of the trace's JSON");
    return header_;
}

void TraceParser::parse_top_object() {
    ++p_;
    bool has_events = false;
    keep_ = p_;
    char c = skip_ws();
    if (c == '}') {
        ++p_;
    } else {
        for (;;) {
            keep_ = p_;
            if (c != '"')
                unexpected("a member name");
            const std::string key(view(scan_string()));
            scratch_.clear();
            expect(':', "':'");
            keep_ = p_;
            if (key == "traceEvents") {
                if (has_events)
                    fail(p_, "a second \"traceEvents\" member");
                has_events = true;
                if (skip_ws() != '[')
                    unexpected("the \"traceEvents\" array");
                parse_events();
            } else {
                parse_header_member(key);
            }
            keep_ = p_;
            c = skip_ws();
            if (c == '}') {
                ++p_;
                break;
            }
            if (c != ',')
                unexpected("',' or '}' after a top-level member");
            ++p_;
            keep_ = p_;
            c = skip_ws();
        }
    }
    if (!has_events)
        fail(p_,
             "no \"traceEvents\" array in the top-level object (not a PyTorch profiler or "
             "Chrome trace?)");
}

// One top-level member other than traceEvents, with p_ after its ':'.
void TraceParser::parse_header_member(std::string_view key) {
    if (key == "distributedInfo" && skip_ws() == '{') {
        parse_distributed_info();
        return;
    }
    if (key == "deviceProperties")
        header_.has_device_properties = true;
    const bool wanted =
        key == "baseTimeNanoseconds" || key == "displayTimeUnit" || key == "schemaVersion";
    const Value value = parse_value(wanted);
    if (key == "baseTimeNanoseconds") {
        header_.base_time_ns = integer_member(value, "baseTimeNanoseconds");
    } else if (key == "schemaVersion") {
        if (const auto version = integer_member(value, "schemaVersion")) {
            if (*version < 0 || *version > std::numeric_limits<int>::max())
                fail(p_, "schemaVersion is out of range");
            header_.schema_version = static_cast<int>(*version);
        }
    } else if (key == "displayTimeUnit" && value.kind == ValueKind::string) {
        header_.display_time_unit = view(value.span);
    }
    scratch_.clear();
}

// "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 4, "pg_config": ...}.
void TraceParser::parse_distributed_info() {
    ++p_;
    keep_ = p_;
    char c = skip_ws();
    while (c != '}') {
        if (c != '"')
            unexpected("a member name in \"distributedInfo\"");
        const std::string key(view(scan_string()));
        expect(':', "':'");
        keep_ = p_;
        const bool wanted = key == "rank" || key == "world_size" || key == "backend";
        const Value value = parse_value(wanted);
        if (key == "backend" && value.kind == ValueKind::string) {
            header_.backend = view(value.span);
        } else if (key == "rank" || key == "world_size") {
            const auto number = integer_member(value, "distributedInfo." + key);
            if (number && (*number < 0 || *number > std::numeric_limits<int>::max()))
                fail(p_, fmt::format("distributedInfo.{} is out of range", key));
            (key == "rank" ? header_.rank : header_.world_size) =
                number ? std::optional<int>(static_cast<int>(*number)) : std::nullopt;
        }
        scratch_.clear();
        keep_ = p_;
        c = skip_ws();
        if (c == ',') {
            ++p_;
            keep_ = p_;
            c = skip_ws();
            if (c != '"')
                unexpected("a member name after ','");
        } else if (c != '}') {
            unexpected("',' or '}' in \"distributedInfo\"");
        }
    }
    ++p_;
}

// An integer written as a JSON integer or as a string holding one; nullopt for null.
std::optional<std::int64_t> TraceParser::integer_member(const Value& value, std::string_view what) {
    if (is_null(value))
        return std::nullopt;
    std::string_view text = view(value.span);
    bool is_integer = value.is_integer;
    if (value.kind == ValueKind::string) {
        const char* bad = nullptr;
        const std::string copy(text);  // match_number needs the '\0' after it
        const char* stop = match_number(copy.c_str(), bad, is_integer);
        is_integer = is_integer && stop == copy.c_str() + copy.size();
    } else if (value.kind != ValueKind::number) {
        is_integer = false;
    }
    const std::optional<std::int64_t> number =
        is_integer ? scaled_json_number(text, 0) : std::nullopt;
    if (!number)
        fail(p_, fmt::format("{} is not an integer that fits in 64 bits: {}", what,
                             text.substr(0, 40)));
    return number;
}

void TraceParser::parse_events() {
    ++p_;
    keep_ = p_;
    char c = skip_ws();
    if (c == ']') {
        ++p_;
        return;
    }
    for (;;) {
        keep_ = p_;
        if (c != '{') {
            if (p_ == end_)
                unexpected("an event");
            fail(p_, fmt::format("traceEvents[{}] is not an object", header_.event_count));
        }
        parse_event();
        ++header_.event_count;
        keep_ = p_;
        c = skip_ws();
        if (c == ']') {
            ++p_;
            return;
        }
        if (c != ',')
            unexpected("',' or ']' after an event");
        ++p_;
        keep_ = p_;
        c = skip_ws();
    }
}

// The event at p_ ('{', with keep_ == p_), then on_event.
void TraceParser::parse_event() {
    const std::uint64_t offset = base_offset_ + static_cast<std::uint64_t>(p_ - base());
    EventFields fields;
    scratch_.clear();
    args_.clear();
    ++p_;
    char c = skip_ws();
    while (c != '}') {
        if (c != '"')
            unexpected("a member name in an event");
        const Field field = classify(view(scan_string()));
        expect(':', "':'");
        parse_event_member(field, fields);
        c = skip_ws();
        if (c == ',') {
            ++p_;
            c = skip_ws();
            if (c != '"')
                unexpected("a member name after ','");
        } else if (c != '}') {
            unexpected("',' or '}' in an event");
        }
    }
    ++p_;
    emit(fields, offset);
}

void TraceParser::parse_event_member(Field field, EventFields& fields) {
    if (field == Field::args) {
        if (skip_ws() == '{')
            parse_args();
        else
            parse_value(true);  // not an object: nothing to give
        return;
    }
    const Value value = parse_value(true);
    const bool scalar = value.kind != ValueKind::object && value.kind != ValueKind::array;
    const auto integer = [&] {
        return value.is_integer ? scaled_json_number(view(value.span), 0) : std::nullopt;
    };
    switch (field) {
        case Field::name:
            fields.name = scalar ? value.span : Span{};
            break;
        case Field::cat:
            fields.cat = scalar ? value.span : Span{};
            break;
        case Field::ph:
            fields.ph = scalar ? value.span : Span{};
            break;
        case Field::bp:
            fields.bp = scalar ? value.span : Span{};
            break;
        case Field::pid:
            fields.pid = scalar ? value.span : Span{};
            fields.pid_number = integer();
            break;
        case Field::tid:
            fields.tid = scalar ? value.span : Span{};
            fields.tid_number = integer();
            break;
        case Field::id:
            fields.id = scalar ? value.span : Span{};
            fields.id_number = integer();
            break;
        case Field::ts:
            fields.has_ts = !is_null(value);  // null: as if absent
            fields.ts_ns = fields.has_ts ? time_ns(value, "\"ts\"") : 0;
            break;
        case Field::dur:
            fields.has_dur = !is_null(value);
            fields.dur_ns = fields.has_dur ? time_ns(value, "\"dur\"") : -1;
            break;
        case Field::args:
        case Field::other:
            break;
    }
}

// "ts"/"dur" (us, a number or a string holding one) as ns.
std::int64_t TraceParser::time_ns(const Value& value, std::string_view what) {
    const std::string_view text = view(value.span);
    bool valid = value.kind == ValueKind::number;
    if (value.kind == ValueKind::string) {
        const std::string copy(text);  // match_number needs the '\0' after it
        const char* bad = nullptr;
        bool is_integer = false;
        valid = match_number(copy.c_str(), bad, is_integer) == copy.c_str() + copy.size();
    }
    if (!valid)
        fail(p_, fmt::format("{} is not a number", what));
    const std::optional<std::int64_t> ns = scaled_json_number(text, 3);
    if (!ns)
        fail(p_,
             fmt::format("{} {} us does not fit in 64-bit nanoseconds", what, text.substr(0, 40)));
    return *ns;
}

// The event's "args" object at p_: scalars (and arrays without objects) kept as ArgSlots.
void TraceParser::parse_args() {
    ++p_;
    char c = skip_ws();
    while (c != '}') {
        if (c != '"')
            unexpected("an argument name");
        const Span key = scan_string();
        expect(':', "':'");
        const Value value = parse_value(true);
        if (value.kind != ValueKind::object && !value.holds_object)
            args_.push_back({key, value});
        c = skip_ws();
        if (c == ',') {
            ++p_;
            c = skip_ws();
            if (c != '"')
                unexpected("a member name after ','");
        } else if (c != '}') {
            unexpected("',' or '}' in \"args\"");
        }
    }
    ++p_;
}

void TraceParser::emit(const EventFields& fields, std::uint64_t offset) {
    arg_views_.clear();
    for (const ArgSlot& arg : args_)
        arg_views_.push_back({view(arg.key), view(arg.value.span),
                              arg.value.kind == ValueKind::number,
                              arg.value.kind == ValueKind::string});
    ChromeEvent event;
    event.name = view(fields.name);
    event.cat = view(fields.cat);
    event.ph = view(fields.ph);
    event.ts_ns = fields.ts_ns;
    event.dur_ns = fields.dur_ns;
    event.pid_text = view(fields.pid);
    event.tid_text = view(fields.tid);
    event.pid = fields.pid_number.value_or(-1);
    event.tid = fields.tid_number.value_or(-1);
    event.id = fields.id_number.value_or(-1);
    event.args = arg_views_;
    event.offset = offset;
    event.has_ts = fields.has_ts;
    event.has_dur = fields.has_dur;
    event.id_text = view(fields.id);
    event.bp = view(fields.bp);
    on_event_(event);
}

// Plain or gzip, told from the first two bytes.
ChromeTraceHeader read_source(ByteSource& raw, const std::string& name,
                              const std::function<void(const ChromeEvent&)>& on_event) {
    char head[2] = {0, 0};
    std::size_t head_size = 0;
    while (head_size < 2) {
        const std::size_t n = raw.read(head + head_size, 2 - head_size);
        if (n == 0)
            break;
        head_size += n;
    }
    PeekedSource peeked(raw, std::string_view(head, head_size));
    if (head_size == 2 && head[0] == '\x1f' && head[1] == '\x8b') {
        GzipSource gzip(peeked, name);
        return TraceParser(gzip, name, true, on_event).parse();
    }
    return TraceParser(peeked, name, false, on_event).parse();
}

}  // namespace

ChromeTraceHeader read_chrome_trace(const std::string& path,
                                    const std::function<void(const ChromeEvent&)>& on_event) {
    FileSource file(path);
    return read_source(file, path, on_event);
}

ChromeTraceHeader read_chrome_trace_text(std::string_view text, const std::string& name,
                                         const std::function<void(const ChromeEvent&)>& on_event) {
    MemorySource memory(text);
    return read_source(memory, name, on_event);
}

}  // namespace pipelens::import
