// Memory per GPU of a GPT-style transformer trained with tensor (t), pipeline (p) and data (d)
// parallelism: the closed forms a planner ranks layouts with and the simulator's per-stage
// memory is checked against.
//
// - Parameters (Megatron's count): a layer holds 12h^2 + 13h (attention 4h^2 + 4h, MLP
//   8h^2 + 5h, two layer norms 4h), the model adds the word (V x h) and position (s x h)
//   embeddings and a final layer norm (2h). A tensor-parallel shard holds 1/t of what the
//   parallel layers split (12h^2 + 7h per layer, the word embedding) and the rest whole
//   (training_plan.cpp's rank_parameters).
// - Weights, gradients and optimizer state under mixed-precision Adam: 18 bytes per parameter
//   (16-bit weights 2, fp32 gradients 4, fp32 master weights, momentum and variance 12); with
//   ZeRO-1 (Megatron's distributed optimizer) the 12 bytes of optimizer state are split over
//   the d data-parallel ranks: 6 + 12/d.
// - Activations per layer and microbatch at 16-bit precision (Korthikanti et al., 2022,
//   table 2), s sequence, b microbatch size, h hidden, a heads:
//     no recompute         sbh(10 + 24/t + 5as/(ht));   with sequence parallel sbh(34 + 5as/h)/t
//     selective recompute  sbh(10 + 24/t);              with sequence parallel 34 sbh/t
//     full recompute       2sbh (each layer's input);   with sequence parallel 2sbh/t
//   Fused (flash) attention never holds the a s^2 b scores, their softmax or dropout mask (the
//   5as/h term): with it, no recompute keeps what selective recompute keeps.
//
// Invariants: every figure is in bytes, non-negative, computed in doubles (a 1T-parameter model
// overflows no product) and rounded once at the end; a figure past 2^62 bytes (4 EiB, far beyond
// any GPU) is refused with std::overflow_error rather than rounded (which wrapped to 0 B, a
// layout that "fits").
#pragma once

#include <cstdint>

namespace pipelens::sim {

enum class Recompute { none, selective, full };
// How attention runs: fused in one kernel that never writes the s x s scores to GPU memory
// (FlashAttention, PyTorch's scaled_dot_product_attention, Transformer Engine; recomputing them
// in the backward), or unfused (Q K^T, softmax, dropout and P V as separate kernels over the
// whole score tensor, as Megatron-LM ran before fused attention).
enum class Attention { flash, unfused };

struct GptShape {
    std::int64_t layers = 0;
    std::int64_t hidden = 0;
    std::int64_t heads = 0;
    std::int64_t sequence = 0;
    std::int64_t vocabulary = 0;
};

// `bytes` rounded, or std::overflow_error naming `what` past 2^62.
std::int64_t rounded_bytes(double bytes, const char* what);

// All the model's parameters.
double gpt_parameter_count(const GptShape& shape);

// One transformer layer's parameters.
double gpt_layer_parameter_count(std::int64_t hidden);

// Bytes of weights, gradients and optimizer state for `parameters` held by one GPU.
std::int64_t weight_and_optimizer_bytes(double parameters, int data_parallel, bool zero1);
// The same for weights of `weight_element_bytes`: those, fp32 gradients (4) and the optimizer
// state, fp32 master weights, momentum and variance (12) for 16-bit weights, or momentum and
// variance alone (8) for fp32 ones, which are their own master; ZeRO-1 splits the state over
// the data-parallel ranks. 18 (6 + 12/d) for 2-byte weights, 16 (8 + 8/d) for 4-byte ones.
std::int64_t weight_and_optimizer_bytes(double parameters, int data_parallel, bool zero1,
                                        int weight_element_bytes);

// Bytes one layer keeps from a microbatch's forward to its backward, on one GPU.
std::int64_t layer_activation_bytes(const GptShape& shape, std::int64_t microbatch_size,
                                    int tensor_parallel, Recompute recompute,
                                    bool sequence_parallel, Attention attention);

}  // namespace pipelens::sim
