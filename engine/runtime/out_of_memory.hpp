// Telling LibTorch's allocator failures from its other errors: both are c10::Error, but running
// out of memory is too large an input (exit 3), never a model or a split that is wrong.
#pragma once

#include <c10/util/Exception.h>

namespace pipelens::runtime {

// A device allocator's OutOfMemoryError, or the CPU allocator's enforcement, which LibTorch 1.13
// raises as a plain c10::Error ("DefaultCPUAllocator: can't allocate memory").
bool is_torch_out_of_memory(const c10::Error& error);

}  // namespace pipelens::runtime
