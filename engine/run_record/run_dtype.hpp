// The floating-point types `pipelens run` computes in (`--dtype`) and how close to the
// single-rank reference a run in each must come: the one definition of both, torch-free, read by
// the runtime's reference and accuracy checks, the CLI's flag check and the messages that quote
// the tolerances.
//
// Invariants: float32's tolerance is kRelativeTolerance/kAbsoluteTolerance, as before a run had a
// choice; every name run_dtype_names() lists has a tolerance; a name it does not list has none.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pipelens::run_record {

inline constexpr std::string_view kDefaultRunDtype = "float32";

// float32's tolerance: microbatched summation order against the whole batch's.
inline constexpr double kRelativeTolerance = 1e-4;
inline constexpr double kAbsoluteTolerance = 1e-5;

// bfloat16's: its 8-bit significand keeps 2 to 3 significant digits, one unit in the last place
// of a value near 1 being 2^-7 (0.0078). A gradient summed over microbatches rounds once per
// microbatch where the whole batch's rounds once, so the two may differ by an ulp or two: the
// relative part is two ulps of 1 (2^-6, 1.6e-2, torch.testing's own default for bfloat16). The
// absolute part covers elements near zero, where a relative bound is no help: measured on the CPU
// (LibTorch 1.13, mlp of 2 to 8 layers, m = 2 to 8, seeds 0 to 3, bfloat16 pipelined against
// bfloat16 whole) the largest gradient differences were 2^-7 and, with rtol 1.6e-2, an atol of
// 2.6e-4 was needed; 1e-3 leaves room for a GPU's other summation orders. An error that matters
// (a microbatch's gradient lost: a quarter of the sum at m = 4) is far outside it.
inline constexpr double kBfloat16RelativeTolerance = 1.6e-2;
inline constexpr double kBfloat16AbsoluteTolerance = 1e-3;

// A value matches its reference when |actual - reference| <= absolute + relative * |reference|
// (torch::allclose).
struct ReferenceTolerance {
    double relative = 0;
    double absolute = 0;
    bool operator==(const ReferenceTolerance&) const = default;
};

// "float32", "bfloat16": what `--dtype` takes, in the order its help lists them.
const std::vector<std::string>& run_dtype_names();

bool is_run_dtype(std::string_view name);

// The tolerance of a run in `dtype`. Throws std::invalid_argument for a name run_dtype_names()
// does not list.
ReferenceTolerance reference_tolerance(std::string_view dtype);

// "--dtype: 'half' is not a dtype pipelens run computes in (float32 or bfloat16)" for a name it
// does not take, else empty.
std::string run_dtype_problem(std::string_view name);

}  // namespace pipelens::run_record
