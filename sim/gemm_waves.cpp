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
    const std::int64_t tokens = shape.sequence * microbatch_size, h = shape.hidden;
    // Forward tokens x inner -> tokens x outer; per GPU: QKV (h -> 3h/tp), attention output
    // (h/tp -> h), MLP up (h -> 4h/tp), MLP down (4h/tp -> h).
    const std::int64_t shapes[4][2] = {
        {h, 3 * h / tp}, {h / tp, h}, {h, 4 * h / tp}, {4 * h / tp, h}};
    LayerGemmWaves waves;
    for (const auto& [inner, outer] : shapes) {
        add_gemm(tokens, outer, inner, sms, waves.forward_flops, waves.forward_quantized);
        add_gemm(tokens, inner, outer, sms, waves.input_flops, waves.input_quantized);
        add_gemm(inner, outer, tokens, sms, waves.weight_flops, waves.weight_quantized);
    }
    return waves;
}

}  // namespace pipelens::sim
