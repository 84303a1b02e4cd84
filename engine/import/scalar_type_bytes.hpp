// Bytes per element of PyTorch's scalar type names as c10::toString writes them ("Float",
// "BFloat16", "Half"), which the profiler's "dtype" arg and the flight recorder's input and
// output dtypes both carry. One table for every importer.
#pragma once

#include <cstdint>
#include <string_view>

namespace pipelens::import {

// 0 for a name PyTorch does not have (or this table does not know): its bytes stay unknown.
std::int64_t scalar_type_bytes(std::string_view name);

}  // namespace pipelens::import
