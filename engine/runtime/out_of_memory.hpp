// Telling LibTorch's allocator failures from its other errors: both are c10::Error, but running
// out of memory is too large an input (exit 3), never a model or a split that is wrong. And what
// a user reads of either: never LibTorch's C++ backtrace.
#pragma once

#include <exception>
#include <optional>
#include <string>

#include <c10/util/Exception.h>

namespace pipelens::runtime {

// A device allocator's OutOfMemoryError, or the CPU allocator's enforcement, which LibTorch 1.13
// raises as a plain c10::Error ("DefaultCPUAllocator: can't allocate memory").
bool is_torch_out_of_memory(const c10::Error& error);

// The allocator's words when `error` is running out of memory ("" for std::bad_alloc, which says
// nothing more); none for any other error.
std::optional<std::string> out_of_memory_detail(const std::exception_ptr& error);

// What a user reads of `error`: a c10::Error's message without its C++ backtrace, else what().
std::string error_text(const std::exception& error);

// "<who> ran out of memory (<detail>): ...; lower --layers, ...": what a user reads, whether the
// model built up front, a rank's set-up or one of its actions ran out (`who`: "rank 1",
// "rank 1 in 1F3", "building the model"). The CPU allocator's enforcement is cut to its
// sentence; `detail` may be empty (std::bad_alloc says nothing more).
std::string out_of_memory_message(const std::string& who, std::string detail);

}  // namespace pipelens::runtime
