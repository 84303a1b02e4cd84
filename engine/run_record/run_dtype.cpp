// The run dtypes and their reference tolerances (see run_dtype.hpp for why each is what it is).
#include "engine/run_record/run_dtype.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pipelens::run_record {

const std::vector<std::string>& run_dtype_names() {
    static const std::vector<std::string> names = {"float32", "bfloat16"};
    return names;
}

bool is_run_dtype(std::string_view name) {
    const std::vector<std::string>& names = run_dtype_names();
    return std::find(names.begin(), names.end(), name) != names.end();
}

ReferenceTolerance reference_tolerance(std::string_view dtype) {
    if (dtype == "float32")
        return {kRelativeTolerance, kAbsoluteTolerance};
    if (dtype == "bfloat16")
        return {kBfloat16RelativeTolerance, kBfloat16AbsoluteTolerance};
    throw std::invalid_argument(run_dtype_problem(dtype));
}

std::string run_dtype_problem(std::string_view name) {
    if (is_run_dtype(name))
        return "";
    return fmt::format("--dtype: '{}' is not a dtype pipelens run computes in ({})", name,
                       fmt::join(run_dtype_names(), " or "));
}

}  // namespace pipelens::run_record
