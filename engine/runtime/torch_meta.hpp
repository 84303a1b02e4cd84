// Between LibTorch tensors and torch-free TensorMeta: metadata of a tensor, PyTorch's short
// dtype names (f32, bf16, i64, ...), and empty tensors allocated to a metadata (receive
// buffers).
#pragma once

#include <string>

#include "engine/runtime/model_library.hpp"
#include "engine/tensor/tensor_meta.hpp"

namespace pipelens::runtime {

TensorMeta meta_of(const torch::Tensor& tensor);
std::vector<TensorMeta> metas_of(const TensorList& tensors);

std::string short_dtype_name(torch::ScalarType type);
// std::invalid_argument for a name it does not know.
torch::ScalarType scalar_type_of(const std::string& short_name);

torch::Tensor empty_like_meta(const TensorMeta& meta, const c10::Device& device = c10::kCPU);

}  // namespace pipelens::runtime
