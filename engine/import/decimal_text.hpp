// Decimal text (a JSON number as written: "1700000000123456.789", "3.07e-05") times a power of
// ten as an exact int64, rounded half away from zero: trace times in us or ms become ns without
// the precision a double loses on absolute timestamps. Shared by the streaming trace tokenizer
// and the importers that read times as text.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pipelens::import {

// `text` must be a valid JSON number (the tokenizer has checked it); nullopt when the result does
// not fit in int64.
std::optional<std::int64_t> scaled_json_number(std::string_view text, int scale);

// The same for any text: nullopt also when it is not a JSON number.
std::optional<std::int64_t> scaled_decimal(std::string_view text, int scale);

}  // namespace pipelens::import
