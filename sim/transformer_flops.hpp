// FLOP counts of one transformer layer for one microbatch, as the Zero Bubble paper (Qi et al.,
// 2023, table 1) gives them: forward sbh(24h + 4s), input gradient ("B" there, I here)
// sbh(24h + 8s), weight gradient sbh(24h), with s the sequence length, b the microbatch size
// and h the hidden size. Memory per layer and microbatch follows Korthikanti et al. (2022):
// sbh(34 + 5as/h) bytes at 16-bit precision, a the number of heads.
#pragma once

#include <cstdint>

#include "engine/experiment/experiment.hpp"

namespace pipelens::sim {

struct LayerFlops {
    double forward = 0;
    double input_gradient = 0;
    double weight_gradient = 0;
};

LayerFlops transformer_layer_flops(const TransformerSpec& spec);

// The output layer's logits for one microbatch, in each of F, I and W: 2 s b h V (0 without a
// vocabulary).
double output_layer_flops(const TransformerSpec& spec);

// Nanoseconds to run `flops` at the spec's achieved TFLOP/s.
std::int64_t flops_to_ns(double flops, const TransformerSpec& spec);

// Bytes of the hidden states crossing a stage boundary per microbatch: s * b * h * dtype.
std::int64_t boundary_activation_bytes(const TransformerSpec& spec);

// Bytes one layer keeps from its forward until its backward, per microbatch.
std::int64_t layer_held_activation_bytes(const TransformerSpec& spec);

// Layers of each stage: layers_per_stage as given, or `layers` split as evenly as possible
// with the earlier stages taking the remainder.
std::vector<int> layers_of_stages(const TransformerSpec& spec, int stage_count);

}  // namespace pipelens::sim
