// TensorMeta: what a stage boundary promises about a tensor (shape, stride, dtype, whether it
// carries a gradient), without LibTorch, so validation messages, events and traces can speak
// about tensors in torch-free code. Printing follows PyTorch's short form: `f32[64, 512]`.
//
// Invariants: dtype is PyTorch's short name (f32, bf16, c128, ...: dtype_names.hpp);
// stride has one entry per dimension.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipelens {

struct TensorMeta {
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> stride;
    std::string dtype = "f32";
    bool requires_grad = false;

    // Both saturate at int64's largest value for a shape no tensor can have.
    std::int64_t element_count() const;
    std::int64_t byte_count() const;  // element_count() times the dtype's size
    friend bool operator==(const TensorMeta&, const TensorMeta&) = default;
};

// "f32[64, 512]"
std::string to_string(const TensorMeta& meta);
// "(f32[64, 512], bf16[8])"
std::string to_string(const std::vector<TensorMeta>& metas);

// What makes `meta` a tensor no PyTorch run can hold, when something does: a dtype outside
// dtype_names.hpp, a negative size or stride, a stride list of another length than the shape,
// or more bytes than int64 counts. Readers of recorded metadata refuse such a tensor by this.
std::optional<std::string> impossible_tensor(const TensorMeta& meta);

// Row-major strides of `shape`, as a freshly allocated tensor has them (sizes 0 count as 1;
// saturating at int64's largest value).
std::vector<std::int64_t> contiguous_stride(const std::vector<std::int64_t>& shape);

// PyTorch's checks of a stage boundary (validate_tensors_metadata), with its messages:
//   "Number of {what} (3) does not match expected number (2)"
//   "{what}[0] has a shape mismatch: expected torch.Size([64, 512]) actual torch.Size([65, 512])"
//   "{what}[0] has a dtype mismatch: expected torch.float32 actual torch.bfloat16"
//   "{what}[0] has a stride mismatch: expected (512, 1) actual (1, 64)"
// Count first, then per tensor shape, dtype, stride. Returns the first mismatch, if any.
struct MetadataMismatch {
    std::string kind;  // "count", "shape", "dtype" or "stride"
    int index = -1;    // the tensor, -1 for a count mismatch
    std::string expected;
    std::string actual;
    std::string message;
};

std::optional<MetadataMismatch> check_tensors_metadata(const std::string& what,
                                                       const std::vector<TensorMeta>& expected,
                                                       const std::vector<TensorMeta>& actual);

}  // namespace pipelens
