// The streaming JSON tokenizer on its own: number grammar, walking an object's members with
// first_member/next_member, values kept as raw text or passed through, escapes, and errors that
// name the input, the byte offset and the line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/import/byte_source.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/import/json_tokenizer.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::import {
namespace {

TEST(JsonNumber, TellsNumbersAndIntegersFromTheirText) {
    bool is_integer = false;
    EXPECT_TRUE(is_json_number("-120", is_integer));
    EXPECT_TRUE(is_integer);
    EXPECT_TRUE(is_json_number("0.5e-3", is_integer));
    EXPECT_FALSE(is_integer);
    EXPECT_TRUE(is_json_number("1E9", is_integer));
    EXPECT_FALSE(is_integer);
    EXPECT_FALSE(is_json_number("01", is_integer));   // no leading zeros
    EXPECT_FALSE(is_json_number("1.", is_integer));   // a fraction needs a digit
    EXPECT_FALSE(is_json_number("+1", is_integer));   // no plus sign
    EXPECT_FALSE(is_json_number("12 ", is_integer));  // exactly one number
    EXPECT_FALSE(is_json_number("", is_integer));
}

TEST(JsonNumber, MatchStopsAtTheFirstByteAfterTheNumber) {
    const std::string text = "-3.25e+2,";
    const char* bad = nullptr;
    bool is_integer = true;
    const char* stop = match_json_number(text.c_str(), bad, is_integer);
    EXPECT_EQ(stop, text.c_str() + 8);
    EXPECT_FALSE(is_integer);
    const std::string broken = "1e+x";
    EXPECT_EQ(match_json_number(broken.c_str(), bad, is_integer), nullptr);
    EXPECT_EQ(bad, broken.c_str() + 3);
}

// Each member of the object `text` as "key=value", values kept as their text.
std::vector<std::string> members_of(const std::string& text) {
    MemorySource source(text);
    const std::string name = "test.json";
    JsonTokenizer json(source, name, false);
    json.start();
    EXPECT_EQ(json.skip_ws(), '{');
    std::vector<std::string> members;
    for (bool more = json.first_member("a name"); more; more = json.next_member("',' or '}'")) {
        std::string key(json.view(json.scan_string()));
        json.expect(':', "':'");
        const JsonValue value = json.parse_value(true);
        members.push_back(key + "=" + std::string(json.view(value.span)));
    }
    EXPECT_EQ(json.skip_ws(), '\0');
    EXPECT_TRUE(json.at_end());
    return members;
}

TEST(JsonTokenizer, WalksAnObjectsMembersWithValuesAsWritten) {
    EXPECT_EQ(members_of(R"( {"a": 1, "b" : "x\ty", "c": [1, {"d": null}], "e": true} )"),
              (std::vector<std::string>{"a=1", "b=x\ty", "c=[1, {\"d\": null}]", "e=true"}));
    EXPECT_EQ(members_of("{}"), std::vector<std::string>{});
    EXPECT_EQ(members_of(R"({"u": "\u00e9\ud83d\ude00\ud800"})"),
              (std::vector<std::string>{"u=\xC3\xA9\xF0\x9F\x98\x80\xEF\xBF\xBD"}));
}

std::string error_of(const std::string& text) {
    return testing::thrown_message<ImportError>([&] { members_of(text); }, "no error");
}

TEST(JsonTokenizer, ErrorsNameTheInputTheOffsetAndTheLine) {
    EXPECT_EQ(error_of("{\"a\": 1,\n 2}"),
              "test.json: unexpected '2' where a member name after ',' was expected at byte 10 "
              "(line 2)");
    EXPECT_EQ(error_of("{\"a\": 1 \"b\": 2}"),
              "test.json: unexpected '\"' where ',' or '}' was expected at byte 8 (line 1)");
    EXPECT_EQ(error_of("{5}"),
              "test.json: unexpected '5' where a name was expected at byte 1 "
              "(line 1)");
    EXPECT_EQ(error_of("{\"a\": tru}"),
              "test.json: unexpected 't' where a value (true, false or null) was expected at "
              "byte 6 (line 1)");
    EXPECT_EQ(error_of("{\"a\": [1, 2"),
              "test.json: the JSON ends where ',' or ']' was expected (truncated file?) at byte "
              "11 (line 1)");
}

TEST(JsonTokenizer, ReleasedContainersPassThroughWithoutTheirText) {
    std::string text = R"({"big": [)";
    for (int element = 0; element < 300'000; ++element)  // larger than the first buffer
        text += "1,";
    text += R"(1], "n": 2})";
    MemorySource source(text);
    const std::string name = "big.json";
    JsonTokenizer json(source, name, false);
    json.start();
    ASSERT_EQ(json.skip_ws(), '{');
    ASSERT_TRUE(json.first_member("a name"));
    json.scan_string();
    json.expect(':', "':'");
    json.release();
    const JsonValue skipped = json.parse_value(false);
    EXPECT_EQ(skipped.kind, JsonKind::array);
    EXPECT_EQ(skipped.span.size, 0u);
    ASSERT_TRUE(json.next_member("',' or '}'"));
    EXPECT_EQ(json.view(json.scan_string()), "n");
    EXPECT_EQ(json.offset(), text.size() - 4);  // at the ':' after "n"
}

}  // namespace
}  // namespace pipelens::import
