// The closed forms of training_memory.hpp.
#include "sim/training_memory.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace pipelens::sim {

std::int64_t rounded_bytes(double bytes, const char* what) {
    constexpr double kMostBytes = static_cast<double>(std::int64_t{1} << 62);
    if (!(bytes < kMostBytes))
        throw std::overflow_error(
            fmt::format("{} would be {:.3g} bytes per GPU, past 2^62 (4 EiB)", what, bytes));
    return std::llround(bytes);
}

double gpt_layer_parameter_count(std::int64_t hidden) {
    const double h = static_cast<double>(hidden);
    return 12 * h * h + 13 * h;
}

double gpt_parameter_count(const GptShape& shape) {
    const double h = static_cast<double>(shape.hidden);
    return static_cast<double>(shape.layers) * gpt_layer_parameter_count(shape.hidden) +
           static_cast<double>(shape.vocabulary + shape.sequence) * h + 2 * h;
}

std::int64_t weight_and_optimizer_bytes(double parameters, int data_parallel, bool zero1) {
    const double per_parameter = zero1 ? 6.0 + 12.0 / data_parallel : 18.0;
    return rounded_bytes(parameters * per_parameter, "the weights and optimizer state");
}

std::int64_t weight_and_optimizer_bytes(double parameters, int data_parallel, bool zero1,
                                        int weight_element_bytes) {
    const double state = weight_element_bytes >= 4 ? 8.0 : 12.0;
    const double per_parameter =
        weight_element_bytes + 4.0 + (zero1 ? state / data_parallel : state);
    return rounded_bytes(parameters * per_parameter, "the weights and optimizer state");
}

std::int64_t layer_activation_bytes(const GptShape& shape, std::int64_t microbatch_size,
                                    int tensor_parallel, Recompute recompute,
                                    bool sequence_parallel, Attention attention) {
    if (attention == Attention::flash && recompute == Recompute::none)
        recompute = Recompute::selective;  // the scores are never held
    const double s = static_cast<double>(shape.sequence);
    const double h = static_cast<double>(shape.hidden);
    const double a = static_cast<double>(shape.heads);
    const double t = tensor_parallel;
    const double sbh = s * static_cast<double>(microbatch_size) * h;
    const double attention_scores = 5 * a * s / h;  // softmax, its dropout mask and output
    double bytes = 0;
    switch (recompute) {
        case Recompute::none:
            bytes = sequence_parallel ? sbh * (34 + attention_scores) / t
                                      : sbh * (10 + 24 / t + attention_scores / t);
            break;
        case Recompute::selective:
            bytes = sequence_parallel ? 34 * sbh / t : sbh * (10 + 24 / t);
            break;
        case Recompute::full:
            bytes = sequence_parallel ? 2 * sbh / t : 2 * sbh;
            break;
    }
    return rounded_bytes(bytes, "one layer's activations");
}

}  // namespace pipelens::sim
