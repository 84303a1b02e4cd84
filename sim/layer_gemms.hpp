// The matrix multiplies a GPT layer and its output layer run on one of tp GPUs, by pass: the one
// list wave quantization (gemm_waves.hpp) and measured rates (gemm_rates.hpp) both price.
//
// Invariants: a layer's GEMMs are its four linear ones (QKV h -> 3h/tp, attention output
// h/tp -> h, MLP up h -> 4h/tp, MLP down 4h/tp -> h), each run forward (tokens x inner by
// inner x outer), for the input gradient (tokens x outer by outer x inner) and for the weight
// gradient (inner x tokens by tokens x outer), tokens = s b; their FLOPs per pass are
// 24 s b h^2 / tp. The attention's own products (Q K^T, P V) are not among them.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/training_memory.hpp"

namespace pipelens::sim {

// An m x k by k x n product.
struct GemmShape {
    std::int64_t m = 0, n = 0, k = 0;
    auto operator<=>(const GemmShape&) const = default;
    double flops() const {
        return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    }
};

enum class GemmPass { forward, input, weight };

struct PassGemm {
    GemmPass pass;
    GemmShape shape;
};

// The layer's twelve: four GEMMs, three passes each.
std::vector<PassGemm> layer_linear_gemms(const GptShape& shape, std::int64_t microbatch_size,
                                         int tp);
// The output layer's logits, tokens x h by h x V/tp, in its three passes.
std::vector<PassGemm> logits_gemms(const GptShape& shape, std::int64_t microbatch_size, int tp);

// FLOPs per pass.
struct PassFlops {
    double forward = 0, input = 0, weight = 0;
    double& of(GemmPass pass) {
        return pass == GemmPass::forward ? forward : pass == GemmPass::input ? input : weight;
    }
};

}  // namespace pipelens::sim
