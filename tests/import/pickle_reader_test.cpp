// The restricted unpickler: what it reads (every opcode the flight recorder's dump uses, in the
// forms torch::jit::Pickler and Python's pickle write them) and what it refuses, with the error
// text a user sees (file, byte offset, opcode). Pickles are assembled byte by byte here, so each
// test shows exactly which opcodes it feeds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/import/imported_run.hpp"
#include "engine/import/pickle_reader.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::import {
namespace {

using nlohmann::json;

// A pickle under construction: PROTO 2, then whatever the test appends.
struct Pickle {
    std::string bytes = std::string("\x80\x02", 2);

    Pickle& op(std::uint8_t code) {
        bytes.push_back(static_cast<char>(code));
        return *this;
    }
    Pickle& le(std::uint64_t value, int count) {
        for (int i = 0; i < count; ++i)
            bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
        return *this;
    }
    Pickle& str(const std::string& text) {  // BINUNICODE, as torch's pickler writes strings
        op('X').le(text.size(), 4);
        bytes += text;
        return *this;
    }
    Pickle& short_str(const std::string& text) {  // SHORT_BINUNICODE (protocol 4)
        op(0x8c).le(text.size(), 1);
        bytes += text;
        return *this;
    }
    Pickle& int1(std::uint8_t value) { return op('K').le(value, 1); }
    Pickle& int64(std::int64_t value) {  // LONG1 with 8 bytes, as torch writes wide ints
        return op(0x8a).le(8, 1).le(static_cast<std::uint64_t>(value), 8);
    }
    Pickle& real(double value) {  // BINFLOAT, big-endian
        std::uint64_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        op('G');
        for (int i = 7; i >= 0; --i)
            bytes.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
        return *this;
    }
    std::string stop() { return bytes + "."; }
};

std::string error_of(const std::string& bytes, const std::string& file = "f.pkl") {
    return testing::thrown_message<ImportError>([&] { read_pickle(bytes, file); }, "no error");
}

TEST(PickleReader, ReadsEveryValueTypeTheDumpUses) {
    Pickle p;
    p.op('}').op('q').le(0, 1).op('(');
    p.str("wide").int64(1'700'000'000'123'456'789);
    p.str("negative").op('J').le(static_cast<std::uint32_t>(-5), 4);
    p.str("byte").int1(7);
    p.str("short").op('M').le(300, 2);
    p.str("int32").op('J').le(70'000, 4);
    p.str("float").real(0.25);
    p.str("none").op('N');
    p.str("yes").op(0x88);
    p.str("no").op(0x89);
    p.str("pair").str("0").str("default_pg").op(0x86);          // TUPLE2
    p.str("nested").int1(1).int1(2).int1(3).op(0x86).op(0x86);  // (1, (2, 3))
    p.str("one").int1(9).op(0x85);                              // TUPLE1
    p.str("three").int1(1).int1(2).int1(3).op(0x87);            // TUPLE3
    p.str("marked").op('(').int1(1).int1(2).int1(3).int1(4).op('t');
    p.str("empty").op(')');
    p.str("list").op(']').op('(').int1(4).int1(8).op('e');
    p.short_str("short_str").op('U').le(2, 1);
    p.bytes += "ab";
    p.op('u');
    const json value = read_pickle(p.stop(), "t.pkl");
    EXPECT_EQ(value, json::parse(R"({
        "wide": 1700000000123456789, "negative": -5, "byte": 7, "short": 300, "int32": 70000,
        "float": 0.25, "none": null, "yes": true, "no": false, "pair": ["0", "default_pg"],
        "nested": [1, [2, 3]], "one": [9], "three": [1, 2, 3], "marked": [1, 2, 3, 4],
        "empty": [], "list": [4, 8], "short_str": "ab"})"));
    EXPECT_EQ(value["wide"].get<std::int64_t>(), 1'700'000'000'123'456'789);
    EXPECT_TRUE(value["none"].is_null());
}

TEST(PickleReader, MemoRepeatsStringsAndSeesContainersFilledAfterTheyWereStored) {
    Pickle p;
    // Python memoizes a list as soon as it is made, before its items are appended.
    p.op(']').op('q').le(0, 1).op('(').int1(1).int1(2).op('e');
    p.str("state").op('q').le(1, 1);
    p.op('h').le(1, 1).op('h').le(0, 1).op('j').le(0, 4).op(0x87);  // BINGET, BINGET, LONG_BINGET
    p.op(0x94).op('h').le(2, 1).op(0x86);  // MEMOIZE stores the tuple at the next index, 2
    const json value = read_pickle(p.stop(), "m.pkl");
    EXPECT_EQ(value, json::parse(R"([["state", [1, 2], [1, 2]], ["state", [1, 2], [1, 2]]])"))
        << value.dump();
}

// Each string and bytes opcode reads its length in its own width, and so do the memo ones.
TEST(PickleReader, EveryStringAndMemoOpcodeReadsItsOwnLengthWidth) {
    Pickle p;
    p.op(']').op('(');
    for (const auto& [code, width] : std::vector<std::pair<std::uint8_t, int>>{
             {0x58, 4}, {0x8c, 1}, {0x8d, 8}, {0x55, 1}, {0x43, 1}, {0x42, 4}}) {
        p.op(code).le(2, width);
        p.bytes += "ok";
    }
    p.op('r').le(7, 4).op('j').le(7, 4).op('q').le(9, 1).op('h').le(9, 1);  // LONG_BINPUT
    p.op('e');
    EXPECT_EQ(read_pickle(p.stop(), "s.pkl"),
              json::parse(R"(["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"])"));
}

TEST(PickleReader, DictKeysThatAreNotStringsBecomeTheirText) {
    Pickle p;
    p.op('}').op('(').int1(1).str("a").op(0x88).str("b").int1(1).int1(2).op(0x86).str("c").op('u');
    EXPECT_EQ(read_pickle(p.stop(), "k.pkl"),
              json::parse(R"({"1": "a", "true": "b", "[1,2]": "c"})"));
}

TEST(PickleReader, LongOneIsSignExtendedAndLimitedToSixtyFourBits) {
    EXPECT_EQ(read_pickle(Pickle().op(0x8a).le(0, 1).stop(), "l.pkl"), 0);
    EXPECT_EQ(read_pickle(Pickle().op(0x8a).le(2, 1).le(0xffff, 2).stop(), "l.pkl"), -1);
    EXPECT_EQ(read_pickle(Pickle().op(0x8a).le(3, 1).le(0xfeee90, 3).stop(), "l.pkl"), -70'000);
    EXPECT_EQ(read_pickle(Pickle().int64(INT64_MIN).stop(), "l.pkl").get<std::int64_t>(),
              INT64_MIN);
    EXPECT_EQ(error_of(Pickle().op(0x8a).le(9, 1).le(1, 8).le(0, 1).stop(), "wide.pkl"),
              "wide.pkl: byte 2: opcode 0x8a (LONG1): a 9-byte integer is wider than 64 bits");
}

TEST(PickleReader, RefusesOpcodesThatRunCodeNamingFileOffsetAndOpcode) {
    const std::string global = std::string("\x80\x02", 2) + "cbuiltins\neval\n.";
    EXPECT_EQ(error_of(global, "rank1.pkl"),
              "rank1.pkl: byte 2: pickle opcode 0x63 (GLOBAL) is not allowed in a "
              "flight-recorder dump");
    EXPECT_EQ(error_of(Pickle().op(')').op('R').stop()),
              "f.pkl: byte 3: pickle opcode 0x52 (REDUCE) is not allowed in a flight-recorder "
              "dump");
    EXPECT_EQ(error_of(Pickle().op('}').op('b').stop()),
              "f.pkl: byte 3: pickle opcode 0x62 (BUILD) is not allowed in a flight-recorder "
              "dump");
    EXPECT_EQ(error_of(Pickle().str("os").str("system").op(0x93).stop()),
              "f.pkl: byte 20: pickle opcode 0x93 (STACK_GLOBAL) is not allowed in a "
              "flight-recorder dump");
    EXPECT_EQ(error_of(Pickle().op('(').op('o').stop()),
              "f.pkl: byte 3: pickle opcode 0x6f (OBJ) is not allowed in a flight-recorder dump");
    EXPECT_EQ(error_of(Pickle().op(0xff).stop()),
              "f.pkl: byte 2: pickle opcode 0xff is not allowed in a flight-recorder dump");
}

TEST(PickleReader, TruncatedInputIsAnErrorWithItsOffset) {
    Pickle p;
    p.op('X').le(10, 4);
    p.bytes += "abc";
    EXPECT_EQ(error_of(p.bytes, "t.pkl"),
              "t.pkl: byte 2: the pickle ends inside opcode 0x58 (BINUNICODE): it needs 10 more "
              "bytes, 3 are left (truncated file?)");
    EXPECT_EQ(error_of(Pickle().int1(1).bytes, "t.pkl"),
              "t.pkl: byte 4: the pickle ends without a STOP opcode (truncated file?)");
    EXPECT_EQ(error_of(std::string("\x80\x02\x8a", 3), "t.pkl"),
              "t.pkl: byte 2: the pickle ends inside opcode 0x8a (LONG1): it needs 1 more "
              "bytes, 0 are left (truncated file?)");
    // A length near 2^64 must not wrap around the bounds check.
    EXPECT_EQ(error_of(Pickle().op(0x8d).le(~std::uint64_t{0}, 8).stop(), "t.pkl"),
              "t.pkl: byte 2: the pickle ends inside opcode 0x8d (BINUNICODE8): it needs "
              "18446744073709551615 more bytes, 1 are left (truncated file?)");
}

TEST(PickleReader, MemoIndexNeverStoredIsAnError) {
    EXPECT_EQ(error_of(Pickle().op('h').le(5, 1).stop()),
              "f.pkl: byte 2: opcode 0x68 (BINGET) reads memo entry 5, which was never stored "
              "(0 are)");
}

TEST(PickleReader, StackUnderflowAndMissingMarkAreErrors) {
    EXPECT_EQ(error_of(Pickle().op(']').op('a').stop()),
              "f.pkl: byte 3: opcode 0x61 (APPEND) needs a value but the stack is empty");
    EXPECT_EQ(error_of(Pickle().op(']').op('e').stop()),
              "f.pkl: byte 3: opcode 0x65 (APPENDS) without a MARK before it");
    EXPECT_EQ(error_of(Pickle().int1(1).int1(2).op('s').stop()),
              "f.pkl: byte 6: opcode 0x73 (SETITEM) needs a value but the stack is empty");
    EXPECT_EQ(error_of(Pickle().int1(1).op(']').op('s').stop()),
              "f.pkl: byte 5: opcode 0x73 (SETITEM) needs a value but the stack is empty");
}

// `lists` lists nested in each other, innermost last: depth lists - 1.
std::string nested_lists(int lists) {
    Pickle p;
    for (int i = 0; i < lists; ++i)
        p.op(']');
    for (int i = 1; i < lists; ++i)
        p.op('a');
    return p.stop();
}

TEST(PickleReader, NestingIsLimitedToAThousandLevels) {
    EXPECT_NO_THROW(read_pickle(nested_lists(1001), "deep.pkl"));
    EXPECT_EQ(error_of(nested_lists(1002), "deep.pkl"),
              "deep.pkl: byte 1003: values nest deeper than 1000 levels");
}

// Values that pile up on the stack, or MARKs nested past any value's depth, are no pickle a dump
// is: 18 MB of EMPTY_LIST (17 KB gzipped) once took 9 s and 3 GB before being refused.
TEST(PickleReader, ValuesPilingUpOnTheStackOrMarksNestedTooDeepAreRefusedAtOnce) {
    Pickle many;
    many.op('}').op('(');
    for (int item = 0; item < 2000; ++item)  // a full batch of Python's pickler: read
        many.short_str(std::to_string(item)).op('N');
    EXPECT_EQ(read_pickle(many.op('u').stop(), "ok.pkl").size(), 2000u);
    Pickle pile;
    for (int item = 0; item <= 65536; ++item)
        pile.op(']');
    EXPECT_EQ(error_of(pile.stop(), "pile.pkl"),
              "pile.pkl: byte 65538: more than 65536 values wait on the pickle stack at once: "
              "not a dump (Python's pickler fills containers 1000 items at a time)");
    Pickle marks;
    for (int mark = 0; mark <= 1000; ++mark)
        marks.op('(');
    EXPECT_EQ(error_of(marks.stop(), "marks.pkl"),
              "marks.pkl: byte 1002: MARKs nested deeper than 1000: not a dump (deeper than any "
              "value is read)");
}

TEST(PickleReader, SharedReferencesCannotExpandWithoutBound) {
    // A list that contains itself: refused by depth, not followed forever.
    Pickle self;
    self.op(']').op('q').le(0, 1).op('h').le(0, 1).op('a');
    EXPECT_NE(error_of(self.stop()).find("nest deeper than 1000"), std::string::npos);
    // Each level holds the previous one twice: 2^60 values from a few hundred bytes.
    Pickle laughs;
    laughs.int1(1);
    for (int level = 0; level < 60; ++level)
        laughs.op('q')
            .le(static_cast<std::uint64_t>(level), 1)
            .op('h')
            .le(static_cast<std::uint64_t>(level), 1)
            .op(0x86);
    EXPECT_NE(error_of(laughs.stop()).find("shared references expand"), std::string::npos);
}

// One long string stored once and referenced n times: n copies in the JSON. Its bytes count
// against the budget, so a 64 KiB file cannot become gigabytes.
std::string string_referenced(int times) {
    Pickle p;
    p.op(']').op('(').str(std::string(65536, 'x')).op('q').le(0, 1);
    for (int i = 1; i < times; ++i)
        p.op('h').le(0, 1);
    return p.op('e').stop();
}

TEST(PickleReader, ALongStringReferencedOverAndOverCountsItsBytes) {
    EXPECT_EQ(read_pickle(string_referenced(8), "few.pkl").size(), 8u);
    EXPECT_EQ(error_of(string_referenced(40), "many.pkl"),
              "many.pkl: byte 4: shared references expand to more data than the file could "
              "hold (a crafted pickle?)");
}

TEST(PickleReader, StringsMustBeUtf8AndProtocolKnown) {
    Pickle bad;
    bad.op('X').le(2, 4);
    bad.bytes += "\xc3\x28";
    EXPECT_EQ(error_of(bad.stop()),
              "f.pkl: byte 2: opcode 0x58 (BINUNICODE): the string is not valid UTF-8");
    EXPECT_EQ(read_pickle(Pickle().str("caf\xc3\xa9").stop(), "u.pkl"), "caf\xc3\xa9");
    EXPECT_EQ(error_of(std::string("\x80\x07N.", 4)),
              "f.pkl: byte 0: pickle protocol 7 is newer than this reader knows (up to 5)");
    EXPECT_EQ(error_of(std::string("\x80\x04\x95\xff\x00\x00\x00\x00\x00\x00\x00N.", 13)),
              "f.pkl: byte 2: a pickle frame of 255 bytes runs past the end of the file (2 bytes "
              "left; truncated file?)");
}

TEST(PickleReader, BytesAfterStopAreIgnoredAsPickleLoadDoes) {
    EXPECT_EQ(read_pickle(Pickle().int1(3).stop() + "garbage", "s.pkl"), 3);
}

}  // namespace
}  // namespace pipelens::import
