// Wave quantization of a transformer layer's matrix multiplies: a GEMM's M x N output is cut into
// 256 x 128 tiles, one thread block each, and a GPU runs one such block per SM at a time, so the
// tiles run in waves of as many as it has SMs and the last wave may leave SMs idle (NVIDIA's
// Matrix Multiplication Background User's Guide, "Wave Quantization", with the A100's 108 SMs).
//
// Invariants: an efficiency is the useful share of the waves' tile slots, in (0, 1]; the tile
// takes whichever orientation over M and N quantizes less; a layer's GEMMs are layer_gemms.hpp's.
#pragma once

#include <cstdint>

#include "sim/layer_gemms.hpp"

namespace pipelens::sim {

// The useful share of the tile slots an M x N output takes on `sms` SMs.
double wave_efficiency(std::int64_t m, std::int64_t n, int sms);

// One layer's linear GEMM FLOPs per pass, and the same work as the waves make it take (FLOPs
// over each GEMM's efficiency): forward, input gradient, weight gradient.
struct LayerGemmWaves {
    double forward_flops = 0, input_flops = 0, weight_flops = 0;
    double forward_quantized = 0, input_quantized = 0, weight_quantized = 0;
};
LayerGemmWaves layer_gemm_waves(const GptShape& shape, std::int64_t microbatch_size, int tp,
                                int sms);

}  // namespace pipelens::sim
