// Streaming reader for PyTorch profiler traces (Chrome trace / Kineto JSON, plain or gzip): calls
// back once per element of "traceEvents", in file order, without building a document.
//
// Invariants: memory stays bounded whatever the file's size (one refillable buffer, 256 KiB to
// start, growing only to hold the largest single event, never past 64 MiB; a 256 KiB input
// buffer and zlib's 32 KiB window for gzip); every view handed to a callback points into that
// buffer or a per-event scratch string and is valid only during the callback; times are
// converted from the number's text, never through a double; input that is not valid JSON (or
// not a trace) is refused with ImportError naming the file and the byte offset (and line).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/import/imported_run.hpp"

namespace pipelens::import {

// One scalar member of an event's "args", as written. Strings are unescaped (is_string);
// numbers keep their exact text (is_number); true/false/null keep their text with both flags
// false. An array that holds no object (Kineto's "Input Dims": [[1, 2], []]) is given as its raw
// JSON text, starting with '[', both flags false; objects, and arrays holding an object, are
// skipped.
struct ChromeArg {
    std::string_view key;
    std::string_view text;
    bool is_number;
    bool is_string;
};

struct ChromeEvent {  // views valid only during the callback
    std::string_view name, cat, ph;
    // "ts" in us (possibly fractional, like 1234.567) as exact integer ns, parsed from the
    // number's text and rounded half away from zero below 1 ns; 0 when absent (see has_ts).
    std::int64_t ts_ns = 0;
    std::int64_t dur_ns = -1;  // "dur" likewise; -1 when absent (see has_dur)
    // As written: a number's text ("0", "12345") or an unescaped string ("Spans", "stream 7").
    std::string_view pid_text, tid_text;
    std::int64_t pid = -1, tid = -1;  // when written as a JSON integer
    std::int64_t id = -1;             // "id" (flow events) when written as a JSON integer
    std::span<const ChromeArg> args;  // see ChromeArg for what is given and what is skipped
    std::uint64_t offset = 0;         // byte offset of the event's '{' in the (decompressed) stream
    // Added beside the agreed fields:
    bool has_ts = false;       // "ts" was present (a number, or a string holding one)
    bool has_dur = false;      // "dur" was present: tells a real dur of -1 ns from an absent one
    std::string_view id_text;  // "id" as written (number text or string such as "0x1f")
    std::string_view bp;       // "bp" of flow events ("e": binds to the enclosing slice)
};

// One process group of the run as PyTorch lists them in "distributedInfo"."pg_config"
// (torch.distributed's _get_all_pg_configs: every group the rank belongs to).
struct ProcessGroupInfo {
    std::string name;        // "pg_name": "0", "1", or a hash for split groups
    std::string desc;        // "pg_desc": "default_pg", "mesh_pp", "undefined", ...; may be ""
    std::vector<int> ranks;  // "ranks": the group's global ranks in group-rank order
};

struct ChromeTraceHeader {  // top-level members other than traceEvents, wherever they are
    std::optional<int> rank, world_size;  // from "distributedInfo": {"rank", "world_size", ...}
    std::vector<ProcessGroupInfo> process_groups;  // "distributedInfo"."pg_config", if any
    std::string backend;                           // "distributedInfo"."backend"
    std::optional<std::int64_t> base_time_ns;      // "baseTimeNanoseconds" when present
    std::string display_time_unit;                 // "displayTimeUnit"
    std::optional<int> schema_version;             // "schemaVersion"
    bool has_device_properties = false;            // "deviceProperties" present
    std::uint64_t event_count = 0;                 // elements of traceEvents handed to on_event
};

// Streams `path` (plain or gzip, told from the magic bytes, not the name; concatenated gzip
// members are read as one stream) and calls on_event for each element of "traceEvents" in file
// order. Accepts the object form {"traceEvents": [...], ...} and a bare top-level array of
// events (its closing ']' is required, although Chrome's format lets a streamed array omit it:
// a cut file is an error, not a short trace). Strict JSON (RFC 8259), except that UTF-8 is
// passed through unchecked and a lone \uD800-\uDFFF escape becomes U+FFFD. A member repeated in
// an event: the last one counts (in args, each is given). "ts"/"dur" may be a number or a
// string holding one; null counts as absent.
// Throws ImportError naming the file and the byte offset (and line) for truncated or malformed
// JSON, a corrupt or truncated gzip stream, a missing "traceEvents" array, a non-object event,
// a "ts"/"dur" that is not a number or does not fit in int64 ns, a distributedInfo rank or
// world_size (or baseTimeNanoseconds, schemaVersion) that is not an integer, a pg_config entry
// whose "ranks" is not a list of integers (or that is not an object), or an event
// larger than 64 MiB. An exception thrown by on_event propagates unchanged.
ChromeTraceHeader read_chrome_trace(const std::string& path,
                                    const std::function<void(const ChromeEvent&)>& on_event);

// Same from memory (tests, fuzzing): `text` may be gzip too; `name` is used in error messages.
ChromeTraceHeader read_chrome_trace_text(std::string_view text, const std::string& name,
                                         const std::function<void(const ChromeEvent&)>& on_event);

}  // namespace pipelens::import
