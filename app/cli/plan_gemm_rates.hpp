// `plan --gemm-rates FILE` and `plan --gemm-shapes`: measured GEMM rates read for the planner, and
// the list of shapes a plan prices, for measuring them (sim/gemm_rates.hpp has the format).
#pragma once

#include <memory>
#include <string>

#include "sim/training_plan.hpp"

namespace pipelens::cli {

// The rates in `path`; a file that cannot be read or parsed is a usage error (exit 2) naming
// it, the line and the field.
std::shared_ptr<const sim::GemmRates> read_gemm_rates(const std::string& path);

// Prints, as CSV `m,n,k` under its header, every GEMM shape of the layouts the plan would price
// (each layer's linear GEMMs and the logits', all three passes), each once, smallest first.
void print_gemm_shapes(const sim::ModelSpec& model, const sim::ClusterSpec& cluster,
                       const sim::PlanOptions& options);

}  // namespace pipelens::cli
