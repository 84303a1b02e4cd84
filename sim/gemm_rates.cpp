// Reading measured GEMM rates (gemm_rates.hpp).
#include "sim/gemm_rates.hpp"

#include <charconv>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace pipelens::sim {
namespace {

std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> fields(1);
    for (const char c : line) {
        if (c == ',')
            fields.emplace_back();
        else if (c != ' ' && c != '\t' && c != '\r')
            fields.back() += c;
    }
    return fields;
}

std::int64_t positive_size(const std::string& text, const std::string& where, const char* name) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value <= 0)
        throw GemmRateError(
            fmt::format("{}: {}: \"{}\" is not a positive whole number", where, name, text));
    return value;
}

double positive_rate(const std::string& text, const std::string& where) {
    double value = 0;
    try {
        std::size_t used = 0;
        value = std::stod(text, &used);
        if (used != text.size())
            value = -1;
    } catch (const std::exception&) {
        value = -1;
    }
    if (!std::isfinite(value) || value <= 0)
        throw GemmRateError(
            fmt::format("{}: tflops: \"{}\" is not a positive TFLOP/s figure", where, text));
    return value;
}

}  // namespace

GemmRates GemmRates::parse(std::istream& in, const std::string& source) {
    GemmRates rates;
    rates.source_ = source;
    std::string line;
    int number = 0;
    bool header = false;
    while (std::getline(in, line)) {
        ++number;
        const std::vector<std::string> fields = split_fields(line);
        if (fields.size() == 1 && fields[0].empty())
            continue;  // a blank line
        const std::string where = fmt::format("{}:{}", source, number);
        if (!header) {
            if (fields != std::vector<std::string>{"m", "n", "k", "tflops"})
                throw GemmRateError(fmt::format(
                    "{}: the header must be m,n,k,tflops (plan --gemm-shapes lists the shapes)",
                    where));
            header = true;
            continue;
        }
        if (fields.size() != 4)
            throw GemmRateError(
                fmt::format("{}: {} fields, m,n,k,tflops are 4", where, fields.size()));
        const GemmShape shape{positive_size(fields[0], where, "m"),
                              positive_size(fields[1], where, "n"),
                              positive_size(fields[2], where, "k")};
        if (!rates.rates_.emplace(shape, positive_rate(fields[3], where)).second)
            throw GemmRateError(fmt::format("{}: {} x {} x {} is measured twice", where, shape.m,
                                            shape.n, shape.k));
    }
    if (!header)
        throw GemmRateError(fmt::format("{}: empty; the header m,n,k,tflops comes first", source));
    return rates;
}

double GemmRates::tflops(const GemmShape& shape) const {
    const auto found = rates_.find(shape);
    if (found == rates_.end())
        throw GemmRateError(
            fmt::format("{} has no rate for the {} x {} x {} GEMM (m x n x k); `pipelens plan ... "
                        "--gemm-shapes` lists every shape the plan prices",
                        source_, shape.m, shape.n, shape.k));
    return found->second;
}

PassFlops flops_at_measured_rates(const std::vector<PassGemm>& gemms, const GemmRates& rates,
                                  double base_tflops) {
    PassFlops flops;
    for (const PassGemm& gemm : gemms)
        flops.of(gemm.pass) += gemm.shape.flops() * base_tflops / rates.tflops(gemm.shape);
    return flops;
}

}  // namespace pipelens::sim
