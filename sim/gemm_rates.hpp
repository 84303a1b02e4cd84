// Matrix-multiply rates measured on the GPU for the shapes a plan prices (`plan --gemm-rates`),
// in place of one achieved fraction of peak for every shape: small GEMMs run well below large
// ones, and that difference is what a single fraction cannot express.
//
// The file is CSV with the header `m,n,k,tflops`, one measured GEMM per line (an m x k by k x n
// product in the plan's dtype, its TFLOP/s). `plan --gemm-shapes` lists the shapes a plan needs
// as `m,n,k`; scripts/gemm_rates.py measures them with PyTorch on a GPU.
//
// Invariants: every rate is finite and positive; a shape appears at most once; a shape not
// measured is an error naming it, never a guess from its neighbours.
#pragma once

#include <istream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/layer_gemms.hpp"

namespace pipelens::sim {

// A malformed rates file, or a shape it does not have.
class GemmRateError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class GemmRates {
  public:
    // Reads the CSV; `source` names it in errors ("rates.csv:4: tflops: ...").
    static GemmRates parse(std::istream& in, const std::string& source);

    // TFLOP/s of `shape`; GemmRateError naming the shape and the file when it was not measured.
    double tflops(const GemmShape& shape) const;
    std::size_t size() const { return rates_.size(); }
    const std::string& source() const { return source_; }

  private:
    std::string source_;
    std::map<GemmShape, double> rates_;
};

// Per pass, the FLOPs `gemms` would be at `base_tflops` to take as long as they take at their
// measured rates: what the plan charges them at its achieved rate.
PassFlops flops_at_measured_rates(const std::vector<PassGemm>& gemms, const GemmRates& rates,
                                  double base_tflops);

}  // namespace pipelens::sim
