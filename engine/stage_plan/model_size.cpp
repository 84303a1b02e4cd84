// Parameter counts of the built-in models (see model_size.hpp), layer by layer as
// engine/runtime/model_library.cpp builds them.
#include "engine/stage_plan/model_size.hpp"

namespace pipelens::runtime {
namespace {

// Linear(in, out): a weight and a bias.
double linear(double in, double out) {
    return in * out + out;
}

// An MLP block: Linear, ReLU, Linear.
double mlp_block(double hidden) {
    return 2 * linear(hidden, hidden);
}

// A pre-norm transformer block: two LayerNorms (weight and bias each), the attention's qkv and
// projection, and the MLP's up and down.
double transformer_block(double hidden) {
    return 2 * (2 * hidden) + linear(hidden, 3 * hidden) + linear(hidden, hidden) +
           linear(hidden, 4 * hidden) + linear(4 * hidden, hidden);
}

}  // namespace

std::optional<double> builtin_parameter_count(const std::string& model, int layers, double hidden) {
    const double square = hidden * hidden;  // a layer's own matrix (example, kwargs, tied)
    if (model == "mlp")
        return layers * mlp_block(hidden);
    if (model == "example")
        return layers * (square + linear(hidden, hidden));
    if (model == "kwargs")
        return layers * mlp_block(hidden) + square;
    if (model == "transformer")
        return layers * transformer_block(hidden);
    if (model == "tied")  // mlp blocks between a projection and its transposed reuse
        return (layers >= 2 ? layers - 2 : 0) * mlp_block(hidden) + square;
    if (model == "empty")
        return static_cast<double>(layers);  // one scale each
    return std::nullopt;
}

}  // namespace pipelens::runtime
