// The bounded JSON document reader (json_document.hpp).
#include "engine/import/json_document.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "engine/import/imported_run.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/text/text_file.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::import {
namespace {

using Json = nlohmann::json;

// What a document value costs, measured: 20 million empty arrays took 1.5 GB (75 bytes each).
constexpr std::int64_t kBytesPerValue = 80;

// Counts the values a document would hold; builds nothing.
struct ValueCounter final : Json::json_sax_t {
    std::int64_t values = 0;
    bool count() {
        ++values;
        return true;
    }
    bool null() override { return count(); }
    bool boolean(bool) override { return count(); }
    bool number_integer(number_integer_t) override { return count(); }
    bool number_unsigned(number_unsigned_t) override { return count(); }
    bool number_float(number_float_t, const string_t&) override { return count(); }
    bool string(string_t&) override { return count(); }
    bool binary(binary_t&) override { return count(); }
    bool start_object(std::size_t) override { return count(); }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return count(); }
    bool end_array() override { return true; }
    bool key(string_t&) override { return count(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;  // the document parse below says where and why
    }
};

}  // namespace

std::string json_error_text(const Json::exception& error) {
    std::string what = error.what();
    if (const std::size_t bracket = what.find("] "); bracket != std::string::npos)
        what = what.substr(bracket + 2);
    return what;
}

Json parse_json_document(std::string_view text, const std::string& path) {
    ValueCounter counter;
    Json::sax_parse(text.begin(), text.end(), &counter, nlohmann::detail::input_format_t::json,
                    false);
    const std::int64_t needed = counter.values * kBytesPerValue;
    const std::int64_t available = available_memory_bytes();
    if (needed > available / 2)
        throw TextFileError(
            TextFileError::Problem::too_large,
            fmt::format("{}: its JSON holds {} values, which need about {} to read, and {} of "
                        "memory is available",
                        path, counter.values, format_bytes(needed), format_bytes(available)));
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& error) {
        throw ImportError(fmt::format("{}: not valid JSON (byte {}): {}", path, error.byte,
                                      json_error_text(error)));
    } catch (const Json::exception& error) {  // e.g. a number too large for a double
        throw ImportError(fmt::format("{}: not valid JSON: {}", path, json_error_text(error)));
    }
}

}  // namespace pipelens::import
