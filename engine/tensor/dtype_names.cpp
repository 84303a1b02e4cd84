// See dtype_names.hpp.
#include "engine/tensor/dtype_names.hpp"

#include <array>
#include <utility>

namespace pipelens {
namespace {

struct DtypeName {
    std::string_view short_name;  // as a Spec and TensorMeta print it
    std::string_view torch_name;  // as Python prints the torch.dtype
    std::int64_t item_bytes;
};

constexpr std::array<DtypeName, 24> kDtypes{{
    {"bf16", "torch.bfloat16", 2},
    {"f64", "torch.float64", 8},
    {"f32", "torch.float32", 4},
    {"f16", "torch.float16", 2},
    {"f8e4m3fn", "torch.float8_e4m3fn", 1},
    {"f8e5m2", "torch.float8_e5m2", 1},
    {"f8e4m3fnuz", "torch.float8_e4m3fnuz", 1},
    {"f8e5m2fnuz", "torch.float8_e5m2fnuz", 1},
    {"f8e8m0fnu", "torch.float8_e8m0fnu", 1},
    {"f4e2m1fnx2", "torch.float4_e2m1fn_x2", 1},
    {"c32", "torch.complex32", 4},
    {"c64", "torch.complex64", 8},
    {"c128", "torch.complex128", 16},
    {"i8", "torch.int8", 1},
    {"i16", "torch.int16", 2},
    {"i32", "torch.int32", 4},
    {"i64", "torch.int64", 8},
    {"b8", "torch.bool", 1},
    {"u8", "torch.uint8", 1},
    {"u16", "torch.uint16", 2},
    {"u32", "torch.uint32", 4},
    {"u64", "torch.uint64", 8},
    {"b16", "torch.bits16", 2},
    {"b1x8", "torch.bits1x8", 1},
}};

const DtypeName* find_dtype(std::string_view short_name) {
    for (const DtypeName& dtype : kDtypes)
        if (dtype.short_name == short_name)
            return &dtype;
    return nullptr;
}

}  // namespace

std::optional<std::int64_t> dtype_item_bytes(std::string_view short_name) {
    const DtypeName* dtype = find_dtype(short_name);
    return dtype != nullptr ? std::optional(dtype->item_bytes) : std::nullopt;
}

std::string torch_dtype_name(std::string_view short_name) {
    const DtypeName* dtype = find_dtype(short_name);
    return std::string(dtype != nullptr ? dtype->torch_name : short_name);
}

std::string known_dtype_names() {
    std::string names;
    for (const DtypeName& dtype : kDtypes) {
        if (!names.empty())
            names += ", ";
        names += dtype.short_name;
    }
    return names;
}

}  // namespace pipelens
