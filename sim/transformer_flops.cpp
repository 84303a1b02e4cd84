// Transformer layer costs from FLOP counts. Doubles carry the counts: a layer of h = 16384,
// s = 32768 is ~1e15 FLOP per microbatch, past what int64 products of the factors keep safely.
#include "sim/transformer_flops.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/cost_model.hpp"

namespace pipelens::sim {
namespace {

// A time or byte count from doubles, refused past 2^62 (rather than converted, which is
// undefined and came out as 0 ns or a negative step).
std::int64_t within_range(double value, const char* what, const TransformerSpec& spec) {
    if (!(value < static_cast<double>(kLatestSimulatedNs)))
        throw std::overflow_error(fmt::format(
            "a transformer of hidden {}, sequence {} and microbatch size {} needs {:g} {}, past "
            "2^62: a model size is out of any machine's range",
            spec.hidden, spec.sequence, spec.microbatch_size, value, what));
    return std::llround(value);
}

}  // namespace

LayerFlops transformer_layer_flops(const TransformerSpec& spec) {
    const double s = spec.sequence;
    const double b = spec.microbatch_size;
    const double h = spec.hidden;
    const double sbh = s * b * h;
    return {sbh * (24 * h + 4 * s), sbh * (24 * h + 8 * s), sbh * (24 * h)};
}

double output_layer_flops(const TransformerSpec& spec) {
    return 2.0 * spec.sequence * spec.microbatch_size * spec.hidden * spec.vocabulary;
}

std::int64_t flops_to_ns(double flops, const TransformerSpec& spec) {
    return within_range(flops / (spec.device_tflops * 1e3), "ns for one pass", spec);
}

std::int64_t boundary_activation_bytes(const TransformerSpec& spec) {
    return within_range(static_cast<double>(spec.sequence) * spec.microbatch_size * spec.hidden *
                            dtype_bytes(spec.dtype),
                        "bytes for one activation", spec);
}

std::int64_t layer_held_activation_bytes(const TransformerSpec& spec) {
    const double s = spec.sequence;
    const double sbh = s * spec.microbatch_size * spec.hidden;
    const double at_16_bit = sbh * (34.0 + 5.0 * spec.heads * s / spec.hidden);
    return within_range(at_16_bit * dtype_bytes(spec.dtype) / 2.0, "bytes of activations", spec);
}

std::vector<int> layers_of_stages(const TransformerSpec& spec, int stage_count) {
    if (!spec.layers_per_stage.empty())
        return spec.layers_per_stage;
    std::vector<int> layers(stage_count, spec.layers / stage_count);
    for (int stage = 0; stage < spec.layers % stage_count; ++stage)
        ++layers[stage];
    return layers;
}

}  // namespace pipelens::sim
