// See scalar_type_bytes.hpp. Names and widths of c10's ScalarType (c10/core/ScalarType.h).
#include "engine/import/scalar_type_bytes.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace pipelens::import {

std::int64_t scalar_type_bytes(std::string_view name) {
    static constexpr std::array<std::pair<std::string_view, std::int64_t>, 23> kBytes{{
        {"Bool", 1},
        {"Byte", 1},
        {"Char", 1},
        {"QInt8", 1},
        {"QUInt8", 1},
        {"Float8_e5m2", 1},
        {"Float8_e4m3fn", 1},
        {"Short", 2},
        {"Half", 2},
        {"BFloat16", 2},
        {"UInt16", 2},
        {"Int", 4},
        {"Float", 4},
        {"QInt32", 4},
        {"UInt32", 4},
        {"ComplexHalf", 4},
        {"Long", 8},
        {"Double", 8},
        {"UInt64", 8},
        {"ComplexFloat", 8},
        {"ComplexDouble", 16},
        {"Float8_e4m3fnuz", 1},
        {"Float8_e5m2fnuz", 1},
    }};
    const auto found = std::find_if(kBytes.begin(), kBytes.end(),
                                    [&](const auto& entry) { return entry.first == name; });
    return found == kBytes.end() ? 0 : found->second;
}

}  // namespace pipelens::import
