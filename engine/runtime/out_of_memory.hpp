// Telling LibTorch's allocator failures from its other errors: both are c10::Error, but running
// out of memory is too large an input (exit 3), never a model or a split that is wrong.
#pragma once

#include <string>

#include <c10/util/Exception.h>

namespace pipelens::runtime {

// A device allocator's OutOfMemoryError, or the CPU allocator's enforcement, which LibTorch 1.13
// raises as a plain c10::Error ("DefaultCPUAllocator: can't allocate memory").
bool is_torch_out_of_memory(const c10::Error& error);

// "<who> ran out of memory (<detail>): ...; lower --layers, ...": what a user reads, whether the
// model built up front, a rank's set-up or one of its actions ran out (`who`: "rank 1",
// "rank 1 in 1F3", "building the model"). The CPU allocator's enforcement is cut to its
// sentence; `detail` may be empty (std::bad_alloc says nothing more).
std::string out_of_memory_message(const std::string& who, std::string detail);

}  // namespace pipelens::runtime
