// A restricted unpickler for NCCL flight-recorder dumps: it reads the plain-data subset of the
// pickle format that PyTorch's C++ pickler (protocol 2, what FlightRecorder's dump writes) and
// Python's pickle (protocols 2-5, for the same data) emit, and turns it into JSON.
//
// It never executes anything: opcodes that name or call Python objects (GLOBAL, REDUCE, BUILD,
// STACK_GLOBAL, PERSID, INST, OBJ, NEWOBJ, ...) are refused with an ImportError naming the file,
// the byte offset and the opcode. Invariants: every read is bounds-checked against the input
// (a truncated file or a size past its end is an error, never a read out of bounds); integers
// are int64 (wider ones are refused); nesting deeper than kMaxPickleDepth and shared references
// that would expand past a budget proportional to the input are refused, so time and memory
// follow the input's size. Tuples become JSON arrays; dict keys that are not strings become
// their JSON text (1 -> "1").
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pipelens::import {

inline constexpr std::size_t kMaxPickleDepth = 1000;

// Reads one pickle (up to its STOP opcode; bytes after it are ignored, as pickle.load does).
// `file_name` only names the input in error messages. Throws ImportError.
nlohmann::json read_pickle(std::string_view bytes, std::string_view file_name);

}  // namespace pipelens::import
