// Which BLAS LibTorch's matrix products run on in this process. Debian's LibTorch links the
// generic libblas.so.3, whatever BLAS the system's alternative points at; with no optimised one
// installed that is the reference BLAS (netlib), many times slower, and every time a run
// measures is then the reference BLAS's, not the machine's.
//
// Invariant: only the reference BLAS as Debian installs it (a libblas.so.3 file in a directory
// named `blas`) is named; any other, or a LibTorch carrying its own (PyTorch's wheels link MKL),
// is none, so the note never names a BLAS that is not slow.
#pragma once

#include <optional>
#include <string>

namespace pipelens::runtime {

// The reference BLAS's file when sgemm_, the single-precision matrix product, binds to it here.
std::optional<std::string> reference_blas_in_use();

// "LibTorch's matrix products run on the reference BLAS (<file>): ..." when they do.
std::optional<std::string> reference_blas_note();

}  // namespace pipelens::runtime
