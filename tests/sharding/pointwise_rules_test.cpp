// Pointwise ops against upstream's single-dim partial rules (_pointwise_ops.py, 2026): inputs
// that already match a rule on a mesh dim keep their placements there and the output takes the
// rule's Partial at no cost; where none matches, the op follows one input as before.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "engine/sharding/op_text.hpp"
#include "engine/sharding/sharding_propagation.hpp"

namespace pipelens::sharding {
namespace {

const DeviceMesh tp4 = parse_device_mesh("tp=4");
const DeviceMesh dp2tp2 = parse_device_mesh("dp=2,tp=2");

// _pointwise_ops.py's single-dim rules of 2026: inputs that already match a rule on a mesh dim
// keep their placements there and the output takes the rule's Partial, at no cost. These once
// all-reduced because the op followed the first (replicated) input.
TEST(ShardingPartials, InputsMatchingAPointwiseRuleKeepTheirPartial) {
    const auto chosen = [](const std::string& call, const DeviceMesh& mesh) {
        const ShardingDecision decision = propagate(parse_op_call(call, mesh));
        return fmt::format("{} total {}", to_string(decision.chosen_spec()),
                           decision.chosen_spec().total_cost());
    };
    // mul: a partial sum or mean passes through either operand beside a replicated one.
    EXPECT_EQ(chosen("aten.mul(f32[8,16](R), f32[8,16](P(sum)))", tp4),
              "(R, P(sum)) -> P(sum) total 0");
    EXPECT_EQ(chosen("aten.mul(f32[8,16](R), f32[8,16](P(avg)))", tp4),
              "(R, P(avg)) -> P(avg) total 0");
    // Non-decreasing unary ops keep a max or a min; gelu is not monotonic and all-reduces.
    EXPECT_EQ(chosen("aten.relu(f32[8,16](P(max)))", tp4), "(P(max)) -> P(max) total 0");
    EXPECT_EQ(chosen("aten.tanh(f32[4,4](P(min)))", tp4), "(P(min)) -> P(min) total 0");
    EXPECT_NE(chosen("aten.gelu(f32[4,4](P(max)))", tp4), "(P(max)) -> P(max) total 0");
    // Adding a replicated value keeps a max, a min or a mean; R + P(sum) makes the replicated
    // side a partial sum (free) rather than all-reducing the other.
    EXPECT_EQ(chosen("aten.add(f32[4,4](P(max)), f32[4,4](R))", tp4),
              "(P(max), R) -> P(max) total 0");
    EXPECT_EQ(chosen("aten.add(f32[4,4](R), f32[4,4](P(avg)))", tp4),
              "(R, P(avg)) -> P(avg) total 0");
    EXPECT_EQ(chosen("aten.add(f32[4,4](R), f32[4,4](P(sum)))", tp4),
              "(P(sum), P(sum)) -> P(sum) total 0");
    // A rule decides only the mesh dims it matches: the shard on dp is followed as before.
    EXPECT_EQ(chosen("aten.mul(f32[8,16](S(0)R), f32[8,16](S(0)P(sum)))", dp2tp2),
              "(S(0)R, S(0)P(sum)) -> S(0)P(sum) total 0");
    // A partial denominator is still all-reduced: x / (p1 + p2) is not x / p1 + x / p2.
    EXPECT_EQ(chosen("aten.div(f32[4,4](R), f32[4,4](P(sum)))", tp4).substr(0, 16),
              "(R, R) -> R tota");
}

}  // namespace
}  // namespace pipelens::sharding
