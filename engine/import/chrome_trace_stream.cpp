// Chrome trace events read with the JSON tokenizer (json_tokenizer.hpp): it validates the whole
// document but only decodes what a trace event needs, and hands each event out as views into its
// buffer. (nlohmann's SAX parser was the alternative: with a handler that does nothing it reads
// ~0.47 M Kineto events/s, this reader ~2 M/s plain and ~1.4 M/s gzip on the same core
// (tests/bench/import_bench.cpp), against a target of 1 M/s. The difference: no string is copied
// unless it has an escape, numbers are converted only where a field needs them, strings are
// scanned 16 bytes at a time, and ts digits 8 at a time.)
//
// Invariants:
//  - while an event is parsed the tokenizer keeps everything from its '{', so every Span of the
//    event stays valid until on_event has returned;
//  - outside events the tokenizer is released after every token, so top-level members of any
//    size (deviceProperties, or a foreign array) are skipped with no growth of the buffer.
#include "engine/import/chrome_trace_stream.hpp"

#include "engine/import/byte_source.hpp"
#include "engine/import/decimal_text.hpp"
#include "engine/import/json_tokenizer.hpp"
#include "engine/import/rank_set.hpp"

#include <limits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pipelens::import {
namespace {

struct ArgSlot {
    JsonSpan key;
    JsonValue value;
};

// The members of an event the reader interprets; everything else is validated and skipped.
enum class Field : std::uint8_t { other, name, cat, ph, ts, dur, pid, tid, id, bp, args };

struct EventFields {
    JsonSpan name, cat, ph, pid, tid, id, bp;
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

class TraceParser {
  public:
    TraceParser(ByteSource& source, const std::string& name, bool decompressed,
                const std::function<void(const ChromeEvent&)>& on_event)
        : json_(source, name, decompressed), on_event_(on_event) {}

    ChromeTraceHeader parse();

  private:
    std::string_view view(JsonSpan span) const { return json_.view(span); }

    void parse_top_object();
    void parse_header_member(std::string_view key);
    void parse_distributed_info();
    std::vector<ProcessGroupInfo> process_groups_of(std::string_view text);
    std::optional<std::int64_t> integer_member(const JsonValue& value, std::string_view what);
    void parse_events();
    void parse_event();
    void parse_event_member(Field field, EventFields& fields);
    std::int64_t time_ns(const JsonValue& value, std::string_view what);
    void parse_args();
    void emit(const EventFields& fields, std::uint64_t offset);

    JsonTokenizer json_;
    const std::function<void(const ChromeEvent&)>& on_event_;
    std::vector<ArgSlot> args_;
    std::vector<ChromeArg> arg_views_;
    ChromeTraceHeader header_;
};

ChromeTraceHeader TraceParser::parse() {
    json_.start();
    const char c = json_.skip_ws();
    if (c == '{')
        parse_top_object();
    else if (c == '[')
        parse_events();
    else if (json_.at_end())
        json_.fail("the file is empty: expected a Chrome trace (a JSON object or array)");
    else
        json_.unexpected("'{' or '[' (a Chrome trace is a JSON object or array)");
    json_.release();
    if (json_.skip_ws() != '\0' || !json_.at_end())
        json_.fail("unexpected data after the end of the trace's JSON");
    return header_;
}

void TraceParser::parse_top_object() {
    bool has_events = false;
    json_.release();
    for (bool more = json_.first_member("a member name"); more;
         more = json_.next_member("',' or '}' after a top-level member", "a member name")) {
        json_.release();
        const std::string key(view(json_.scan_string()));
        json_.clear_scratch();
        json_.expect(':', "':'");
        json_.release();
        if (key == "traceEvents") {
            if (has_events)
                json_.fail("a second \"traceEvents\" member");
            has_events = true;
            if (json_.skip_ws() != '[')
                json_.unexpected("the \"traceEvents\" array");
            parse_events();
        } else {
            parse_header_member(key);
        }
        json_.release();
    }
    if (!has_events)
        json_.fail(
            "no \"traceEvents\" array in the top-level object (not a PyTorch profiler or "
            "Chrome trace?)");
}

// One top-level member other than traceEvents, after its ':'.
void TraceParser::parse_header_member(std::string_view key) {
    if (key == "distributedInfo" && json_.skip_ws() == '{') {
        parse_distributed_info();
        return;
    }
    if (key == "deviceProperties")
        header_.has_device_properties = true;
    const bool wanted =
        key == "baseTimeNanoseconds" || key == "displayTimeUnit" || key == "schemaVersion";
    const JsonValue value = json_.parse_value(wanted);
    if (key == "baseTimeNanoseconds") {
        header_.base_time_ns = integer_member(value, "baseTimeNanoseconds");
    } else if (key == "schemaVersion") {
        if (const auto version = integer_member(value, "schemaVersion")) {
            if (*version < 0 || *version > std::numeric_limits<int>::max())
                json_.fail("schemaVersion is out of range");
            header_.schema_version = static_cast<int>(*version);
        }
    } else if (key == "displayTimeUnit" && value.kind == JsonKind::string) {
        header_.display_time_unit = view(value.span);
    }
    json_.clear_scratch();
}

// "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 4, "pg_config": ...}.
void TraceParser::parse_distributed_info() {
    json_.release();
    for (bool more = json_.first_member("a member name in \"distributedInfo\""); more;
         more = json_.next_member("',' or '}' in \"distributedInfo\"")) {
        const std::string key(view(json_.scan_string()));
        json_.expect(':', "':'");
        json_.release();
        const bool wanted =
            key == "rank" || key == "world_size" || key == "backend" || key == "pg_config";
        const JsonValue value = json_.parse_value(wanted);
        if (key == "pg_config" &&
            (value.kind == JsonKind::array || value.kind == JsonKind::object)) {
            header_.process_groups = process_groups_of(view(value.span));
        } else if (key == "backend" && value.kind == JsonKind::string) {
            header_.backend = view(value.span);
        } else if (key == "rank" || key == "world_size") {
            const auto number = integer_member(value, "distributedInfo." + key);
            if (number && (*number < 0 || *number > std::numeric_limits<int>::max()))
                json_.fail(fmt::format("distributedInfo.{} is out of range", key));
            (key == "rank" ? header_.rank : header_.world_size) =
                number ? std::optional<int>(static_cast<int>(*number)) : std::nullopt;
        }
        json_.clear_scratch();
        json_.release();
    }
}

// "pg_config": a list of {"pg_name", "pg_desc", "ranks", ...} as the profiler writes it, or a
// map from name to group as the flight recorder does. Small (a few entries of one list each),
// so it is read as a document.
std::vector<ProcessGroupInfo> TraceParser::process_groups_of(std::string_view text) {
    const nlohmann::json config = nlohmann::json::parse(text);
    std::vector<ProcessGroupInfo> groups;
    for (const auto& [key, entry] : config.items()) {
        if (!entry.is_object())
            json_.fail("distributedInfo.pg_config: an entry is not an object");
        ProcessGroupInfo group;
        group.name = entry.contains("pg_name") && entry["pg_name"].is_string()
                         ? entry["pg_name"].get<std::string>()
                         : (config.is_object() ? key : std::to_string(groups.size()));
        if (entry.contains("pg_desc") && entry["pg_desc"].is_string())
            group.desc = entry["pg_desc"].get<std::string>();
        // A list of integers; the flight recorder's form, the list as text ("[0, 1]"), too.
        nlohmann::json ranks = entry.contains("ranks") ? entry["ranks"] : nlohmann::json();
        if (ranks.is_string())
            ranks = nlohmann::json::parse(ranks.get<std::string>(), nullptr, false);
        if (!ranks.is_array())
            json_.fail(fmt::format("distributedInfo.pg_config: group '{}' has no \"ranks\" list",
                                   group.name));
        for (const auto& rank : ranks) {
            if (!rank.is_number_integer() || rank.get<std::int64_t>() < 0 ||
                rank.get<std::int64_t>() > std::numeric_limits<int>::max())
                json_.fail(fmt::format(
                    "distributedInfo.pg_config: group '{}' lists a rank that is not an integer",
                    group.name));
            group.ranks.push_back(rank.get<int>());
        }
        if (const std::optional<int> twice = rank_listed_twice(group.ranks))
            json_.fail(fmt::format("distributedInfo.pg_config: group '{}' lists rank {} twice",
                                   group.name, *twice));
        groups.push_back(std::move(group));
    }
    return groups;
}

// An integer written as a JSON integer or as a string holding one; nullopt for null.
std::optional<std::int64_t> TraceParser::integer_member(const JsonValue& value,
                                                        std::string_view what) {
    if (json_.is_null(value))
        return std::nullopt;
    std::string_view text = view(value.span);
    bool is_integer = value.is_integer;
    if (value.kind == JsonKind::string)
        is_integer = is_json_number(text, is_integer) && is_integer;
    else if (value.kind != JsonKind::number)
        is_integer = false;
    const std::optional<std::int64_t> number =
        is_integer ? scaled_json_number(text, 0) : std::nullopt;
    if (!number)
        json_.fail(
            fmt::format("{} is not an integer that fits in 64 bits: {}", what, text.substr(0, 40)));
    return number;
}

void TraceParser::parse_events() {
    json_.step();
    json_.release();
    char c = json_.skip_ws();
    if (c == ']') {
        json_.step();
        return;
    }
    for (;;) {
        json_.release();
        if (c != '{') {
            if (json_.at_end())
                json_.unexpected("an event");
            json_.fail(fmt::format("traceEvents[{}] is not an object", header_.event_count));
        }
        parse_event();
        ++header_.event_count;
        json_.release();
        c = json_.skip_ws();
        if (c == ']') {
            json_.step();
            return;
        }
        if (c != ',')
            json_.unexpected("',' or ']' after an event");
        json_.step();
        json_.release();
        c = json_.skip_ws();
    }
}

// The event at the next byte ('{', released up to it), then on_event.
void TraceParser::parse_event() {
    const std::uint64_t offset = json_.offset();
    EventFields fields;
    json_.clear_scratch();
    args_.clear();
    for (bool more = json_.first_member("a member name in an event"); more;
         more = json_.next_member("',' or '}' in an event")) {
        const Field field = classify(view(json_.scan_string()));
        json_.expect(':', "':'");
        parse_event_member(field, fields);
    }
    emit(fields, offset);
}

void TraceParser::parse_event_member(Field field, EventFields& fields) {
    if (field == Field::args) {
        if (json_.skip_ws() == '{')
            parse_args();
        else
            json_.parse_value(true);  // not an object: nothing to give
        return;
    }
    const JsonValue value = json_.parse_value(true);
    const bool scalar = value.kind != JsonKind::object && value.kind != JsonKind::array;
    const auto integer = [&] {
        return value.is_integer ? scaled_json_number(view(value.span), 0) : std::nullopt;
    };
    switch (field) {
        case Field::name:
            fields.name = scalar ? value.span : JsonSpan{};
            break;
        case Field::cat:
            fields.cat = scalar ? value.span : JsonSpan{};
            break;
        case Field::ph:
            fields.ph = scalar ? value.span : JsonSpan{};
            break;
        case Field::bp:
            fields.bp = scalar ? value.span : JsonSpan{};
            break;
        case Field::pid:
            fields.pid = scalar ? value.span : JsonSpan{};
            fields.pid_number = integer();
            break;
        case Field::tid:
            fields.tid = scalar ? value.span : JsonSpan{};
            fields.tid_number = integer();
            break;
        case Field::id:
            fields.id = scalar ? value.span : JsonSpan{};
            fields.id_number = integer();
            break;
        case Field::ts:
            fields.has_ts = !json_.is_null(value);  // null: as if absent
            fields.ts_ns = fields.has_ts ? time_ns(value, "\"ts\"") : 0;
            break;
        case Field::dur:
            fields.has_dur = !json_.is_null(value);
            fields.dur_ns = fields.has_dur ? time_ns(value, "\"dur\"") : -1;
            break;
        case Field::args:
        case Field::other:
            break;
    }
}

// "ts"/"dur" (us, a number or a string holding one) as ns.
std::int64_t TraceParser::time_ns(const JsonValue& value, std::string_view what) {
    const std::string_view text = view(value.span);
    bool is_integer = false;
    const bool valid = value.kind == JsonKind::number ||
                       (value.kind == JsonKind::string && is_json_number(text, is_integer));
    if (!valid)
        json_.fail(fmt::format("{} is not a number", what));
    const std::optional<std::int64_t> ns = scaled_json_number(text, 3);
    if (!ns)
        json_.fail(
            fmt::format("{} {} us does not fit in 64-bit nanoseconds", what, text.substr(0, 40)));
    return *ns;
}

// The event's "args" object at the next byte: scalars (and arrays without objects) kept.
void TraceParser::parse_args() {
    for (bool more = json_.first_member("an argument name"); more;
         more = json_.next_member("',' or '}' in \"args\"")) {
        const JsonSpan key = json_.scan_string();
        json_.expect(':', "':'");
        const JsonValue value = json_.parse_value(true);
        if (value.kind != JsonKind::object && !value.holds_object)
            args_.push_back({key, value});
    }
}

void TraceParser::emit(const EventFields& fields, std::uint64_t offset) {
    arg_views_.clear();
    for (const ArgSlot& arg : args_)
        arg_views_.push_back({view(arg.key), view(arg.value.span),
                              arg.value.kind == JsonKind::number,
                              arg.value.kind == JsonKind::string});
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
