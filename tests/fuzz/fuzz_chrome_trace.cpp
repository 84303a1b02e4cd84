// Fuzz target: the streaming PyTorch profiler (Chrome/Kineto JSON) reader, from memory, plain or
// gzip as the bytes say.
// Invariants: bad input is refused with ImportError, never another exception or a crash; every
// event handed out is counted in the header; for plain input each event's offset is a '{' of the
// input and offsets increase; a number argument keeps a number's text; input
// the reader accepts is valid JSON to nlohmann::json (checked where the two agree on what JSON
// is: ASCII without \u escapes, since the reader passes UTF-8 through unchecked and replaces a
// lone surrogate where nlohmann refuses it).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/import/chrome_trace_stream.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

namespace importer =
    pipelens::import;  // "import::" at a line start reads as a C++20 module import to clang-format

// Checks JSON syntax only: nlohmann also refuses a float beyond a double's range (error 406),
// which is valid JSON and which the reader reads as text.
struct SyntaxCheck : nlohmann::json_sax<nlohmann::json> {
    bool valid = true;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&,
                     const nlohmann::detail::exception& e) override {
        valid = e.id == 406;
        return false;
    }
};

bool comparable_with_nlohmann(std::string_view text) {
    for (const char c : text)
        if (static_cast<unsigned char>(c) >= 0x80)
            return false;
    return text.find("\\u") == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    std::uint64_t events = 0;
    std::uint64_t last_offset = 0;
    importer::ChromeTraceHeader header;
    try {
        header = importer::read_chrome_trace_text(
            text, "fuzz.json", [&](const importer::ChromeEvent& e) {
                PIPELENS_FUZZ_REQUIRE(events == 0 || e.offset > last_offset, "offsets increase");
                last_offset = e.offset;
                ++events;
                if (gzip)
                    return;
                PIPELENS_FUZZ_REQUIRE(e.offset < size && text[e.offset] == '{',
                                      "an event's offset is its '{'");
                for (const importer::ChromeArg& arg : e.args) {
                    PIPELENS_FUZZ_REQUIRE(!(arg.is_number && arg.is_string), "one kind per arg");
                    if (arg.is_number)  // a number keeps its text as written
                        PIPELENS_FUZZ_REQUIRE(
                            !arg.text.empty() &&
                                (arg.text[0] == '-' || (arg.text[0] >= '0' && arg.text[0] <= '9')),
                            "a number's text is a number");
                }
            });
    } catch (const importer::ImportError&) {
        return 0;
    }
    PIPELENS_FUZZ_REQUIRE(header.event_count == events, "event_count counts every event");
    if (!gzip && comparable_with_nlohmann(text)) {
        SyntaxCheck check;
        nlohmann::json::sax_parse(text, &check);
        PIPELENS_FUZZ_REQUIRE(check.valid, "accepted input is valid JSON");
    }
    return 0;
}
