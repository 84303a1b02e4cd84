// Reading a profiler event's args (profiler_args.hpp).
#include "engine/import/profiler_args.hpp"

#include <charconv>

#include "engine/import/scalar_type_bytes.hpp"

namespace pipelens::import {

std::optional<std::int64_t> integer_of(std::string_view text) {
    if (!text.empty() && text.front() == '"')
        text = text.substr(1, text.size() >= 2 ? text.size() - 2 : 0);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

std::string_view unquoted(std::string_view text) {
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
        return text.substr(1, text.size() - 2);
    return text;
}

std::int64_t dtype_bytes(std::string_view dtype) {
    dtype = unquoted(dtype);
    if (const auto colon = dtype.rfind(':'); colon != std::string_view::npos)
        dtype = dtype.substr(colon + 1);
    return scalar_type_bytes(dtype);
}

std::string_view arg_text(const ChromeEvent& event, std::string_view key) {
    for (const ChromeArg& arg : event.args)
        if (arg.key == key)
            return arg.text;
    return {};
}

}  // namespace pipelens::import
