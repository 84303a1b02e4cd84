// The sharding model against upstream DTensor: printed forms, strategy lists in upstream's
// order for the listed ops on 1-D and 2-D meshes (counts as upstream's test_op_strategy
// expects them), costs worked by hand from the alpha-beta formulas, the choice with its tie
// rules, readable errors, whole blocks, and the layout drawing.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "engine/sharding/einsum_strategy.hpp"
#include "engine/sharding/op_text.hpp"
#include "engine/sharding/redistribute_cost.hpp"
#include "engine/sharding/sharding_blocks.hpp"
#include "engine/sharding/sharding_visualize.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

const DeviceMesh tp4 = parse_device_mesh("tp=4");
const DeviceMesh dp2tp2 = parse_device_mesh("dp=2,tp=2");

std::vector<std::string> texts(const OpStrategy& strategy) {
    std::vector<std::string> result;
    for (const OpSpec& spec : strategy.strategies)
        result.push_back(to_string(spec));
    return result;
}

OpStrategy strategies_of(const std::string& call, const DeviceMesh& mesh) {
    return propagate(parse_op_call(call, mesh)).strategy;
}

TEST(ShardingText, PlacementsSpecsMeshesAndSchemasPrintAsUpstream) {
    EXPECT_EQ(to_string(Placement::shard(0)), "S(0)");
    EXPECT_EQ(to_string(Placement::replicate()), "R");
    EXPECT_EQ(to_string(Placement::partial()), "P(sum)");
    EXPECT_EQ(to_string(Placement::partial("avg")), "P(avg)");
    EXPECT_EQ(to_string(Placement::strided_shard(0, 2)), "_S(0, 2)");
    EXPECT_EQ(to_string(dp2tp2), "DeviceMesh((dp=2, tp=2), 'cuda', stride=(2, 1))");
    EXPECT_EQ(to_string(tp4), "DeviceMesh((tp=4), 'cuda', stride=(1,))");
    EXPECT_EQ(to_string(parse_tensor_spec("f32[1024,512](S(1))", tp4)),
              "Spec(f32[1024, 512](S(1)))");
    EXPECT_EQ(to_string(parse_tensor_spec("i64[16,2048](S(0)R)", dp2tp2)),
              "Spec(i64[16, 2048](S(0)R))");
    EXPECT_EQ(to_string(parse_tensor_spec("f32[8,8](S(0)S(0))", dp2tp2)),
              "Spec(f32[8, 8](S(0)[0]S(0)[1]))");
    EXPECT_EQ(to_string(parse_op_call("aten.mm(f32[1024,512](S(1)), f32[512,256](S(0)))", tp4)),
              "aten.mm.default(Spec(f32[1024, 512](S(1))), Spec(f32[512, 256](S(0)))) on "
              "DeviceMesh((tp=4), 'cuda', stride=(1,)))");
    EXPECT_EQ(to_string(parse_op_call("aten.sum(f32[8,16](S(1)), [1], True)", tp4)),
              "aten.sum.dim_IntList(Spec(f32[8, 16](S(1))), [1], True) on DeviceMesh((tp=4), "
              "'cuda', stride=(1,)))");
    EXPECT_EQ(parse_placements("P(avg)S(1)").size(), 2u);
    const OpStrategy mm = strategies_of("aten.mm(f32[8,8](R), f32[8,8](R))", tp4);
    OpStrategy first;
    first.strategies = {mm.strategies[2]};
    EXPECT_EQ(to_string(first), "OpStrategy[(S(0), R) -> S(0)] @ mesh: (4,)");
    EXPECT_EQ(to_string(TupleStrategy{{first, first}}),
              "TupleStrategy(OpStrategy[(S(0), R) -> S(0)] @ mesh: (4,), OpStrategy[(S(0), R) -> "
              "S(0)] @ mesh: (4,))");
}

TEST(ShardingStrategies, EinsumCountsMatchUpstream) {
    EXPECT_EQ(einsum_strategies("mk,kn->mn", tp4).size(), 4u);
    EXPECT_EQ(einsum_strategies("mk,kn->mn", dp2tp2).size(), 16u);
    EXPECT_EQ(einsum_strategies("bmk,bkn->bmn", tp4).size(), 5u);
    EXPECT_EQ(einsum_strategies("bmk,bkn->bmn", dp2tp2).size(), 25u);
    EXPECT_EQ(einsum_strategies("bmk,kn->bmn", dp2tp2).size(), 25u);
    EXPECT_EQ(einsum_strategies("bmk,k->bm", dp2tp2).size(), 16u);
    EXPECT_EQ(einsum_strategies("abcd,abcd->abcd", tp4).size(), 5u);
    EXPECT_EQ(einsum_strategies("bcd,abcd->abcd", tp4).size(), 5u);
    EXPECT_EQ(einsum_strategies("abcd,abcd->abcd", tp4, true).size(), 6u);
    const EinsumDims dims = parse_einsum("abd,bf->abfd");
    EXPECT_EQ(dims.batch, "b");
    EXPECT_EQ(dims.lhs_only, "ad");
    EXPECT_EQ(dims.rhs_only, "f");
}

TEST(ShardingStrategies, MmOnOneAndTwoDimensionalMeshesInUpstreamOrder) {
    EXPECT_EQ(texts(strategies_of("aten.mm(f32[8,8](R), f32[8,8](R))", tp4)),
              (std::vector<std::string>{"(R, R) -> R", "(S(1), S(0)) -> P(sum)",
                                        "(S(0), R) -> S(0)", "(R, S(1)) -> S(1)"}));
    const auto two_d = texts(strategies_of("aten.mm(f32[8,8](RR), f32[8,8](RR))", dp2tp2));
    ASSERT_EQ(two_d.size(), 16u);
    EXPECT_EQ(two_d[0], "(RR, RR) -> RR");
    EXPECT_EQ(two_d[1], "(RS(1), RS(0)) -> RP(sum)");
    EXPECT_EQ(two_d[5], "(S(1)S(1), S(0)S(0)) -> P(sum)P(sum)");
    EXPECT_EQ(two_d[11], "(S(0)R, RS(1)) -> S(0)S(1)");
    EXPECT_EQ(two_d[15], "(RR, S(1)S(1)) -> S(1)S(1)");
    // A 2-row left input cannot be split four ways: (S(0), R) -> S(0) is left out.
    EXPECT_EQ(
        texts(strategies_of("aten.mm(f32[2,8](R), f32[8,12](R))", tp4)),
        (std::vector<std::string>{"(R, R) -> R", "(S(1), S(0)) -> P(sum)", "(R, S(1)) -> S(1)"}));
    EXPECT_EQ(strategies_of("aten.mm(f32[2,8](RR), f32[8,12](RR))", dp2tp2).strategies.size(), 15u);
}

TEST(ShardingStrategies, BmmAddmmAndBaddbmm) {
    EXPECT_EQ(
        texts(strategies_of("aten.bmm(f32[4,8,8](R), f32[4,8,8](R))", tp4)),
        (std::vector<std::string>{"(R, R) -> R", "(S(0), S(0)) -> S(0)", "(S(2), S(1)) -> P(sum)",
                                  "(S(1), R) -> S(1)", "(R, S(2)) -> S(2)"}));
    EXPECT_EQ(strategies_of("aten.bmm(f32[4,8,8](RR), f32[4,8,8](RR))", dp2tp2).strategies.size(),
              25u);
    // The bias follows the output through broadcasting; a Partial output gives a Partial bias.
    EXPECT_EQ(texts(strategies_of("aten.addmm(f32[12](R), f32[6,8](R), f32[8,12](R))", tp4)),
              (std::vector<std::string>{"(R, R, R) -> R", "(P(sum), S(1), S(0)) -> P(sum)",
                                        "(R, S(0), R) -> S(0)", "(S(0), R, S(1)) -> S(1)"}));
    const auto addmm_2d =
        texts(strategies_of("aten.addmm(f32[12](RR), f32[6,8](RR), f32[8,12](RR))", dp2tp2));
    EXPECT_EQ(addmm_2d[1], "(RP(sum), RS(1), RS(0)) -> RP(sum)");
    EXPECT_EQ(addmm_2d[7], "(P(sum)S(0), S(1)R, S(0)S(1)) -> P(sum)S(1)");
    EXPECT_EQ(strategies_of("aten.baddbmm(f32[4,8,8](R), f32[4,8,8](R), f32[4,8,8](R))", tp4)
                  .strategies.size(),
              5u);
}

TEST(ShardingStrategies, EmbeddingAttentionPointwiseReductionViewTranspose) {
    EXPECT_EQ(
        texts(strategies_of("aten.embedding(f32[16,8](R), i64[4,6](R))", tp4)),
        (std::vector<std::string>{
            "(R, R) -> R", "(S(1), R) -> S(2)",
            "(S(0), MaskP(sum, torch.Size([16, 8]), 0)) -> MaskP(sum, torch.Size([16, 8]), 0)",
            "(R, S(0)) -> S(0)", "(R, S(1)) -> S(1)"}));
    EXPECT_EQ(
        strategies_of("aten.embedding(f32[16,8](RR), i64[4,6](RR))", dp2tp2).strategies.size(),
        25u);
    // Batch 2 cannot be split four ways: replicate and heads only.
    const auto attention = texts(strategies_of(
        "aten._scaled_dot_product_flash_attention(f32[2,8,16,4](R), f32[2,8,16,4](R), "
        "f32[2,8,16,4](R))",
        tp4));
    EXPECT_EQ(attention,
              (std::vector<std::string>{
                  "(R, R, R) -> (R, R, None, None, None, None, R, None, R)",
                  "(S(1), S(1), S(1)) -> (S(1), S(1), None, None, None, None, R, None, R)"}));
    EXPECT_EQ(strategies_of("aten._scaled_dot_product_flash_attention(f32[2,8,16,4](RR), "
                            "f32[2,8,16,4](RR), f32[2,8,16,4](RR))",
                            dp2tp2)
                  .strategies.size(),
              8u);
    EXPECT_EQ(texts(strategies_of("aten.add(f32[8,16](S(0)), f32[16](R))", tp4)),
              (std::vector<std::string>{"(S(0), R) -> S(0)"}));
    EXPECT_EQ(texts(strategies_of("aten.add(f32[8,16](S(0)S(1)), f32[16](RR))", dp2tp2)),
              (std::vector<std::string>{"(S(0)S(1), RS(0)) -> S(0)S(1)"}));
    EXPECT_EQ(texts(strategies_of("aten.add(f32[8](P(sum)), f32[8](P(sum)))", tp4)),
              (std::vector<std::string>{"(P(sum), P(sum)) -> P(sum)"}));
    EXPECT_EQ(texts(strategies_of("aten.mul(f32[8](R), f32[8](P(sum)))", tp4)),
              (std::vector<std::string>{"(R, R) -> R"}));
    EXPECT_EQ(texts(strategies_of("aten.relu(f32[8](P(sum)))", tp4)),
              (std::vector<std::string>{"(R) -> R"}));
    EXPECT_EQ(texts(strategies_of("aten.sum(f32[8,16](S(1)), [1])", tp4)),
              (std::vector<std::string>{"(S(1)) -> P(sum)"}));
    EXPECT_EQ(texts(strategies_of("aten.sum(f32[4,8,16](S(2)), [1])", tp4)),
              (std::vector<std::string>{"(S(2)) -> S(1)"}));
    EXPECT_EQ(texts(strategies_of("aten.mean(f32[8,16](S(1)), [1])", tp4)),
              (std::vector<std::string>{"(S(1)) -> P(avg)"}));
    EXPECT_EQ(texts(strategies_of("aten.mean(f32[8,15](S(1)), [1])", tp4)),
              (std::vector<std::string>{"(R) -> R"}));
    EXPECT_EQ(texts(strategies_of("aten.sum(f32[8,16](S(0)S(1)), [1])", dp2tp2)),
              (std::vector<std::string>{"(S(0)S(1)) -> S(0)P(sum)"}));
    EXPECT_EQ(texts(strategies_of("aten.view(f32[8,16](S(0)), [128])", tp4)),
              (std::vector<std::string>{"(S(0)) -> S(0)"}));
    EXPECT_EQ(texts(strategies_of("aten.reshape(f32[8,16](S(1)), [128])", tp4)),
              (std::vector<std::string>{"(R) -> R"}));
    EXPECT_EQ(texts(strategies_of("aten.view(f32[128](S(0)), [8, 16])", tp4)),
              (std::vector<std::string>{"(S(0)) -> S(0)"}));
    EXPECT_EQ(texts(strategies_of("aten.transpose(f32[8,16](S(0)S(1)), 0, 1)", dp2tp2)),
              (std::vector<std::string>{"(S(0)S(1)) -> S(1)S(0)"}));
}

// f32[1024, 512] holds 2 MiB; split four ways each device holds 0.00048828125 GB.
TEST(RedistributeCost, AlphaBetaFormulasWorkedByHand) {
    const DTensorSpec sharded = parse_tensor_spec("f32[1024,512](S(0))", tp4);
    const auto as = [&](const char* placements) {
        return spec_like(sharded, parse_placements(placements));
    };
    // S -> R: all-gather of 4 x 0.00048828125 GB: 6.6 + 3 x 0.6 + (0.001953125 x 3 / 4) / 87.7 x
    // 1e6.
    const double gather = 6.6 + 3 * 0.6 + (0.001953125 * 3 / 4) / 87.7 * 1e6;
    EXPECT_NEAR(redistribute_cost(sharded, as("R")), gather, 1e-9);
    EXPECT_NEAR(gather, 25.1029, 1e-4);
    // S -> S: all-gather of the shard plus the all-to-all penalty.
    EXPECT_NEAR(redistribute_cost(sharded, as("S(1)")),
                6.6 + 1.8 + (0.00048828125 * 3 / 4) / 87.7 * 1e6 + 1.0, 1e-9);
    // P -> R: all-reduce (2 x 3 hops) of the whole tensor.
    const DTensorSpec partial = spec_like(sharded, parse_placements("P(sum)"));
    EXPECT_NEAR(redistribute_cost(partial, as("R")),
                6.6 + 6 * 0.6 + (0.001953125 * 6 / 4) / 87.7 * 1e6, 1e-9);
    EXPECT_NEAR(redistribute_cost(partial, as("R")), 43.6058, 1e-4);
    EXPECT_EQ(redistribute_cost(sharded, sharded), 0);
    EXPECT_EQ(redistribute_cost(as("R"), as("S(0)")), 0);  // replicated: free
    EXPECT_TRUE(std::isinf(redistribute_cost(sharded, as("P(sum)"))));
    EXPECT_TRUE(std::isinf(redistribute_cost(
        sharded, parse_tensor_spec("f32[1024,512](S(0))", parse_device_mesh("x=4")))));
    // Across hosts: 16 devices with 8 per host make the mesh dim inter-host (0.22 x bandwidth,
    // 2.7 us latency).
    const DeviceMesh wide = parse_device_mesh("tp=16", "cuda", 8);
    const DTensorSpec wide_sharded = parse_tensor_spec("f32[1024,512](S(0))", wide);
    EXPECT_NEAR(redistribute_cost(wide_sharded, spec_like(wide_sharded, {Placement::replicate()})),
                6.6 + 15 * 2.7 + (2.0 / 1024 * 15 / 16) / (87.7 * 0.22) * 1e6, 1e-9);
    const MeshTopology topology = MeshTopology::of(parse_device_mesh("dp=4,tp=8"));
    EXPECT_EQ(topology.latency_us, (std::vector<double>{2.7, 0.6}));
}

TEST(ShardingSelection, CheapestWinsAndInputsThatFitWinTies) {
    // mm with S(1) x S(0) inputs: the Partial strategy needs no move.
    const ShardingDecision decision =
        propagate(parse_op_call("aten.mm(f32[1024,512](S(1)), f32[512,256](S(0)))", tp4));
    EXPECT_EQ(decision.chosen, 1u);
    EXPECT_EQ(to_string(decision.chosen_spec()), "(S(1), S(0)) -> P(sum)");
    EXPECT_TRUE(decision.redistributions.empty());
    // Replicated inputs: every strategy costs 0 and (R, R) -> R needs no move.
    const ShardingDecision replicated =
        propagate(parse_op_call("aten.mm(f32[8,8](R), f32[8,8](R))", tp4));
    EXPECT_EQ(replicated.chosen, 0u);
    // S(0) x R: the row-parallel strategy costs nothing.
    const ShardingDecision rows =
        propagate(parse_op_call("aten.mm(f32[1024,512](S(0)), f32[512,256](R))", tp4));
    EXPECT_EQ(to_string(rows.chosen_spec()), "(S(0), R) -> S(0)");
    // A layout no strategy takes as it is: the cheapest move, reported.
    const ShardingDecision moved =
        propagate(parse_op_call("aten.mm(f32[1024,512](S(1)), f32[512,256](R))", tp4));
    ASSERT_EQ(moved.redistributions.size(), 1u);
    EXPECT_EQ(moved.redistributions[0].input, 1u);
    EXPECT_EQ(to_string(moved.chosen_spec()), "(S(1), S(0)) -> P(sum)");
}

TEST(ShardingErrors, NameTheOpInSchemaForm) {
    try {
        propagate(parse_op_call("aten.foo.default(f32[4](R))", tp4));
        FAIL();
    } catch (const ShardingError& error) {
        EXPECT_EQ(
            std::string(error.what())
                .rfind("Operator aten.foo.default does not have a sharding strategy registered "
                       "(pipelens has strategies for aten.mm.default, ",
                       0),
            0u)
            << error.what();
    }
    OpSchema mixed = parse_op_call("aten.mm(f32[8,8](R), f32[8,8](R))", tp4);
    std::get<DTensorSpec>(mixed.arguments[1]).mesh = parse_device_mesh("tp=2");
    try {
        propagate(mixed);
        FAIL();
    } catch (const ShardingError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "cannot propagate sharding for aten.mm.default(Spec(f32[8, 8](R)), "
                  "Spec(f32[8, 8](R))) on DeviceMesh((tp=2), 'cuda', stride=(1,))): its arguments "
                  "live on different device meshes, DeviceMesh((tp=4), 'cuda', stride=(1,)) and "
                  "DeviceMesh((tp=2), 'cuda', stride=(1,)); put every argument on the same mesh "
                  "first");
    }
    try {
        propagate(parse_op_call("aten.view(f32[8,16](S(1)), [128])", tp4));
        FAIL();
    } catch (const ShardingError& error) {
        EXPECT_NE(
            std::string(error.what())
                .find("tensor dim 1 (size 16) is sharded on mesh dim 0 (4 devices) and cannot "
                      "stay sharded as shape [128]"),
            std::string::npos)
            << error.what();
    }
    EXPECT_THROW(parse_op_call("aten.mm(f32[8,8](S(2)), f32[8,8](R))", tp4), std::invalid_argument);
    EXPECT_THROW(parse_op_call("aten.mm(f32[8,8](S(0)R), f32[8,8](R))", tp4),
                 std::invalid_argument);
}

std::string invalid_argument_of(const std::function<void()>& parse) {
    try {
        parse();
    } catch (const std::invalid_argument& error) {
        return error.what();
    }
    return "accepted";
}

// Found by fuzzing: a stray byte in a dtype reached `shard --json`, whose writer threw on the
// invalid UTF-8; a mesh of 65536 x 65536 devices overflowed the int device count; a mesh of 8
// dims took minutes per block.
TEST(ShardingErrors, StrayBytesAndHugeMeshesAreRefusedWhereTheyAreRead) {
    EXPECT_EQ(invalid_argument_of([] {
                  parse_op_call(
                      "aten.relu(f3\xb0"
                      "2[8](R))",
                      tp4);
              }),
              "op call: character 13 (byte 0xb0) is not printable ASCII");
    EXPECT_EQ(invalid_argument_of([] { parse_tensor_spec("f-32[8](R)", tp4); }),
              "tensor 'f-32[8](R)': the dtype must be a name such as f32 or bf16 (expected "
              "DTYPE[D0,D1,...](PLACEMENTS), e.g. f32[1024,512](S(1)))");
    EXPECT_EQ(invalid_argument_of([] { parse_device_mesh("t\xb0=4"); }).rfind("--mesh '", 0), 0u);
    EXPECT_EQ(invalid_argument_of([] { parse_device_mesh("dp=65536,tp=65536"); }),
              "--mesh 'dp=65536,tp=65536': more than 1048576 devices");
    EXPECT_EQ(parse_device_mesh("dp=1024,tp=1024").size(), 1 << 20);
    EXPECT_EQ(invalid_argument_of([] { parse_device_mesh("a=1,b=1,c=1,d=1,e=1,f=1"); }),
              "--mesh 'a=1,b=1,c=1,d=1,e=1,f=1': more than 5 dimensions");
    EXPECT_EQ(parse_device_mesh("a=1,b=2,c=1,d=2,e=1").ndim(), 5);
}

// Found by fuzzing: with a size-0 dim the view's dim groups ran past the end of the new shape.
TEST(ShardingStrategies, ViewsOfEmptyTensors) {
    const ShardingDecision flat = propagate(parse_op_call("aten.view(f32[0,4](R), [-1])", tp4));
    EXPECT_EQ(flat.chosen_spec().output().tensor.shape, (std::vector<std::int64_t>{0}));
    EXPECT_EQ(to_string(flat.chosen_spec()), "(R) -> R");
    const ShardingDecision split =
        propagate(parse_op_call("aten.reshape(f32[4,0](S(0)), [0,2,2])", tp4));
    EXPECT_EQ(split.chosen_spec().output().tensor.shape, (std::vector<std::int64_t>{0, 2, 2}));
}

TEST(ShardingBlocks, MegatronMlpGoesColumnThenRowWise) {
    const auto decisions = propagate_block("mlp", parse_device_mesh("dp=2,tp=4"));
    ASSERT_EQ(decisions.size(), 3u);
    EXPECT_EQ(to_string(decisions[0].chosen_spec()), "(S(0)R, RS(1)) -> S(0)S(1)");
    EXPECT_EQ(to_string(decisions[1].chosen_spec()), "(S(0)S(1)) -> S(0)S(1)");
    EXPECT_EQ(to_string(decisions[2].chosen_spec()), "(S(0)S(1), RS(0)) -> S(0)P(sum)");
    for (const auto& decision : decisions)
        EXPECT_TRUE(decision.redistributions.empty());
}

TEST(ShardingBlocks, AttentionShardsBatchOnDpAndHeadsOnTp) {
    const auto decisions = propagate_block("attention", parse_device_mesh("dp=2,tp=4"));
    ASSERT_EQ(decisions.size(), 13u);
    EXPECT_EQ(decisions[9].schema.op, "aten._scaled_dot_product_flash_attention.default");
    EXPECT_EQ(to_string(decisions[9].chosen_spec()),
              "(S(0)S(1), S(0)S(1), S(0)S(1)) -> (S(0)S(1), S(0)S(1), None, None, None, None, RR, "
              "None, RR)");
    EXPECT_EQ(to_string(decisions[12].chosen_spec()), "(S(0)S(1), RS(0)) -> S(0)P(sum)");
    for (const auto& decision : decisions)
        EXPECT_TRUE(decision.redistributions.empty()) << to_string(decision.schema);
    EXPECT_EQ(propagate_block("embedding", parse_device_mesh("dp=2,tp=4")).size(), 2u);
    EXPECT_THROW(propagate_block("moe", tp4), std::invalid_argument);
}

TEST(ShardingVisualize, DrawsWhichDeviceHoldsWhichBlock) {
    EXPECT_EQ(visualize_sharding(parse_tensor_spec("f32[8,8](S(0)S(1))", dp2tp2)),
              "Spec(f32[8, 8](S(0)S(1))) on DeviceMesh((dp=2, tp=2), 'cuda', stride=(2, 1))\n"
              "            cols 0-3  cols 4-7\n"
              "rows 0-3    cuda:0    cuda:1\n"
              "rows 4-7    cuda:2    cuda:3\n");
    EXPECT_EQ(visualize_sharding(parse_tensor_spec("f32[8,8](RS(0))", dp2tp2)),
              "Spec(f32[8, 8](RS(0))) on DeviceMesh((dp=2, tp=2), 'cuda', stride=(2, 1))\n"
              "            cols 0-7\n"
              "rows 0-3    cuda:0, cuda:2\n"
              "rows 4-7    cuda:1, cuda:3\n");
    EXPECT_THROW(visualize_sharding(parse_tensor_spec("f32[2,2,2](RR)", dp2tp2)),
                 std::invalid_argument);
}

}  // namespace
}  // namespace pipelens::sharding
