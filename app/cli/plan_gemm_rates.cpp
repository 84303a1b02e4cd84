// Measured GEMM rates for `pipelens plan` (plan_gemm_rates.hpp).
#include "app/cli/plan_gemm_rates.hpp"

#include <set>
#include <sstream>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "engine/text/text_file.hpp"
#include "sim/layer_gemms.hpp"

namespace pipelens::cli {

std::shared_ptr<const sim::GemmRates> read_gemm_rates(const std::string& path) {
    std::istringstream in;
    try {  // a regular file of bounded size: a FIFO would block the read until a writer came
        in.str(read_text_file(path));
    } catch (const TextFileError& error) {
        throw CommandFailure(
            error.problem() == TextFileError::Problem::too_large ? kExitTooLarge : kExitUsage,
            fmt::format("pipelens plan: --gemm-rates {}", error.what()));
    }
    try {
        return std::make_shared<const sim::GemmRates>(sim::GemmRates::parse(in, path));
    } catch (const sim::GemmRateError& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens plan: {}", error.what()));
    }
}

void print_gemm_shapes(const sim::ModelSpec& model, const sim::ClusterSpec& cluster,
                       const sim::PlanOptions& options) {
    std::set<sim::GemmShape> shapes;
    for (const sim::PlanLayout& layout : sim::plan_layouts(model, cluster, options)) {
        for (const auto& gemm :
             sim::layer_linear_gemms(model.shape, layout.microbatch_size, layout.tp))
            shapes.insert(gemm.shape);
        for (const auto& gemm : sim::logits_gemms(model.shape, layout.microbatch_size, layout.tp))
            shapes.insert(gemm.shape);
    }
    fmt::print("m,n,k\n");
    for (const sim::GemmShape& shape : shapes)
        fmt::print("{},{},{}\n", shape.m, shape.n, shape.k);
}

}  // namespace pipelens::cli
