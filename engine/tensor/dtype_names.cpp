// See dtype_names.hpp.
#include "engine/tensor/dtype_names.hpp"

#include <array>
#include <utility>

namespace pipelens {
namespace {

constexpr std::array<std::pair<std::string_view, std::int64_t>, 24> kItemBytes{{
    {"bf16", 2},   {"f64", 8},        {"f32", 4},        {"f16", 2},       {"f8e4m3fn", 1},
    {"f8e5m2", 1}, {"f8e4m3fnuz", 1}, {"f8e5m2fnuz", 1}, {"f8e8m0fnu", 1}, {"f4e2m1fnx2", 1},
    {"c32", 4},    {"c64", 8},        {"c128", 16},      {"i8", 1},        {"i16", 2},
    {"i32", 4},    {"i64", 8},        {"b8", 1},         {"u8", 1},        {"u16", 2},
    {"u32", 4},    {"u64", 8},        {"b16", 2},        {"b1x8", 1},
}};

}  // namespace

std::optional<std::int64_t> dtype_item_bytes(std::string_view short_name) {
    for (const auto& [name, bytes] : kItemBytes)
        if (name == short_name)
            return bytes;
    return std::nullopt;
}

std::string known_dtype_names() {
    std::string names;
    for (const auto& [name, bytes] : kItemBytes) {
        if (!names.empty())
            names += ", ";
        names += name;
    }
    return names;
}

}  // namespace pipelens
