// Tensor metadata conversion. The dtype table is the one place both directions read, so a
// name printed in a mismatch message always parses back.
#include "engine/runtime/torch_meta.hpp"

#include <array>
#include <stdexcept>
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

}  // namespace

std::string short_dtype_name(torch::ScalarType type) {
    for (const auto& [known, name] : kDtypeNames)
        if (known == type)
            return name;
    return c10::toString(type);
}

torch::ScalarType scalar_type_of(const std::string& short_name) {
    for (const auto& [type, name] : kDtypeNames)
        if (short_name == name)
            return type;
    throw std::invalid_argument("unknown dtype '" + short_name +
                                "' (use f32, bf16, f16, f64, i64, i32, i16, i8, u8, b8)");
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
