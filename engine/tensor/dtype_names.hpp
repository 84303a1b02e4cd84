// PyTorch's short dtype names (`dtype_abbrs` in torch/utils/_dtype_abbrs.py, the names a
// DTensor Spec prints: f32, bf16, c128, f8e4m3fn, ...), the names Python prints for them
// (torch.float32) and the bytes one element takes (`dtype.itemsize`). The one table of them:
// shapes, costs and messages all name and size tensors here.
//
// Invariant: a name is listed once; f4e2m1fnx2 holds two 4-bit values in its one byte, as its
// itemsize says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pipelens {

// The bytes of one element of `short_name`, nullopt for a name PyTorch does not print.
std::optional<std::int64_t> dtype_item_bytes(std::string_view short_name);

// The name Python prints for the dtype ("torch.float32" for f32), as PyTorch's messages
// give it; a name outside the table as it is.
std::string torch_dtype_name(std::string_view short_name);

// Every short name, in the table's order, for messages: "bf16, f64, f32, ...".
std::string known_dtype_names();

}  // namespace pipelens
