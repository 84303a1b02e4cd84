// Reading the "args" of a profiler event as the chrome-trace tokenizer hands them over (raw JSON
// text): integers written bare or quoted, quoted text, and a dtype's element size.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/import/chrome_trace_stream.hpp"

namespace pipelens::import {

// An integer written bare (12) or as a JSON string ("12"); nothing for anything else.
std::optional<std::int64_t> integer_of(std::string_view text);

// Text without the quotes a JSON string arrives in.
std::string_view unquoted(std::string_view text);

// Bytes per element of the dtype the profiler writes ("Float", "\"BFloat16\"", "c10::Half").
std::int64_t dtype_bytes(std::string_view dtype);

// The raw text of the event's argument `key`; empty when it has none.
std::string_view arg_text(const ChromeEvent& event, std::string_view key);

}  // namespace pipelens::import
