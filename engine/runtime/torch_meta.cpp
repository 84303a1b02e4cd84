// Tensor metadata conversion. The dtype table is the one place both directions read, so a
// name printed in a mismatch message always parses back.
#include "engine/runtime/torch_meta.hpp"

#include <array>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace pipelens::runtime {
namespace {

constexpr std::array<std::pair<torch::ScalarType, const char*>, 11> kDtypeNames{{
    {torch::kFloat32, "f32"},
    {torch::kBFloat16, "bf16"},
    {torch::kFloat16, "f16"},
    {torch::kFloat64, "f64"},
    {torch::kInt64, "i64"},
    {torch::kInt32, "i32"},
    {torch::kInt16, "i16"},
    {torch::kInt8, "i8"},
    {torch::kUInt8, "u8"},
    {torch::kBool, "b8"},
    {torch::kComplexFloat, "c64"},
}};

// Types a stage boundary can carry but no factory here makes, by the name c10 prints for them:
// some (float8, uint16..64) exist only in newer LibTorch, so they are matched by name, which
// builds against every version.
constexpr std::array<std::pair<std::string_view, const char*>, 13> kNamedOnlyDtypes{{
    {"ComplexHalf", "c32"},
    {"ComplexDouble", "c128"},
    {"Float8_e4m3fn", "f8e4m3fn"},
    {"Float8_e5m2", "f8e5m2"},
    {"Float8_e4m3fnuz", "f8e4m3fnuz"},
    {"Float8_e5m2fnuz", "f8e5m2fnuz"},
    {"Float8_e8m0fnu", "f8e8m0fnu"},
    {"Float4_e2m1fn_x2", "f4e2m1fnx2"},
    {"UInt16", "u16"},
    {"UInt32", "u32"},
    {"UInt64", "u64"},
    {"Bits16", "b16"},
    {"Bits1x8", "b1x8"},
}};

}  // namespace

std::string short_dtype_name(torch::ScalarType type) {
    for (const auto& [known, name] : kDtypeNames)
        if (known == type)
            return name;
    const std::string_view c10_name = c10::toString(type);
    for (const auto& [known, name] : kNamedOnlyDtypes)
        if (known == c10_name)
            return name;
    return std::string(c10_name);  // quantized types: outside the dtype table, so unreplayable
}

torch::ScalarType scalar_type_of(const std::string& short_name) {
    for (const auto& [type, name] : kDtypeNames)
        if (short_name == name)
            return type;
    std::string names;
    for (const auto& [type, name] : kDtypeNames)
        names += (names.empty() ? "" : ", ") + std::string(name);
    throw std::invalid_argument("unknown dtype '" + short_name + "' (use " + names + ")");
}

TensorMeta meta_of(const torch::Tensor& tensor) {
    TensorMeta meta;
    meta.shape = tensor.sizes().vec();
    meta.stride = tensor.strides().vec();
    meta.dtype = short_dtype_name(tensor.scalar_type());
    meta.requires_grad = tensor.requires_grad();
    return meta;
}

std::vector<TensorMeta> metas_of(const TensorList& tensors) {
    std::vector<TensorMeta> metas;
    for (const torch::Tensor& tensor : tensors)
        metas.push_back(meta_of(tensor));
    return metas;
}

torch::Tensor empty_like_meta(const TensorMeta& meta, const c10::Device& device) {
    return torch::empty_strided(
        meta.shape, meta.stride,
        torch::TensorOptions().dtype(scalar_type_of(meta.dtype)).device(device));
}

}  // namespace pipelens::runtime
