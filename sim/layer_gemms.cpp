// The layer's and the output layer's GEMMs (layer_gemms.hpp).
#include "sim/layer_gemms.hpp"

namespace pipelens::sim {
namespace {

// One product, tokens x inner by inner x outer forward, in its three passes.
void add_three_passes(std::int64_t tokens, std::int64_t inner, std::int64_t outer,
                      std::vector<PassGemm>& gemms) {
    gemms.push_back({GemmPass::forward, {tokens, outer, inner}});
    gemms.push_back({GemmPass::input, {tokens, inner, outer}});
    gemms.push_back({GemmPass::weight, {inner, outer, tokens}});
}

}  // namespace

std::vector<PassGemm> layer_linear_gemms(const GptShape& shape, std::int64_t microbatch_size,
                                         int tp) {
    const std::int64_t tokens = shape.sequence * microbatch_size, h = shape.hidden;
    std::vector<PassGemm> gemms;
    add_three_passes(tokens, h, 3 * h / tp, gemms);
    add_three_passes(tokens, h / tp, h, gemms);
    add_three_passes(tokens, h, 4 * h / tp, gemms);
    add_three_passes(tokens, 4 * h / tp, h, gemms);
    return gemms;
}

std::vector<PassGemm> logits_gemms(const GptShape& shape, std::int64_t microbatch_size, int tp) {
    std::vector<PassGemm> gemms;
    add_three_passes(shape.sequence * microbatch_size, shape.hidden, shape.vocabulary / tp, gemms);
    return gemms;
}

}  // namespace pipelens::sim
