// The byte counts of step_overheads.hpp, each a sum of the reads and writes its comment lists.
#include "sim/step_overheads.hpp"

#include <cmath>
#include <stdexcept>

#include "sim/cost_model.hpp"

namespace pipelens::sim {
namespace {

constexpr double kMaskBytes = 1;  // a dropout mask element (bool)
constexpr double kFp32Bytes = 4;

double element_count(const GptShape& shape, std::int64_t microbatch_size) {
    return static_cast<double>(shape.sequence) * static_cast<double>(microbatch_size) *
           static_cast<double>(shape.hidden);
}

// S / tp: one GPU's share of the attention scores, a s^2 b.
double score_count(const GptShape& shape, std::int64_t microbatch_size, int tp) {
    const double s = static_cast<double>(shape.sequence);
    return static_cast<double>(shape.heads) * s * s * static_cast<double>(microbatch_size) / tp;
}

}  // namespace

DType parse_dtype(const std::string& text) {
    if (text == "fp32")
        return DType::fp32;
    if (text == "bf16")
        return DType::bf16;
    if (text == "fp16")
        return DType::fp16;
    throw std::invalid_argument("use fp32, bf16 or fp16");
}

const char* dtype_name(DType dtype) {
    switch (dtype) {
        case DType::fp32:
            return "fp32";
        case DType::bf16:
            return "bf16";
        case DType::fp16:
            return "fp16";
    }
    return "bf16";
}

int dtype_element_bytes(DType dtype) {
    return dtype == DType::fp32 ? 4 : 2;
}

const char* sharding_dtype(DType dtype) {
    switch (dtype) {
        case DType::fp32:
            return "f32";
        case DType::bf16:
            return "bf16";
        case DType::fp16:
            return "f16";
    }
    return "bf16";
}

double dtype_peak_tflops(double peak_16bit_tflops, DType dtype) {
    return dtype == DType::fp32 ? peak_16bit_tflops / 2 : peak_16bit_tflops;
}

PassBytes layer_memory_bound_bytes(const GptShape& shape, std::int64_t microbatch_size,
                                   TensorSplit split, DType dtype, Attention attention) {
    const int tp = split.tp;
    const double e = element_count(shape, microbatch_size);
    const double replicated = e / split.token_split();  // layer norms, residual adds
    const double scores =
        attention == Attention::flash ? 0 : score_count(shape, microbatch_size, tp);
    const double element = dtype_element_bytes(dtype);
    const double masks = (2 * replicated + scores) * kMaskBytes;
    // Forward: two layer norms (4E), two bias-dropout-residual adds (6E), bias-GeLU on the 4h
    // shard (8E/tp), the causal softmax (it reads the scores below the diagonal and writes every
    // one, zeros above: 1.5S/tp) and its dropout (2S/tp).
    const double forward = (10 * replicated + 8 * e / tp + 3.5 * scores) * element + masks;
    // Backward: layer norms read x and dy and write dx (6E), the residual adds' dropout (4E),
    // GeLU (12E/tp), the softmax reads y and dy below the diagonal and writes every dx (2S/tp),
    // its dropout (2S/tp).
    const double backward = (10 * replicated + 12 * e / tp + 4 * scores) * element + masks;
    return {forward, backward};
}

LayerPassBytes eager_layer_pass_bytes(const GptShape& shape, std::int64_t microbatch_size,
                                      TensorSplit split, DType dtype, Attention attention) {
    const int tp = split.tp;
    const double e = element_count(shape, microbatch_size);
    const double replicated = e / split.token_split();
    const double element = dtype_element_bytes(dtype);
    const bool unfused = attention == Attention::unfused;
    const double qkv_bias_add = 6 * e / tp;
    const double context_copy = unfused ? 2 * e / tp : 0;
    const double qkv_gradient_concat = unfused ? 6 * e / tp : 0;
    const double bias_gradients = 7 * e / tp + 2 * replicated;
    const double norm_gradients = 4 * replicated;
    return {(qkv_bias_add + context_copy) * element, qkv_gradient_concat * element,
            (bias_gradients + norm_gradients) * element};
}

double selective_recompute_bytes(const GptShape& shape, std::int64_t microbatch_size, int tp,
                                 DType dtype, Attention attention) {
    if (attention == Attention::flash)
        return 0;
    const double scores = score_count(shape, microbatch_size, tp);
    return 3.5 * scores * dtype_element_bytes(dtype) + scores * kMaskBytes;
}

double attention_matmul_bytes(const GptShape& shape, std::int64_t microbatch_size, int tp,
                              DType dtype) {
    const double e = element_count(shape, microbatch_size);
    return (score_count(shape, microbatch_size, tp) + 2 * e / tp) * dtype_element_bytes(dtype);
}

double attention_matmul_flops(const GptShape& shape, std::int64_t microbatch_size, int tp) {
    const double s = static_cast<double>(shape.sequence);
    return 2 * s * element_count(shape, microbatch_size) / tp;
}

PassBytes embedding_bytes(const GptShape& shape, std::int64_t microbatch_size, TensorSplit split,
                          DType dtype) {
    const double e = element_count(shape, microbatch_size);
    const double dropped = e / split.token_split();  // the dropout's share of the sequence
    const double element = dtype_element_bytes(dtype);
    const double dropout = 2 * dropped * element + dropped * kMaskBytes;
    return {3 * e * element + dropout, dropout + 3 * e * element};
}

PassBytes output_layer_bytes(const GptShape& shape, std::int64_t microbatch_size, TensorSplit split,
                             DType dtype) {
    const double e = element_count(shape, microbatch_size) / split.token_split();
    const double logits = static_cast<double>(shape.sequence) *
                          static_cast<double>(microbatch_size) *
                          static_cast<double>(shape.vocabulary) / split.tp;
    const double element = dtype_element_bytes(dtype);
    const double cast = dtype == DType::fp32 ? 0 : element + kFp32Bytes;
    const double forward_per_logit = cast + 4 + 8 + 8 + 4 + 8;
    const double backward_per_logit = 8 + cast;
    return {2 * e * element + forward_per_logit * logits,
            3 * e * element + backward_per_logit * logits};
}

double gradient_accumulation_bytes(double parameters, DType dtype) {
    return parameters * (dtype_element_bytes(dtype) + 8);
}

double dtype_gradient_accumulation_bytes(double parameters, DType dtype) {
    return parameters * 3 * dtype_element_bytes(dtype);
}

double optimizer_step_bytes(double parameters, DType dtype, bool gradients_in_dtype) {
    double per_parameter = 28 + 4;  // Adam, and the gradient norm
    if (dtype != DType::fp32)
        per_parameter += kFp32Bytes + dtype_element_bytes(dtype);  // master weights to the model
    if (dtype == DType::fp16)
        per_parameter += 2 * kFp32Bytes;  // unscale and check for inf/NaN
    if (gradients_in_dtype && dtype != DType::fp32)
        per_parameter += dtype_element_bytes(dtype) + kFp32Bytes;  // gradients cast to fp32
    return parameters * per_parameter;
}

std::int64_t memory_ns(double bytes, double gb_per_s) {
    return ceil_quotient_ns(bytes, gb_per_s, "memory-bound work");
}

}  // namespace pipelens::sim
