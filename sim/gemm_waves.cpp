// Wave quantization of a layer's linear GEMMs (gemm_waves.hpp).
#include "sim/gemm_waves.hpp"

#include <algorithm>

namespace pipelens::sim {
namespace {

constexpr std::int64_t kTileRows = 256, kTileColumns = 128;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

double oriented_efficiency(std::int64_t m, std::int64_t n, int sms) {
    const std::int64_t tiles = ceil_div(m, kTileRows) * ceil_div(n, kTileColumns);
    const std::int64_t slots = ceil_div(tiles, sms) * sms * kTileRows * kTileColumns;
    return static_cast<double>(m) * static_cast<double>(n) / static_cast<double>(slots);
}

// One GEMM of an M x K by K x N product: its FLOPs, added to `flops`, and over its efficiency,
// added to `quantized`.
void add_gemm(std::int64_t m, std::int64_t n, std::int64_t k, int sms, double& flops,
              double& quantized) {
    const double work =
        2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    flops += work;
    quantized += work / wave_efficiency(m, n, sms);
}

}  // namespace

double wave_efficiency(std::int64_t m, std::int64_t n, int sms) {
    return std::max(oriented_efficiency(m, n, sms), oriented_efficiency(n, m, sms));
}

LayerGemmWaves layer_gemm_waves(const GptShape& shape, std::int64_t microbatch_size, int tp,
                                int sms) {
    LayerGemmWaves waves;
    for (const PassGemm& gemm : layer_linear_gemms(shape, microbatch_size, tp)) {
        double& flops = gemm.pass == GemmPass::forward ? waves.forward_flops
                        : gemm.pass == GemmPass::input ? waves.input_flops
                                                       : waves.weight_flops;
        double& quantized = gemm.pass == GemmPass::forward ? waves.forward_quantized
                            : gemm.pass == GemmPass::input ? waves.input_quantized
                                                           : waves.weight_quantized;
        add_gemm(gemm.shape.m, gemm.shape.n, gemm.shape.k, sms, flops, quantized);
    }
    return waves;
}

}  // namespace pipelens::sim
