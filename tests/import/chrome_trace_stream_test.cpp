// The streaming Chrome/Kineto trace reader: exact field values (ns from fractional us text,
// pid/tid as numbers or strings, args with nested values skipped), both top-level forms, plain
// and gzip giving the same events, a generated 50k-event file that crosses many buffer refills,
// and every error a user can meet (truncation at every byte, garbage after a number, corrupt
// or truncated gzip, no traceEvents), each naming the file and the byte offset.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/import/chrome_trace_stream.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::import {
namespace {

struct Arg {
    std::string key, text;
    bool is_number = false, is_string = false;
    bool operator==(const Arg&) const = default;
};

// A ChromeEvent with its views copied out, so that it outlives the callback.
struct Event {
    std::string name, cat, ph, pid_text, tid_text, id_text, bp;
    std::int64_t ts_ns = 0, dur_ns = -1, pid = -1, tid = -1, id = -1;
    bool has_ts = false, has_dur = false;
    std::vector<Arg> args;
    std::uint64_t offset = 0;
    bool operator==(const Event&) const = default;
};

Event copy(const ChromeEvent& e) {
    Event out;
    out.name = e.name;
    out.cat = e.cat;
    out.ph = e.ph;
    out.pid_text = e.pid_text;
    out.tid_text = e.tid_text;
    out.id_text = e.id_text;
    out.bp = e.bp;
    out.ts_ns = e.ts_ns;
    out.dur_ns = e.dur_ns;
    out.pid = e.pid;
    out.tid = e.tid;
    out.id = e.id;
    out.has_ts = e.has_ts;
    out.has_dur = e.has_dur;
    out.offset = e.offset;
    for (const ChromeArg& arg : e.args)
        out.args.push_back(
            {std::string(arg.key), std::string(arg.text), arg.is_number, arg.is_string});
    return out;
}

struct Read {
    ChromeTraceHeader header;
    std::vector<Event> events;
};

Read read_text(std::string_view text) {
    Read read;
    read.header = read_chrome_trace_text(
        text, "mem.json", [&](const ChromeEvent& e) { read.events.push_back(copy(e)); });
    return read;
}

Read read_file(const std::string& path) {
    Read read;
    read.header =
        read_chrome_trace(path, [&](const ChromeEvent& e) { read.events.push_back(copy(e)); });
    return read;
}

// The ImportError message of reading `text`, or "" when it reads.
std::string error_of(std::string_view text) {
    return testing::thrown_message<ImportError>(
        [&] { read_chrome_trace_text(text, "bad.json", [](const ChromeEvent&) {}); }, "");
}

std::string gzip(std::string_view text) {
    z_stream stream{};
    EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    stream.avail_in = static_cast<uInt>(text.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
    out.resize(stream.total_out);
    deflateEnd(&stream);
    return out;
}

class TempFile {
  public:
    TempFile(const std::string& name, std::string_view bytes)
        : path_((std::filesystem::temp_directory_path() /
                 ("pipelens_cts_" + std::to_string(::getpid()) + "_" + name))
                    .string()) {
        std::ofstream(path_, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    }
    ~TempFile() { std::filesystem::remove(path_); }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(ChromeTraceStream, FractionalMicrosecondsBecomeExactNanoseconds) {
    const Read read = read_text(R"({"traceEvents": [
        {"ph": "X", "name": "a", "ts": 1700000000123456.789, "dur": 12.5},
        {"ph": "X", "name": "b", "ts": 1700000000123456, "dur": 0.0005},
        {"ph": "X", "name": "c", "ts": 1.5e3, "dur": 1234.5678},
        {"ph": "X", "name": "d", "ts": -2.5, "dur": 0.0004},
        {"ph": "X", "name": "e", "ts": "1700000000000001.001", "dur": 17E-3},
        {"ph": "X", "name": "f", "ts": 9223372036854775.807, "dur": -9223372036854775.807}
    ]})");
    ASSERT_EQ(read.events.size(), 6u);
    EXPECT_EQ(read.events[5].ts_ns, 9223372036854775807);  // the int64 limits, exactly
    EXPECT_EQ(read.events[5].dur_ns, -9223372036854775807);
    EXPECT_EQ(read.events[0].ts_ns, 1700000000123456789);
    EXPECT_EQ(read.events[0].dur_ns, 12500);
    EXPECT_EQ(read.events[1].ts_ns, 1700000000123456000);
    EXPECT_EQ(read.events[1].dur_ns, 1);  // 0.5 ns: half away from zero
    EXPECT_EQ(read.events[2].ts_ns, 1500000);
    EXPECT_EQ(read.events[2].dur_ns, 1234568);
    EXPECT_EQ(read.events[3].ts_ns, -2500);
    EXPECT_EQ(read.events[3].dur_ns, 0);
    EXPECT_EQ(read.events[4].ts_ns, 1700000000000001001);  // a string holding a number
    EXPECT_EQ(read.events[4].dur_ns, 17);
    for (const Event& e : read.events)
        EXPECT_TRUE(e.has_ts && e.has_dur) << e.name;
}

TEST(ChromeTraceStream, AbsentAndNegativeDurations) {
    const Read read = read_text(R"({"traceEvents": [
        {"ph": "i", "name": "no dur", "ts": 5},
        {"ph": "X", "name": "negative", "ts": 5, "dur": -3},
        {"ph": "X", "name": "minus one ns", "ts": 5, "dur": -0.001},
        {"ph": "M", "name": "no ts", "dur": null}
    ]})");
    ASSERT_EQ(read.events.size(), 4u);
    EXPECT_EQ(read.events[0].dur_ns, -1);
    EXPECT_FALSE(read.events[0].has_dur);
    EXPECT_EQ(read.events[1].dur_ns, -3000);
    EXPECT_TRUE(read.events[1].has_dur);
    EXPECT_EQ(read.events[2].dur_ns, -1);
    EXPECT_TRUE(read.events[2].has_dur);  // a real -1 ns, told from an absent dur
    EXPECT_FALSE(read.events[3].has_ts);
    EXPECT_EQ(read.events[3].ts_ns, 0);
    EXPECT_FALSE(read.events[3].has_dur);
}

TEST(ChromeTraceStream, PidAndTidAsNumbersOrStrings) {
    const Read read = read_text(R"({"traceEvents": [
        {"ph": "X", "pid": 0, "tid": 12345, "ts": 1},
        {"ph": "X", "pid": "Spans", "tid": "stream 7", "ts": 1},
        {"ph": "X", "pid": "a\"b\u00e9", "tid": 1.0, "ts": 1},
        {"ph": "s", "id": 77, "bp": "e", "pid": -4, "tid": 99999999999999999999, "ts": 1},
        {"ph": "f", "id": "0x1f", "ts": 1}
    ]})");
    ASSERT_EQ(read.events.size(), 5u);
    EXPECT_EQ(read.events[0].pid_text, "0");
    EXPECT_EQ(read.events[0].pid, 0);
    EXPECT_EQ(read.events[0].tid_text, "12345");
    EXPECT_EQ(read.events[0].tid, 12345);
    EXPECT_EQ(read.events[1].pid_text, "Spans");
    EXPECT_EQ(read.events[1].pid, -1);
    EXPECT_EQ(read.events[1].tid_text, "stream 7");
    EXPECT_EQ(read.events[1].tid, -1);
    EXPECT_EQ(read.events[2].pid_text, "a\"b\xc3\xa9");  // unescaped
    EXPECT_EQ(read.events[2].tid_text, "1.0");
    EXPECT_EQ(read.events[2].tid, -1);  // not a JSON integer
    EXPECT_EQ(read.events[3].id, 77);
    EXPECT_EQ(read.events[3].id_text, "77");
    EXPECT_EQ(read.events[3].bp, "e");
    EXPECT_EQ(read.events[3].pid, -4);
    EXPECT_EQ(read.events[3].tid, -1);  // does not fit in int64
    EXPECT_EQ(read.events[4].id, -1);
    EXPECT_EQ(read.events[4].id_text, "0x1f");
}

TEST(ChromeTraceStream, ArgsKeepScalarsAndScalarArraysAndSkipObjects) {
    const Read read = read_text(R"({"traceEvents": [{"ph": "X", "name": "aten::mm", "args": {
        "External id": 2, "Kernel": "x\ny", "nested": {"a": [1, {"b": 2}]},
        "Input Dims": [[1, 2], []], "objects": [{"a": 1}], "flag": true, "none": null,
        "fl": 1.50, "Sequence number": -7e2
    }, "ts": 3}]})");
    ASSERT_EQ(read.events.size(), 1u);
    const std::vector<Arg> expected{
        {"External id", "2", true, false},
        {"Kernel", "x\ny", false, true},
        {"Input Dims", "[[1, 2], []]", false, false},
        {"flag", "true", false, false},
        {"none", "null", false, false},
        {"fl", "1.50", true, false},
        {"Sequence number", "-7e2", true, false},
    };
    EXPECT_EQ(read.events[0].args, expected);
    EXPECT_EQ(read.events[0].name, "aten::mm");
    EXPECT_EQ(read.events[0].ts_ns, 3000);  // members after args still read
}

TEST(ChromeTraceStream, HeaderMembersBeforeAndAfterTraceEvents) {
    const Read read = read_text(R"({
        "schemaVersion": 1,
        "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 4,
                            "pg_config": [{"pg_name": "0", "ranks": [0, 1, 2, 3]}]},
        "traceEvents": [{"ph": "X", "name": "a"}, {"ph": "X", "name": "b"}],
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85029158912}],
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1700000000000000000,
        "traceName": "rank3.json"
    })");
    EXPECT_EQ(read.events.size(), 2u);
    EXPECT_EQ(read.header.event_count, 2u);
    EXPECT_EQ(read.header.schema_version, 1);
    EXPECT_EQ(read.header.rank, 3);
    EXPECT_EQ(read.header.world_size, 4);
    EXPECT_EQ(read.header.backend, "nccl");
    EXPECT_TRUE(read.header.has_device_properties);
    EXPECT_EQ(read.header.display_time_unit, "ms");
    EXPECT_EQ(read.header.base_time_ns, 1700000000000000000);

    const Read bare = read_text(R"({"traceEvents": []})");
    EXPECT_EQ(bare.header.event_count, 0u);
    EXPECT_FALSE(bare.header.rank.has_value());
    EXPECT_FALSE(bare.header.base_time_ns.has_value());
    EXPECT_FALSE(bare.header.has_device_properties);
}

TEST(ChromeTraceStream, BareTopLevelArray) {
    const std::string text = R"([{"ph": "i", "name": "x", "ts": 1}, {"ph": "M", "name": "y"}])";
    const Read read = read_text(text);
    ASSERT_EQ(read.events.size(), 2u);
    EXPECT_EQ(read.header.event_count, 2u);
    EXPECT_EQ(read.events[0].name, "x");
    EXPECT_EQ(read.events[1].name, "y");
    EXPECT_EQ(read.events[1].offset, text.find("{\"ph\": \"M\""));
    EXPECT_FALSE(read.header.rank.has_value());
}

TEST(ChromeTraceStream, UnicodeEscapes) {
    const Read read = read_text(
        R"([{"name": "\u00e9\ud83d\ude00\ud800x\/\t", "cat": "\\", "ph": "X", "tid": "\"q\""}])");
    ASSERT_EQ(read.events.size(), 1u);
    EXPECT_EQ(read.events[0].name, "\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx/\t");
    EXPECT_EQ(read.events[0].cat, "\\");
    EXPECT_EQ(read.events[0].tid_text, "\"q\"");
}

// A Kineto-like trace of `count` events (escaped names in some, so refills cut escaped strings
// too), with its events' expected ts (ns) and names.
std::string generated_trace(int count) {
    std::string text = R"({"schemaVersion": 1, "distributedInfo": {"rank": 1, "world_size": 2},)";
    text += "\n  \"traceEvents\": [\n";
    for (int i = 0; i < count; ++i) {
        text += i ? ",\n  {\n" : "  {\n";
        text += "    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op_" +
                std::to_string(i % 97) + (i % 3 == 0 ? "\\\"q\\u00e9\"" : "\"") +
                ", \"pid\": 4242, \"tid\": " + std::to_string(4242 + i % 4) +
                ",\n    \"ts\": 1700000000" + std::to_string(100000 + i) + "." +
                std::to_string(100 + i % 900) + ", \"dur\": " + std::to_string(i % 50) + ".25" +
                ",\n    \"args\": {\n      \"External id\": " + std::to_string(i) +
                ", \"Sequence number\": " + std::to_string(i * 2) +
                ", \"Input Dims\": [[16, 1024], [1024]], \"Fwd thread id\": 1, \"Record "
                "function id\": 0, \"Ev Idx\": " +
                std::to_string(i) + "\n    }\n  }";
    }
    text += "\n  ],\n  \"baseTimeNanoseconds\": 1700000000000000000\n}\n";
    return text;
}

void check_generated(const Read& read, int count, const std::string& text) {
    ASSERT_EQ(read.events.size(), static_cast<std::size_t>(count));
    EXPECT_EQ(read.header.event_count, static_cast<std::uint64_t>(count));
    EXPECT_EQ(read.header.rank, 1);
    EXPECT_EQ(read.header.base_time_ns, 1700000000000000000);
    for (int i = 0; i < count; ++i) {
        const Event& e = read.events[static_cast<std::size_t>(i)];
        const std::string name =
            "aten::op_" + std::to_string(i % 97) + (i % 3 == 0 ? "\"q\xc3\xa9" : "");
        ASSERT_EQ(e.name, name) << i;
        ASSERT_EQ(e.ts_ns, (1700000000LL * 1'000'000 + 100000 + i) * 1000 + 100 + i % 900) << i;
        ASSERT_EQ(e.dur_ns, (i % 50) * 1000 + 250) << i;
        ASSERT_EQ(e.tid, 4242 + i % 4) << i;
        ASSERT_EQ(e.args.size(), 6u) << i;
        ASSERT_EQ(e.args[0].text, std::to_string(i)) << i;
        ASSERT_EQ(e.args[2].text, "[[16, 1024], [1024]]") << i;
        ASSERT_EQ(text.at(e.offset), '{') << i;
    }
}

TEST(ChromeTraceStream, GeneratedFileOf50kEventsStreamsPlainAndGzip) {
    const int count = 50'000;
    const std::string text = generated_trace(count);
    ASSERT_GT(text.size(), 8u * 1024 * 1024);  // many refills of the 256 KiB buffer
    const TempFile plain("50k.json", text);
    const TempFile gz("50k.json.gz.renamed", gzip(text));  // told from the bytes, not the name
    const Read from_plain = read_file(plain.path());
    check_generated(from_plain, count, text);
    const Read from_gzip = read_file(gz.path());
    EXPECT_TRUE(from_gzip.events == from_plain.events);
    EXPECT_TRUE(read_text(text).events == from_plain.events);
}

TEST(ChromeTraceStream, GzipMembersConcatenatedAndGzipFromMemory) {
    const std::string text = generated_trace(300);
    const std::size_t cut = text.size() / 2;
    const std::string two_members = gzip(text.substr(0, cut)) + gzip(text.substr(cut));
    const Read read = read_text(two_members);
    check_generated(read, 300, text);
}

TEST(ChromeTraceStream, EventLargerThanTheBufferGrowsIt) {
    const std::string big(3 * 1024 * 1024, 'k');
    const std::string text = R"({"traceEvents": [{"ph": "X", "name": "small"}, )"
                             R"({"ph": "X", "args": {"huge": ")" +
                             big + R"(", "n": 5}, "name": "big"}, {"name": "after"}]})";
    const Read read = read_text(text);
    ASSERT_EQ(read.events.size(), 3u);
    EXPECT_EQ(read.events[1].name, "big");
    ASSERT_EQ(read.events[1].args.size(), 2u);
    EXPECT_EQ(read.events[1].args[0].text, big);
    EXPECT_EQ(read.events[2].name, "after");
}

TEST(ChromeTraceStream, LargeSkippedTopLevelMemberNeedsNoBigBuffer) {
    std::string junk = "[";
    for (int i = 0; i < 200'000; ++i)
        junk += R"({"k": "v\n", "n": [1, 2.5, true, null]},)";
    junk += "0]";
    const Read read =
        read_text(R"({"unknownTopLevel": )" + junk + R"(, "traceEvents": [{"name": "x"}]})");
    ASSERT_EQ(read.events.size(), 1u);
    EXPECT_EQ(read.events[0].name, "x");
}

TEST(ChromeTraceStream, ExceptionFromCallbackPropagatesUnchanged) {
    struct Stop {
        int at;
    };
    try {
        read_chrome_trace_text(generated_trace(10), "t.json", [](const ChromeEvent& e) {
            if (e.args[0].text == "4")
                throw Stop{4};
        });
        FAIL() << "no exception";
    } catch (const Stop& stop) {
        EXPECT_EQ(stop.at, 4);
    }
}

TEST(ChromeTraceStream, TruncationAtEveryByteNamesFileAndOffset) {
    const std::string text =
        R"({"distributedInfo": {"rank": 0}, "traceEvents": [{"ph": "X", "name": "a\"b", )"
        R"("ts": 1.5, "dur": -2, "args": {"x": [1, {"y": null}], "t": true}}, {"pid": "p"}], )"
        R"("schemaVersion": 1})";
    ASSERT_EQ(error_of(text), "");
    for (std::size_t size = 0; size < text.size(); ++size) {
        const std::string message = error_of(std::string_view(text).substr(0, size));
        EXPECT_TRUE(contains(message, "bad.json: ")) << size << ": " << message;
        EXPECT_TRUE(contains(message, "at byte " + std::to_string(size) + " "))
            << size << ": " << message;
    }
    EXPECT_TRUE(contains(error_of(text.substr(0, 60)), "truncated file?"));
}

TEST(ChromeTraceStream, TruncatedFileOnDiskNamesThePath) {
    const std::string text = generated_trace(2000);
    const TempFile cut("cut.json", std::string_view(text).substr(0, 300'001));
    try {
        read_chrome_trace(cut.path(), [](const ChromeEvent&) {});
        FAIL() << "no error";
    } catch (const ImportError& error) {
        EXPECT_TRUE(contains(error.what(), cut.path() + ": ")) << error.what();
        EXPECT_TRUE(contains(error.what(), "at byte 300001 ")) << error.what();
        EXPECT_TRUE(contains(error.what(), "(line ")) << error.what();
    }
}

TEST(ChromeTraceStream, MalformedJsonIsRefusedWithOffsetAndLine) {
    const std::string garbage = "{\"traceEvents\": [\n{\"ts\": 12x4}]}";
    const std::string message = error_of(garbage);
    EXPECT_TRUE(contains(message, "unexpected 'x' after a number at byte 27 (line 2)")) << message;
    EXPECT_TRUE(contains(error_of(R"([{"ts": 1.}])"), "where a digit was expected"));
    EXPECT_TRUE(contains(error_of(R"([{"ts": 01}])"), "after a number"));
    EXPECT_TRUE(contains(error_of(R"([{"ts": tru}])"), "true, false or null"));
    EXPECT_TRUE(contains(error_of(R"([{"ts": "abc"}])"), "\"ts\" is not a number"));
    EXPECT_TRUE(contains(error_of(R"([{"ts": 1e30}])"), "does not fit"));
    EXPECT_TRUE(contains(error_of(R"([{"ts": 170000001700000000123456.789}])"), "does not fit"));
    EXPECT_TRUE(contains(error_of(R"([{"ts": 9223372036854775.808}])"), "does not fit"));
    EXPECT_TRUE(contains(error_of(R"([{"ts": 1,}])"), "a member name after ','"));
    EXPECT_TRUE(contains(error_of(R"([{"args": {"a": 1,}}])"), "a member name after ','"));
    EXPECT_TRUE(contains(error_of(R"([{"a": 1}, ])"), "traceEvents[1] is not an object"));
    EXPECT_TRUE(contains(error_of(R"([{"a" 1}])"), "':'"));
    EXPECT_TRUE(contains(error_of("[{\"name\": \"a\tb\"}]"), "control character"));
    EXPECT_TRUE(contains(error_of(R"([{"name": "a\qb"}])"), "invalid escape"));
    EXPECT_TRUE(contains(error_of(R"([{"args": {"a": [1 2]}}])"), "',' or ']'"));
    EXPECT_TRUE(contains(error_of(R"({"traceEvents": []} x)"), "after the end"));
    EXPECT_TRUE(contains(error_of(""), "empty"));
    EXPECT_TRUE(contains(error_of("  nope"), "a Chrome trace is a JSON object or array"));
    EXPECT_TRUE(contains(error_of(R"({"distributedInfo": {"rank": "x"}, "traceEvents": []})"),
                         "distributedInfo.rank is not an integer"));
    EXPECT_TRUE(contains(error_of(R"({"distributedInfo": {"rank": 1, "pg_config": [{"pg_name":
        "pp", "ranks": [1, 0, 1]}]}, "traceEvents": []})"),
                         "distributedInfo.pg_config: group 'pp' lists rank 1 twice"));
}

TEST(ChromeTraceStream, NoTraceEventsOrNonObjectEvents) {
    EXPECT_TRUE(contains(error_of(R"({"schemaVersion": 1})"), "no \"traceEvents\" array"));
    EXPECT_TRUE(contains(error_of(R"({"traceEvents": {}})"), "the \"traceEvents\" array"));
    EXPECT_TRUE(contains(error_of(R"({"traceEvents": [], "traceEvents": []})"), "second"));
    const std::string message = error_of(R"({"traceEvents": [{"ph": "X"}, 5]})");
    EXPECT_TRUE(contains(message, "traceEvents[1] is not an object at byte 30")) << message;
    EXPECT_TRUE(contains(error_of(R"([[]])"), "traceEvents[0] is not an object"));
}

TEST(ChromeTraceStream, CorruptAndTruncatedGzip) {
    const std::string packed = gzip(generated_trace(500));
    std::string bad_crc = packed;
    bad_crc[bad_crc.size() - 6] ^= 0x5A;  // the CRC-32 in the gzip trailer
    std::string message = error_of(bad_crc);
    EXPECT_TRUE(contains(message, "bad.json: corrupt gzip stream at compressed byte")) << message;

    std::string bad_data = packed;
    for (std::size_t i = 100; i < 140; ++i)
        bad_data[i] = static_cast<char>(0xFF);
    message = error_of(bad_data);
    EXPECT_TRUE(contains(message, "bad.json: ")) << message;  // zlib or the JSON sees it

    message = error_of(std::string_view(packed).substr(0, packed.size() - 100));
    EXPECT_TRUE(contains(message, "bad.json: the gzip stream ends early")) << message;
    message = error_of(std::string_view(packed).substr(0, 2));
    EXPECT_TRUE(contains(message, "ends early")) << message;

    message = error_of(packed + "trailing junk");
    EXPECT_TRUE(contains(message, "corrupt gzip stream")) << message;
}

TEST(ChromeTraceStream, MissingFileIsNamed) {
    try {
        read_chrome_trace("/nonexistent/rank0.json", [](const ChromeEvent&) {});
        FAIL() << "no error";
    } catch (const ImportError& error) {
        EXPECT_TRUE(contains(error.what(), "/nonexistent/rank0.json: cannot open")) << error.what();
    }
}

}  // namespace
}  // namespace pipelens::import
