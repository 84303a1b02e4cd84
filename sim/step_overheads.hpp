// What a GPT training step pays besides its matrix multiplies, priced from bytes moved at the
// GPU's memory bandwidth, and the element type that sets those bytes (the planner's --dtype):
//
// - memory-bound work per layer and microbatch (layer norms, the fused scale-mask-softmax,
//   dropouts, bias-GeLU, bias-dropout-residual adds), element by element as Megatron-LM's
//   kernels read and write them (the score tensor's only under unfused attention); the batched
//   attention matmuls count as matrix multiplies;
// - the first stage's embedding (word lookup, position add, dropout) and the last stage's final
//   layer norm and vocabulary-parallel cross entropy over the logits, in fp32;
// - the weight gradients accumulated into fp32 after each microbatch's backward;
// - the mixed-precision optimizer step over a GPU's parameters once per step.
//
// Invariants: every figure is bytes on one GPU (tensor-parallel shards divided by tp, what every
// tp rank repeats not divided unless sequence parallelism splits it), non-negative, in doubles;
// a dtype's element size scales every
// activation and weight byte, while dropout masks stay 1 byte and fp32 gradients and optimizer
// state stay 4 bytes in any dtype (mixed precision).
#pragma once

#include <cstdint>
#include <string>

#include "sim/training_memory.hpp"

namespace pipelens::sim {

enum class DType { fp32, bf16, fp16 };

// "fp32", "bf16" or "fp16"; std::invalid_argument for anything else.
DType parse_dtype(const std::string& text);
const char* dtype_name(DType dtype);
// Bytes per element of weights, activations and the messages that carry them: 4, 2, 2.
int dtype_element_bytes(DType dtype);
// The element type's name in engine/sharding's tensor metadata ("f32", "bf16", "f16").
const char* sharding_dtype(DType dtype);
// The dense peak a dtype runs at, from the data sheet's 16-bit dense figure: fp32 means TF32
// tensor cores (as PyTorch and Megatron-LM run fp32 matrix multiplies on A100 and H100), half
// the 16-bit figure on both data sheets (A100: 156 of 312, H100 SXM: 494.5 of 989).
double dtype_peak_tflops(double peak_16bit_tflops, DType dtype);

// Bytes moved by one pass over one microbatch.
struct PassBytes {
    double forward = 0;
    double backward = 0;
};

// How a layer's element-wise work is divided over its tensor-parallel group: the attention and
// MLP blocks' over `tp` always; under sequence parallelism (Korthikanti et al. 2022) the layer
// norms', dropouts' and residual adds' tokens over `tp` too, where without it every GPU of the
// group repeats them on the whole sequence.
struct TensorSplit {
    TensorSplit(int tp, bool sequence_parallel = false)
        : tp(tp), sequence_parallel(sequence_parallel) {}
    int tp = 1;
    bool sequence_parallel = false;
    // What the replicated E-sized work is divided by: tp under sequence parallelism, else 1.
    int token_split() const { return sequence_parallel ? tp : 1; }
};

// One transformer layer's memory-bound work for a microbatch of `microbatch_size` sequences on
// one of `tp` GPUs. With E = s b h and S = a s^2 b (the attention scores), in elements:
//   forward  10E + 8E/tp + 3.5S/tp, and dropout masks 2E + S/tp bytes;
//   backward 10E + 12E/tp + 4S/tp, and the masks read again, 2E + S/tp bytes;
// the softmax being Megatron-LM's fused causal one, which reads and differentiates only the
// scores below the diagonal but writes every one (1.5S forward, 2S backward);
// under sequence parallelism the 10E and 2E (layer norms, bias-dropout-residual adds) over tp.
// Under fused attention S is 0: the scores, their softmax and dropout never reach GPU memory.
PassBytes layer_memory_bound_bytes(const GptShape& shape, std::int64_t microbatch_size,
                                   TensorSplit split, DType dtype, Attention attention);

// Bytes moved by a layer's forward, input-gradient and weight-gradient passes.
struct LayerPassBytes {
    double forward = 0;
    double input = 0;
    double weight = 0;
};

// What an eager PyTorch 1.8 layer, as Megatron-LM ran it in 2021, moves beyond the fused kernels
// of layer_memory_bound_bytes, in kernels of their own (PlanOptions::eager_layer_passes). In
// elements, with E = s b h:
//   forward: the QKV projection's bias added by its own kernel after the matrix multiply
//     (PyTorch's linear took only 2-D inputs into addmm), 6E/tp; under unfused attention the
//     context permuted back from [b, heads, s, head] to [s, b, h] by a copy, 2E/tp;
//   input gradient: under unfused attention the q, k and v gradients concatenated into the QKV
//     projection's, 6E/tp;
//   weight gradient: each bias's gradient reduced from its output's gradient (autograd's sum
//     over a broadcast bias: QKV 3E/tp, the MLP's first 4E/tp, the two bias-dropout-residual
//     adds E each), and the two layer norms' gamma and beta gradients, whose kernel reads x and
//     dy before the input gradient's reads them again, 2E each: 7E/tp + 6E.
// Under sequence parallelism the E terms over tp, as in layer_memory_bound_bytes.
LayerPassBytes eager_layer_pass_bytes(const GptShape& shape, std::int64_t microbatch_size,
                                      TensorSplit split, DType dtype, Attention attention);

// What selective recompute repeats of a layer's forward: the softmax and its dropout over the
// attention scores, 3.5S/tp elements and S/tp mask bytes; nothing under fused attention.
double selective_recompute_bytes(const GptShape& shape, std::int64_t microbatch_size, int tp,
                                 DType dtype, Attention attention);

// One of the attention's batched matrix multiplies on one of `tp` GPUs, as unfused attention
// runs them (forward Q K^T and P V; backward dP, dV, dQ and dK): each reads or writes the GPU's
// share of the scores once (S/tp elements) and two s b h / tp operands, (S + 2E)/tp elements.
double attention_matmul_bytes(const GptShape& shape, std::int64_t microbatch_size, int tp,
                              DType dtype);
// The FLOPs of one of them: 2 s^2 b h / tp.
double attention_matmul_flops(const GptShape& shape, std::int64_t microbatch_size, int tp);

// The first stage's embedding: forward reads the word rows and the position rows, writes their
// sum, and its dropout reads it and writes the result and a mask (5E elements, E mask bytes);
// backward the dropout's gradient (2E, E mask bytes) and the scatter-add of the word rows'
// gradient (read E, read and write the rows, 3E). Under sequence parallelism the sum is
// scattered over the sequence before the dropout, so the dropout's 2E and mask go over tp.
PassBytes embedding_bytes(const GptShape& shape, std::int64_t microbatch_size, TensorSplit split,
                          DType dtype);

// The last stage past its layers: the final layer norm (forward 2E, backward 3E elements of
// the dtype) and the vocabulary-parallel cross entropy over the tp-th of the logits,
// L = s b V / tp, in fp32 as Megatron-LM runs it (the logits cast with .float() unless
// --fp16-lm-cross-entropy; PyTorch's autocast runs cross entropy in fp32 too). Per logit,
// forward: the cast (read the dtype, write 4 bytes; none in fp32), the maximum (read 4), the
// subtraction in place (8), the exponential in place (8), the sum (4) and the division in place
// that keeps the softmax for backward (8); backward: the product with the loss's gradient in
// place (8) and the cast back to the dtype (4 + dtype; none in fp32).
// Under sequence parallelism the final layer norm's 2E and 3E go over tp.
PassBytes output_layer_bytes(const GptShape& shape, std::int64_t microbatch_size, TensorSplit split,
                             DType dtype);

// After each microbatch's backward, each weight gradient is added to its fp32 accumulator:
// read the new gradient (dtype bytes) and read and write the accumulator (8 bytes).
double gradient_accumulation_bytes(double parameters, DType dtype);
// Where the gradients stay in the model's dtype (Megatron-LM's fp16 runs of 2021, PyTorch's
// autograd adding into each weight's .grad): read the accumulated and the new gradient, write
// the sum, three elements of the dtype.
double dtype_gradient_accumulation_bytes(double parameters, DType dtype);

// The optimizer step over `parameters`, as Megatron-LM's mixed-precision optimizer runs it:
// Adam reads the fp32 gradient, master weight, momentum and variance (16 bytes) and writes the
// last three (12); the gradient norm for clipping (its default --clip-grad 1.0) reads each
// gradient once (4; the rescaling that follows only when the norm is over the limit is not
// priced). In 16-bit the master weights are then copied to the model's (read 4, write 2); fp16
// also unscales the gradients by the loss scale while checking them for inf/NaN (read and write
// 4); gradients kept in the dtype are first cast to fp32 (read 2, write 4). So 32 bytes per
// parameter in fp32, 38 in bf16, 46 in fp16, and 6 more with `gradients_in_dtype`.
double optimizer_step_bytes(double parameters, DType dtype, bool gradients_in_dtype);

// Nanoseconds to move `bytes` at `gb_per_s` (10^9 bytes per second), rounded up;
// std::overflow_error past the simulator's range (ceil_ns).
std::int64_t memory_ns(double bytes, double gb_per_s);

}  // namespace pipelens::sim
