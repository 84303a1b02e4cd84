// Measured GEMM rates in the planner (sim/gemm_rates.hpp, sim/layer_gemms.hpp): the file's
// format and its errors, the GEMMs a layer runs, and that a plan prices each GEMM at its own rate
// and nothing else differently.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>
#include <sstream>

#include "sim/gemm_rates.hpp"
#include "sim/training_plan.hpp"
#include "tests/sim/plan_specs.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::sim {
namespace {

using testing::cluster_of;
using testing::plain_options;
using testing::small_model;

GemmRates parse_text(const std::string& text) {
    std::istringstream in(text);
    return GemmRates::parse(in, "rates.csv");
}

std::string parse_error(const std::string& text) {
    return pipelens::testing::thrown_message<GemmRateError>([&] { parse_text(text); }, "");
}

TEST(GemmRates, ReadsOneRatePerShapeAndNamesTheLineOfABadOne) {
    const GemmRates rates = parse_text("m,n,k,tflops\n512, 1536, 1024, 410.5\n\n2,3,4,1e2\n");
    EXPECT_EQ(rates.size(), 2u);
    EXPECT_EQ(rates.tflops({512, 1536, 1024}), 410.5);
    EXPECT_EQ(rates.tflops({2, 3, 4}), 100);
    EXPECT_EQ(parse_error(""), "rates.csv: empty; the header m,n,k,tflops comes first");
    EXPECT_EQ(parse_error("m,n,k\n"),
              "rates.csv:1: the header must be m,n,k,tflops "
              "(plan --gemm-shapes lists the shapes)");
    EXPECT_EQ(parse_error("m,n,k,tflops\n1,2,3\n"), "rates.csv:2: 3 fields, m,n,k,tflops are 4");
    EXPECT_EQ(parse_error("m,n,k,tflops\n1,2,0,5\n"),
              "rates.csv:2: k: \"0\" is not a positive whole number");
    EXPECT_EQ(parse_error("m,n,k,tflops\n1,2,3,-5\n"),
              "rates.csv:2: tflops: \"-5\" is not a positive TFLOP/s figure");
    EXPECT_EQ(parse_error("m,n,k,tflops\n1,2,3,nan\n"),
              "rates.csv:2: tflops: \"nan\" is not a positive TFLOP/s figure");
    EXPECT_EQ(parse_error("m,n,k,tflops\n1,2,3,5\n1,2,3,6\n"),
              "rates.csv:3: 1 x 2 x 3 is measured twice");
    try {
        rates.tflops({9, 9, 9});
        ADD_FAILURE() << "a shape not measured has no rate";
    } catch (const GemmRateError& error) {
        EXPECT_EQ(
            std::string(error.what()).rfind("rates.csv has no rate for the 9 x 9 x 9 GEMM", 0), 0u)
            << error.what();
    }
}

TEST(LayerGemms, FourLinearGemmsInThreePassesMakeTheLayersMatrixWork) {
    const GptShape shape{8, 1024, 16, 512, 1000};
    const std::vector<PassGemm> gemms = layer_linear_gemms(shape, 2, 2);
    ASSERT_EQ(gemms.size(), 12u);
    PassFlops flops;
    for (const PassGemm& gemm : gemms)
        flops.of(gemm.pass) += gemm.shape.flops();
    const double each_pass = 24.0 * 512 * 2 * 1024 * 1024 / 2;  // 24 s b h^2 / tp
    EXPECT_EQ(flops.forward, each_pass);
    EXPECT_EQ(flops.input, each_pass);
    EXPECT_EQ(flops.weight, each_pass);
    // QKV forward: the 1024 tokens by h into 3h/tp.
    EXPECT_EQ(gemms.front().shape, (GemmShape{1024, 1536, 1024}));
    const std::vector<PassGemm> logits = logits_gemms(shape, 2, 2);
    ASSERT_EQ(logits.size(), 3u);
    EXPECT_EQ(logits[0].shape, (GemmShape{1024, 500, 1024}));  // tokens x h by h x V/tp
    EXPECT_EQ(logits[2].shape, (GemmShape{1024, 500, 1024}));  // h x tokens by tokens x V/tp
}

// A rate for every shape the layout prices, `tflops` each, and `slow` for one of them.
std::shared_ptr<const GemmRates> rates_for(const ModelSpec& model, const PlanLayout& layout,
                                           double tflops, const GemmShape* slow = nullptr) {
    std::set<GemmShape> shapes;
    for (const PassGemm& gemm : layer_linear_gemms(model.shape, layout.microbatch_size, layout.tp))
        shapes.insert(gemm.shape);
    for (const PassGemm& gemm : logits_gemms(model.shape, layout.microbatch_size, layout.tp))
        shapes.insert(gemm.shape);
    std::ostringstream text;
    text << "m,n,k,tflops\n";
    for (const GemmShape& shape : shapes)
        text << shape.m << ',' << shape.n << ',' << shape.k << ','
             << (slow != nullptr && shape == *slow ? tflops / 2 : tflops) << '\n';
    std::istringstream in(text.str());
    return std::make_shared<const GemmRates>(GemmRates::parse(in, "rates.csv"));
}

TEST(GemmRates, APlanPricesEachGemmAtItsMeasuredRate) {
    const ModelSpec model = small_model();  // 8 layers, h 1024, s 512, V 1000
    const PlanLayout layout{1, 1, 1, ScheduleKind::gpipe, 1, 2, 8};
    ClusterSpec plain = cluster_of(1, 2000);  // 312 x 0.5 = 156 TFLOP/s
    plain.streaming_multiprocessors = 108;
    const PlanResult without = evaluate_layout(layout, model, plain, plain_options());
    // Every shape measured at the achieved rate: the same step, wave quantization included in
    // the measurement rather than added.
    ClusterSpec measured = plain;
    measured.gemm_rates = rates_for(model, layout, 156);
    const PlanResult at_base = evaluate_layout(layout, model, measured, plain_options());
    ClusterSpec no_waves = plain;
    no_waves.streaming_multiprocessors = 0;
    EXPECT_EQ(at_base.step_time_ns,
              evaluate_layout(layout, model, no_waves, plain_options()).step_time_ns);
    EXPECT_EQ(at_base.breakdown.wave_quantization_ns, 0);
    EXPECT_GT(without.breakdown.wave_quantization_ns, 0);
    // QKV's forward and weight-gradient shape (1024 x 3072 x 1024 both, as s b = h here) at half
    // the rate: each of 8 layers x 8 microbatches takes their FLOPs once more at 156 TFLOP/s;
    // nothing else moves.
    const GemmShape qkv{1024, 3072, 1024};
    measured.gemm_rates = rates_for(model, layout, 156, &qkv);
    const PlanResult slow = evaluate_layout(layout, model, measured, plain_options());
    const double extra_ns = 2 * 8 * 8 * qkv.flops() / 156e3;
    EXPECT_NEAR(static_cast<double>(slow.breakdown.compute_ns - at_base.breakdown.compute_ns),
                extra_ns, 8);
    EXPECT_EQ(slow.breakdown.memory_bound_ns, at_base.breakdown.memory_bound_ns);
    // A shape left out is an error naming it.
    measured.gemm_rates = std::make_shared<const GemmRates>(parse_text("m,n,k,tflops\n1,1,1,1\n"));
    EXPECT_THROW(evaluate_layout(layout, model, measured, plain_options()), GemmRateError);
}

}  // namespace
}  // namespace pipelens::sim
