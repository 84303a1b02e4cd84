// The sharding model against upstream DTensor: printed forms, strategy lists in upstream's
// order for the listed ops on 1-D and 2-D meshes (counts as upstream's test_op_strategy
// expects them), costs worked by hand from the alpha-beta formulas, the choice with its tie
// rules, readable errors, whole blocks, and the layout drawing. The tests after the drawing
// turn upstream main's test expectations of late 2025 (named in each) into pipelens terms: the
// redistribution order, Partial kinds, views over several mesh dims, embedding's masked partial.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "engine/sharding/einsum_strategy.hpp"
#include "engine/sharding/op_text.hpp"
#include "engine/sharding/redistribute_cost.hpp"
#include "engine/sharding/sharding_blocks.hpp"
#include "engine/sharding/sharding_propagation.hpp"
#include "engine/sharding/sharding_visualize.hpp"
#include "engine/sharding/strategy_utils.hpp"
#include "tests/thrown_message.hpp"

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

// Mesh dim 0 is the most significant digit: 3 choices on 2 dims visit 9 picks in order.
TEST(ShardingStrategies, NextCombinationCountsMeshDimZeroSlowest) {
    std::vector<std::size_t> pick(2, 0);
    std::vector<std::vector<std::size_t>> seen{pick};
    while (next_combination(pick, 3))
        seen.push_back(pick);
    EXPECT_EQ(seen, (std::vector<std::vector<std::size_t>>{
                        {0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}, {2, 2}}));
    EXPECT_EQ(pick, (std::vector<std::size_t>{0, 0}));
    std::vector<std::size_t> no_dims;  // a 0-d mesh has one combination, the empty one
    EXPECT_FALSE(next_combination(no_dims, 3));
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
              (std::vector<std::string>{"(R, P(sum)) -> P(sum)"}));
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
    // Both shapes are named, and the dimension that does not match.
    try {
        propagate(parse_op_call("aten.add(f32[8,8](R), f32[7,8](R))", tp4));
        FAIL();
    } catch (const std::exception& error) {
        EXPECT_NE(std::string(error.what())
                      .find("shapes [8, 8] and [7, 8] do not broadcast: dimension 2 from the "
                            "right is 8 in one and 7 in another (sizes must match or be 1)"),
                  std::string::npos)
            << error.what();
    }
    EXPECT_THROW(parse_op_call("aten.mm(f32[8,8](S(2)), f32[8,8](R))", tp4), std::invalid_argument);
    EXPECT_THROW(parse_op_call("aten.mm(f32[8,8](S(0)R), f32[8,8](R))", tp4),
                 std::invalid_argument);
}

std::string invalid_argument_of(const std::function<void()>& parse) {
    return testing::thrown_message<std::invalid_argument>([&] { parse(); }, "accepted");
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
    EXPECT_EQ(invalid_argument_of([] { parse_tensor_spec("f-32[8](R)", tp4); })
                  .rfind("tensor 'f-32[8](R)': unknown dtype 'f-32'; PyTorch's short names are "
                         "bf16, f64, f32, ",
                         0),
              0u);
    EXPECT_EQ(invalid_argument_of([] { parse_device_mesh("t\xb0=4"); }).rfind("--mesh '", 0), 0u);
    EXPECT_EQ(invalid_argument_of([] { parse_device_mesh("dp=65536,tp=65536"); }),
              "--mesh 'dp=65536,tp=65536': more than 1048576 devices");
    EXPECT_EQ(parse_device_mesh("dp=1024,tp=1024").size(), 1 << 20);
    EXPECT_EQ(invalid_argument_of([] { parse_device_mesh("a=1,b=1,c=1,d=1,e=1,f=1"); }),
              "--mesh 'a=1,b=1,c=1,d=1,e=1,f=1': more than 5 dimensions");
    EXPECT_EQ(parse_device_mesh("a=1,b=2,c=1,d=2,e=1").ndim(), 5);
}

// Bytes are dtype.itemsize times the elements, for every name a DTensor Spec prints (a c128
// gather once cost what a 1-byte dtype's does), and a name PyTorch does not print is refused.
TEST(RedistributeCost, EveryDtypeIsSizedByItsItemsize) {
    const std::vector<std::pair<std::string, int>> sizes{
        {"c128", 16},      {"c64", 8},       {"f64", 8},        {"i64", 8},    {"u64", 8},
        {"c32", 4},        {"f32", 4},       {"i32", 4},        {"u32", 4},    {"bf16", 2},
        {"f16", 2},        {"i16", 2},       {"u16", 2},        {"b16", 2},    {"i8", 1},
        {"u8", 1},         {"b8", 1},        {"f8e4m3fn", 1},   {"f8e5m2", 1}, {"f8e4m3fnuz", 1},
        {"f8e5m2fnuz", 1}, {"f8e8m0fnu", 1}, {"f4e2m1fnx2", 1}, {"b1x8", 1}};
    for (const auto& [dtype, bytes] : sizes) {
        const DTensorSpec sharded = parse_tensor_spec(dtype + "[1024,512](S(0))", tp4);
        EXPECT_EQ(sharded.tensor.byte_count(), 1024 * 512 * bytes) << dtype;
        const double gigabytes = 1024.0 * 512 * bytes / (1024.0 * 1024 * 1024);
        EXPECT_NEAR(redistribute_cost(sharded, spec_like(sharded, parse_placements("R"))),
                    6.6 + 3 * 0.6 + (gigabytes * 3 / 4) / 87.7 * 1e6, 1e-9)
            << dtype;
    }
    EXPECT_EQ(invalid_argument_of([] {
                  parse_tensor_spec("float32[8](R)", tp4);
              }).rfind("tensor 'float32[8](R)': unknown dtype 'float32'", 0),
              0u);
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

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// One collective on a mesh dim of `devices` with the topology constants (bytes before it).
double collective(double bytes, int devices, int hops, bool inter_host = false) {
    const double bandwidth = MeshLinks{}.intra_host_gb_per_s * (inter_host ? 0.22 : 1.0);
    return 6.6 + hops * (inter_host ? 2.7 : 0.6) +
           (bytes / kGiB * hops / devices) / bandwidth * 1e6;
}

std::vector<std::string> step_texts(const DTensorSpec& from, const char* to) {
    std::vector<std::string> result;
    for (const RedistributeStep& step :
         redistribute_steps(from, spec_like(from, parse_placements(to))))
        result.push_back(to_string(step));
    return result;
}

// Upstream's greedy planner (_redistribute.py, generate_greedy_transform_infos, whose docstring
// has this very example) and test_op_strategy.py TestCostModel.test_redistribute_cost_with_order:
// S(0)S(0) -> RS(0) gathers mesh dim 1, then mesh dim 0 with twice the bytes, then splits again,
// so it costs more than S(0)S(0) -> S(0)R. The old walk over mesh dims 0..n-1 priced both alike.
TEST(RedistributeCost, StepsRunInnermostFirstAndPayForWhatEarlierStepsGathered) {
    const DTensorSpec nested = parse_tensor_spec("f32[4,4](S(0)S(0))", dp2tp2);  // 64 bytes
    EXPECT_EQ(step_texts(nested, "RS(0)"),
              (std::vector<std::string>{"mesh dim 1: S(0) -> R", "mesh dim 0: S(0) -> R",
                                        "mesh dim 1: R -> S(0)"}));
    EXPECT_EQ(step_texts(nested, "S(0)R"), (std::vector<std::string>{"mesh dim 1: S(0) -> R"}));
    const double inner_only =
        redistribute_cost(nested, spec_like(nested, parse_placements("S(0)R")));
    const double both = redistribute_cost(nested, spec_like(nested, parse_placements("RS(0)")));
    EXPECT_NEAR(inner_only, collective(32, 2, 1), 1e-9);
    EXPECT_NEAR(both, collective(32, 2, 1) + collective(64, 2, 1), 1e-9);
    EXPECT_GT(both, inner_only);
    // P(sum) on mesh dim 1 is reduce-scattered before mesh dim 0 gathers the smaller result.
    const DTensorSpec mixed = parse_tensor_spec("f32[4,4](S(0)P(sum))", dp2tp2);
    EXPECT_EQ(step_texts(mixed, "RS(1)"),
              (std::vector<std::string>{"mesh dim 1: P(sum) -> S(1)", "mesh dim 0: S(0) -> R"}));
    EXPECT_NEAR(redistribute_cost(mixed, spec_like(mixed, parse_placements("RS(1)"))),
                collective(32, 2, 1) + collective(32, 2, 1), 1e-9);
    // Sources without shards (only Partials) are walked outermost first, as upstream.
    const DTensorSpec partials = parse_tensor_spec("f32[4,4](P(sum)P(sum))", dp2tp2);
    EXPECT_EQ(
        step_texts(partials, "S(0)S(0)"),
        (std::vector<std::string>{"mesh dim 0: P(sum) -> S(0)", "mesh dim 1: P(sum) -> S(0)"}));
    EXPECT_EQ(step_texts(parse_tensor_spec("f32[4](S(0))", tp4), "S(0)"),
              (std::vector<std::string>{"mesh dim 0: S(0) -> S(0)"}));
}

// dp=2 x tp=8 with 8 devices per host: mesh dim 0 crosses hosts. Gathering S(0)S(0) to RS(0)
// runs the inter-host gather second, on the whole 2 MiB tensor (the old walk charged it 1/8).
TEST(RedistributeCost, ACrossHostGatherAfterAnInnerOneMovesTheFullTensor) {
    const DeviceMesh mesh = parse_device_mesh("dp=2,tp=8", "cuda", 8);
    const DTensorSpec nested = parse_tensor_spec("f32[1024,512](S(0)S(0))", mesh);
    const double bytes = 2.0 * 1024 * 1024;
    EXPECT_NEAR(redistribute_cost(nested, spec_like(nested, parse_placements("RS(0)"))),
                collective(bytes / 2, 8, 7) + collective(bytes, 2, 1, true), 1e-9);
    EXPECT_NEAR(redistribute_cost(nested, spec_like(nested, parse_placements("RR"))),
                collective(bytes / 2, 8, 7) + collective(bytes, 2, 1, true), 1e-9);
}

// test_op_strategy.py TestCostModel: test_redistribute_cost_mesh_1d, _mesh_2d and
// test_redistribute_cost_partial_to_different_partial_is_infinite.
TEST(RedistributeCost, UpstreamCostModelExpectations) {
    const DTensorSpec shard = parse_tensor_spec("f32[10,10](S(0))", tp4);
    const DTensorSpec replicate = spec_like(shard, parse_placements("R"));
    const DTensorSpec partial = spec_like(shard, parse_placements("P(sum)"));
    for (const DTensorSpec& spec : {shard, replicate, partial})
        EXPECT_EQ(redistribute_cost(spec, spec), 0);
    const double gather = redistribute_cost(shard, replicate);
    const double scatter = redistribute_cost(partial, shard);
    EXPECT_DOUBLE_EQ(gather, scatter);
    EXPECT_LT(redistribute_cost(partial, replicate) + 1, gather + scatter);
    EXPECT_TRUE(std::isinf(redistribute_cost(shard, partial)));
    const DTensorSpec shard2 = parse_tensor_spec("f32[8,8](S(0)S(0))", dp2tp2);
    const DTensorSpec partial2 = spec_like(shard2, parse_placements("P(sum)P(sum)"));
    const DTensorSpec replicate2 = spec_like(shard2, parse_placements("RR"));
    const double allreduce = redistribute_cost(partial2, replicate2);
    EXPECT_NEAR(allreduce, 2 * collective(256, 2, 2), 1e-9);
    EXPECT_GT(allreduce, redistribute_cost(shard2, replicate2));
    EXPECT_GT(allreduce, redistribute_cost(partial2, shard2));
    const DTensorSpec sum = parse_tensor_spec("f32[10,10](P(sum))", tp4);
    const DTensorSpec avg = spec_like(sum, parse_placements("P(avg)"));
    EXPECT_TRUE(std::isinf(redistribute_cost(sum, avg)));
    EXPECT_TRUE(std::isinf(redistribute_cost(avg, sum)));
    EXPECT_EQ(impossible_redistribution(avg, sum),
              "mesh dim 0: P(avg) -> P(sum): one Partial kind cannot become another");
    EXPECT_EQ(impossible_redistribution(avg, replicate), "");
}

std::map<std::string, double> totals(const OpStrategy& strategy) {
    std::map<std::string, double> result;
    for (const OpSpec& spec : strategy.strategies)
        result[to_string(spec)] = spec.total_cost();
    return result;
}

// test_op_strategy.py TestCostModel.test_redistribute_cost_latency: one all-reduce of the
// Partial input beats three collectives, and it is the cheapest of all.
TEST(ShardingSelection, AddmmPrefersOneAllReduceOverThreeCollectives) {
    const ShardingDecision decision = propagate(
        parse_op_call("aten.addmm(f32[8](S(0)), f32[50,6](P(sum)), f32[6,8](S(1)))", tp4));
    const auto costs = totals(decision.strategy);
    EXPECT_LT(costs.at("(S(0), R, S(1)) -> S(1)"), costs.at("(R, S(0), R) -> S(0)"));
    EXPECT_NEAR(costs.at("(S(0), R, S(1)) -> S(1)"), collective(50 * 6 * 4, 4, 6), 1e-9);
    EXPECT_TRUE(std::isinf(costs.at("(P(sum), S(1), S(0)) -> P(sum)")));  // S(0) bias -> P
    EXPECT_EQ(to_string(decision.chosen_spec()), "(S(0), R, S(1)) -> S(1)");
}

// test_op_strategy.py TestCostModel.test_mm_strategies and test_bmm_strategies: inputs already
// laid out as a strategy wants cost [[0], [0]] and need no redistribution.
TEST(ShardingSelection, InputsLaidOutAsAStrategyWantsAreNotMoved) {
    const auto check = [](const std::string& op, const char* left, const char* right,
                          const std::string& lhs, const std::string& rhs) {
        const ShardingDecision decision = propagate(
            parse_op_call(fmt::format("{}({}({}), {}({}))", op, left, lhs, right, rhs), tp4));
        EXPECT_TRUE(decision.redistributions.empty()) << op << " " << lhs << " " << rhs;
        EXPECT_EQ(decision.chosen_spec().redistribute_cost,
                  (std::vector<std::vector<double>>{{0.0}, {0.0}}));
        EXPECT_EQ(to_string(decision.chosen_spec().inputs[0].placements), lhs);
    };
    for (const auto& [lhs, rhs] : std::vector<std::pair<std::string, std::string>>{
             {"S(0)", "R"}, {"R", "S(1)"}, {"S(1)", "S(0)"}, {"R", "R"}})
        check("aten.mm", "f32[6,8]", "f32[8,12]", lhs, rhs);
    for (const auto& [lhs, rhs] : std::vector<std::pair<std::string, std::string>>{
             {"S(0)", "S(0)"}, {"S(1)", "R"}, {"R", "S(2)"}, {"S(2)", "S(1)"}, {"R", "R"}})
        check("aten.bmm", "f32[8,6,8]", "f32[8,8,12]", lhs, rhs);
}

OpStrategy generated(const std::string& text, const DeviceMesh& mesh) {
    OpCall call;
    call.schema = parse_op_call(text, mesh);
    call.mesh = mesh;
    for (const DTensorSpec& tensor : call.schema.tensor_arguments())
        call.inputs.push_back(strategy_of(tensor));
    return find_strategy(call.schema.op)(call);
}

// test_pointwise_ops.py: test_partial_replicate_add (P(avg) + R stays P(avg), no collective),
// test_mul_partial (P * P all-reduces one side; P(max) * R replicates). Mixing Partial kinds
// follows the first input as upstream's common_pointwise_strategy does, and moving P(sum) to
// P(avg) costs infinity (_compute_placement_transition_cost), so nothing can run it.
TEST(ShardingPartials, KindsSurviveLinearOpsAndNeverTurnIntoOneAnother) {
    // A replicated addend becomes a partial sum (free); a mean keeps it replicated, by the rule
    // P(avg) + R -> P(avg).
    for (const auto& [kind, strategy] : {std::pair{"sum", "(P(sum), P(sum)) -> P(sum)"},
                                         std::pair{"avg", "(P(avg), R) -> P(avg)"}}) {
        const ShardingDecision decision = propagate(
            parse_op_call(fmt::format("aten.add(f32[2,2](P({0})), f32[2,1](R))", kind), tp4));
        EXPECT_EQ(texts(decision.strategy), (std::vector<std::string>{strategy}));
        EXPECT_EQ(decision.chosen_spec().total_cost(), 0);
    }
    const ShardingDecision squared =
        propagate(parse_op_call("aten.mul(f32[2,2](P(sum)), f32[2,2](P(sum)))", tp4));
    EXPECT_EQ(to_string(squared.chosen_spec()), "(P(sum), R) -> P(sum)");
    EXPECT_NEAR(squared.chosen_spec().total_cost(), collective(16, 4, 6), 1e-9);
    EXPECT_EQ(texts(strategies_of("aten.mul(f32[8,8](P(avg)), f32[8,8](R))", tp4)),
              (std::vector<std::string>{"(P(avg), R) -> P(avg)"}));
    EXPECT_EQ(texts(strategies_of("aten.mul(f32[8,8](P(max)), f32[8,8](R))", tp4)),
              (std::vector<std::string>{"(R, R) -> R"}));
    const OpStrategy mixed = generated("aten.add(f32[8](P(avg)), f32[8](P(sum)))", tp4);
    ASSERT_EQ(texts(mixed), (std::vector<std::string>{"(P(avg), P(avg)) -> P(avg)"}));
    EXPECT_EQ(mixed.strategies[0].redistribute_cost[0], (std::vector<double>{0.0}));
    EXPECT_TRUE(std::isinf(mixed.strategies[0].redistribute_cost[1][0]));
    EXPECT_EQ(invalid_argument_of([] {
                  propagate(parse_op_call("aten.add(f32[8](P(avg)), f32[8](P(sum)))", tp4));
              }),
              "Sharding propagation failed for aten.add.Tensor(Spec(f32[8](P(avg))), "
              "Spec(f32[8](P(sum)))) on DeviceMesh((tp=4), 'cuda', stride=(1,))): every strategy "
              "needs a redistribution no collective can do; the cheapest, (P(avg), P(avg)) -> "
              "P(avg), needs input 1 moved from P(sum) to P(avg) (mesh dim 0: P(sum) -> P(avg): "
              "one Partial kind cannot become another); redistribute it (e.g. to R) first");
}

// test_embedding_ops.py: test_sharded_embedding_rowwise (row-wise weight gives a masked
// partial that one all-reduce completes) and test_multiple_embeddings_rowwise (masked partials
// of different weight shapes differ, so neither can stand for the other).
TEST(ShardingPartials, RowWiseEmbeddingGivesAMaskedPartialThatOneAllReduceCompletes) {
    const ShardingDecision decision =
        propagate(parse_op_call("aten.embedding(f32[10,20](S(0)), i64[8,8](R))", tp4));
    const DTensorSpec& output = decision.chosen_spec().output();
    EXPECT_EQ(to_string(output.placements), "MaskP(sum, torch.Size([10, 20]), 0)");
    EXPECT_EQ(step_texts(output, "R"),
              (std::vector<std::string>{"mesh dim 0: MaskP(sum, torch.Size([10, 20]), 0) -> R"}));
    EXPECT_NEAR(redistribute_cost(output, spec_like(output, {Placement::replicate()})),
                collective(8 * 8 * 20 * 4, 4, 6), 1e-9);
    const DTensorSpec narrow = spec_like(output, {Placement::mask_partial({10, 23}, 0)});
    const DTensorSpec wide = spec_like(output, {Placement::mask_partial({10, 29}, 0)});
    EXPECT_FALSE(narrow.placements == wide.placements);
    EXPECT_TRUE(std::isinf(redistribute_cost(narrow, wide)));
    EXPECT_TRUE(std::isinf(redistribute_cost(narrow, spec_like(narrow, {Placement::partial()}))));
}

// A dim sharded on several mesh dims keeps its sharding through a view only where its size
// divides by all their devices together. Upstream: _view_ops.py propagate_shape_and_sharding
// ("the dimension needs to be divisible by the product of mesh sizes"), test_view_ops.py
// test_dtensor_flatten_2d (S(0)S(0) of (6, 4) -> (24,) on 2x2 is an error: 6 / 2 / 2 is uneven)
// and test_dtensor_unflatten_1d (a first factor the mesh does not divide is an error).
TEST(ShardingStrategies, AViewOverSeveralMeshDimsDividesByTheirProduct) {
    EXPECT_EQ(invalid_argument_of(
                  [] { propagate(parse_op_call("aten.view(f32[24](S(0)S(0)), [6, 4])", dp2tp2)); }),
              "Sharding propagation failed for aten.view.default(Spec(f32[24](S(0)[0]S(0)[1])), "
              "[6, 4]) on DeviceMesh((dp=2, tp=2), 'cuda', stride=(2, 1))): tensor dim 0 (size "
              "24) is sharded on mesh dims 0 and 1 (4 devices) and cannot stay sharded as shape "
              "[6, 4] (split, its first piece 6 does not divide by 4); reshape it (which "
              "replicates it first) or redistribute before the view");
    // reshape replicates only what cannot stay: mesh dim 0 keeps (6 / 2), mesh dim 1 gathers.
    const ShardingDecision reshaped =
        propagate(parse_op_call("aten.reshape(f32[24](S(0)S(0)), [6, 4])", dp2tp2));
    EXPECT_EQ(to_string(reshaped.chosen_spec()), "(S(0)R) -> S(0)R");
    EXPECT_NEAR(reshaped.chosen_spec().total_cost(), collective(48, 2, 1), 1e-9);
    EXPECT_EQ(texts(strategies_of("aten.view(f32[48](S(0)S(0)), [12, 4])", dp2tp2)),
              (std::vector<std::string>{"(S(0)S(0)) -> S(0)S(0)"}));
    EXPECT_NE(invalid_argument_of([] {
                  propagate(parse_op_call("aten.view(f32[6,4](S(0)S(0)), [24])", dp2tp2));
              }).find("(merged, its size 6 does not divide by 4)"),
              std::string::npos);
    EXPECT_EQ(texts(strategies_of("aten.view(f32[8,4](S(0)S(0)), [32])", dp2tp2)),
              (std::vector<std::string>{"(S(0)S(0)) -> S(0)S(0)"}));
    EXPECT_NE(invalid_argument_of([] {
                  propagate(parse_op_call("aten.view(f32[24](S(0)), [6, 4])", tp4));
              }).find("on mesh dim 0 (4 devices)"),
              std::string::npos);
    EXPECT_EQ(texts(strategies_of("aten.view(f32[24](S(0)), [8, 3])", tp4)),
              (std::vector<std::string>{"(S(0)) -> S(0)"}));
}

// test_op_strategy.py TestEinsumDims (test_bmm_dims, test_free_dims) and equations the
// strategies cannot express.
TEST(ShardingStrategies, EinsumDimsAndEquationsRefused) {
    const EinsumDims bmm = parse_einsum("bcmk,bckn->bcmn");
    EXPECT_EQ(bmm.batch, "bc");
    EXPECT_EQ(bmm.contracting, "k");
    const EinsumDims free = parse_einsum("abc,ab->abc");
    EXPECT_EQ(free.batch, "ab");
    EXPECT_EQ(free.lhs_only, "c");
    EXPECT_EQ(invalid_argument_of([] { parse_einsum("ii->i"); }),
              "einsum 'ii->i': dim 'i' appears twice in 'ii' (diagonals are not supported)");
    EXPECT_EQ(invalid_argument_of([] { parse_einsum("mk,kn->mz"); }),
              "einsum 'mk,kn->mz': output dim 'z' is in no input");
    EXPECT_EQ(invalid_argument_of([] { parse_einsum("m k->m"); }),
              "einsum 'm k->m': dims are single letters (a-z, A-Z), e.g. 'bmk,bkn->bmn'");
    EXPECT_EQ(invalid_argument_of([] {
                  einsum_strategies("abcdefghij,abcdefghij->abcdefghij",
                                    parse_device_mesh("a=1,b=1,c=1,d=1,e=1"));
              }),
              "einsum 'abcdefghij,abcdefghij->abcdefghij': 11 choices per mesh dim on 5 mesh "
              "dims make more than 100000 strategies");
}

// A planner's blocks: GPT-3 175B's layer (s = 2048, h = 12288, 96 heads, bf16) on tp = 8. The
// Megatron split needs no communication inside either block; each ends Partial(sum) on tp,
// and the one all-reduce that finishes it moves the layer's whole output (s b h x 2 bytes).
TEST(ShardingBlocks, AModelsOwnShapeKeepsTheMegatronSplitAndCostsItsOutputReduction) {
    const DeviceMesh mesh = parse_device_mesh("tp=8");
    const BlockShape gpt3{1, 2048, 12288, 96, 51200, "bf16"};
    for (const char* name : {"mlp", "attention"}) {
        const auto decisions = propagate_block(name, mesh, gpt3);
        for (const auto& decision : decisions)
            EXPECT_TRUE(decision.redistributions.empty()) << to_string(decision.schema);
        const DTensorSpec out = decisions.back().chosen_spec().output();
        EXPECT_EQ(out.tensor.shape, (std::vector<std::int64_t>{2048, 12288})) << name;
        EXPECT_EQ(to_string(out.placements), "P(sum)") << name;
        const double bytes = 2048.0 * 12288 * 2;
        EXPECT_NEAR(redistribute_cost(out, spec_like(out, parse_placements("R"))),
                    6.6 + 14 * 0.6 + (bytes / kGiB * 14 / 8) / 87.7 * 1e6, 1e-6);
    }
    EXPECT_THROW(propagate_block("mlp", mesh, BlockShape{1, 2048, 12288, 100, 51200, "bf16"}),
                 std::invalid_argument);  // 12288 does not divide by 100 heads
}

// The links come from the mesh: a cluster's own NVLink and network figures replace upstream's
// constants, inside a host for the inner dim and between hosts once a dim spans them.
TEST(RedistributeCost, TheMeshsOwnLinksSetEachCollectivesLatencyAndBandwidth) {
    DeviceMesh mesh = parse_device_mesh("dp=4,tp=8", "cuda", 8);
    mesh.links = {450, 1.0, 50, 5.0, 10.0};
    const DTensorSpec partial = parse_tensor_spec("bf16[4096,4096](P(sum)P(sum))", mesh);
    const double bytes = 4096.0 * 4096 * 2 / kGiB;
    const double inner = 10.0 + 14 * 1.0 + (bytes * 14 / 8) / 450 * 1e6;
    const double outer = 10.0 + 6 * 5.0 + (bytes * 6 / 4) / 50 * 1e6;
    EXPECT_NEAR(redistribute_cost(partial, spec_like(partial, parse_placements("P(sum)R"))), inner,
                1e-6);
    EXPECT_NEAR(redistribute_cost(partial, spec_like(partial, parse_placements("RP(sum)"))), outer,
                1e-6);
}

}  // namespace
}  // namespace pipelens::sharding
