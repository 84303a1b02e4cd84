// Sweeps: GPipe's closed form at every point of a grid, points equal to `simulate`'s figures, the
// ranking and Pareto front against a brute-force check, results that do not depend on threads or
// shards, and configurations that cannot run kept with why.
#include <gtest/gtest.h>

#include <tuple>

#include "engine/experiment/experiment_toml.hpp"
#include "engine/experiment/sweep_grid.hpp"
#include "sim/experiment_simulation.hpp"
#include "sim/sweep.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens {
namespace {

Experiment unit_experiment() {  // F = I = W = 1 us on every stage
    Experiment experiment = plain_experiment();
    experiment.held_activation_bytes = {1 << 20};
    return experiment;
}

SweepGrid mixed_grid() {
    return SweepGrid(unit_experiment(),
                     {parse_sweep_flag("kind=GPipe,1F1B,Interleaved1F1B,ZBVZeroBubble,DualPipeV"),
                      parse_sweep_flag("pp=2,4,8"), parse_sweep_flag("m=4,8,16"),
                      parse_sweep_flag("w=1us,3us")});
}

TEST(Sweep, GPipeMeetsItsClosedFormAtEveryPoint) {
    const SweepGrid grid(unit_experiment(),
                         {parse_sweep_flag("kind=GPipe"), parse_sweep_flag("pp=2,4,8"),
                          parse_sweep_flag("m=1,4,8,16")});
    for (const sim::SweepPoint& point : sim::run_sweep(grid, SweepShard{}, 2)) {
        ASSERT_TRUE(point.simulated()) << point.error;
        // (m + pp - 1) forward slots of 1 us, as many backward slots of I + W = 2 us.
        EXPECT_EQ(point.step_time_ns, (point.m + point.pp - 1) * 3'000);
        EXPECT_DOUBLE_EQ(point.bubble_ratio, double(point.pp - 1) / (point.m + point.pp - 1));
        // Every GPipe rank holds all m microbatches' activations at once.
        EXPECT_EQ(point.peak_memory_bytes, std::int64_t{point.m} << 20);
    }
}

TEST(Sweep, APointHasExactlyTheFiguresSimulateGivesItsConfiguration) {
    const SweepGrid grid = mixed_grid();
    for (const std::size_t index : {std::size_t{7}, std::size_t{40}, std::size_t{77}}) {
        const sim::SweepPoint point = sim::simulate_sweep_configuration(grid, index);
        ASSERT_TRUE(point.simulated()) << point.error;
        Experiment experiment = grid.configuration(index);
        const sim::ExperimentSimulation simulated = sim::simulate_experiment(experiment);
        EXPECT_EQ(point.step_time_ns, simulated.result.step_time_ns);
        EXPECT_EQ(point.bubble_ratio, simulated.result.bubble_ratio);
        std::int64_t peak = 0;
        for (const sim::RankResult& rank : simulated.result.ranks)
            peak = std::max(peak, rank.peak_memory_bytes);
        EXPECT_EQ(point.peak_memory_bytes, peak);
        EXPECT_EQ(point.schedule, simulated.lowered->name);
    }
}

TEST(Sweep, TheRankingAndTheFrontAreTheSameOnAnyThreadsAndShards) {
    const SweepGrid grid = mixed_grid();
    const std::vector<sim::SweepPoint> whole = sim::run_sweep(grid, SweepShard{}, 1);
    const std::vector<sim::SweepPoint> threaded = sim::run_sweep(grid, SweepShard{}, 2);
    std::vector<sim::SweepPoint> joined;
    for (std::size_t shard = 1; shard <= 4; ++shard)
        for (const sim::SweepPoint& point : sim::run_sweep(grid, SweepShard{shard, 4}, 2))
            joined.push_back(point);
    sim::rank_sweep(joined, sim::sweep_basis(grid, 0).ranking);
    ASSERT_EQ(whole.size(), grid.size());
    for (const std::vector<sim::SweepPoint>* other :
         {&threaded, static_cast<const std::vector<sim::SweepPoint>*>(&joined)}) {
        ASSERT_EQ(other->size(), whole.size());
        for (std::size_t at = 0; at < whole.size(); ++at) {
            EXPECT_EQ((*other)[at].index, whole[at].index);
            EXPECT_EQ((*other)[at].step_time_ns, whole[at].step_time_ns);
            EXPECT_EQ((*other)[at].place, whole[at].place);
            EXPECT_EQ((*other)[at].pareto, whole[at].pareto);
        }
    }
}

TEST(Sweep, TheFrontIsWhatNoOtherConfigurationBeats) {
    // Flat per-stage costs over pp and m: ranked, and the front drawn, by the step over m.
    const std::vector<sim::SweepPoint> points = sim::run_sweep(mixed_grid(), SweepShard{}, 2);
    const auto time = [](const sim::SweepPoint& point) {
        return sim::ranked_time_ns(point, sim::SweepRanking::per_microbatch);
    };
    std::size_t front = 0, simulated = 0;
    for (std::size_t at = 0; at < points.size(); ++at) {
        const sim::SweepPoint& point = points[at];
        if (!point.simulated()) {
            EXPECT_EQ(point.place, 0u);
            EXPECT_FALSE(point.pareto);
            continue;
        }
        EXPECT_EQ(point.place, ++simulated);
        if (at > 0 && points[at - 1].simulated()) {
            EXPECT_LE(time(points[at - 1]), time(point));
        }
        // Beaten: another is no slower and no larger, and better in one (or equal, numbered lower).
        bool beaten = false;
        for (const sim::SweepPoint& other : points)
            beaten |=
                other.simulated() && &other != &point && time(other) <= time(point) &&
                other.peak_memory_bytes <= point.peak_memory_bytes &&
                (time(other) < time(point) || other.peak_memory_bytes < point.peak_memory_bytes ||
                 other.index < point.index);
        EXPECT_EQ(point.pareto, !beaten) << point.index;
        front += point.pareto ? 1 : 0;
    }
    EXPECT_GE(front, 1u);
}

TEST(Sweep, TheFrontOfATradeOffIsItsStaircase) {
    // (index, step time, peak memory): 0, 5, 1 and 4 are the front (5 ties 0 exactly: neither
    // beats the other), 2 and 3 are beaten by 1, and 6 could not run.
    std::vector<sim::SweepPoint> points;
    for (const auto& [index, time, memory] : std::vector<std::tuple<int, int, int>>{
             {3, 15, 30}, {0, 10, 50}, {2, 12, 40}, {1, 12, 30}, {4, 20, 10}, {5, 10, 50}}) {
        sim::SweepPoint point;
        point.index = index;
        point.step_time_ns = time;
        point.peak_memory_bytes = memory;
        points.push_back(point);
    }
    points.push_back(sim::SweepPoint{});
    points.back().index = 6;
    points.back().error = "hangs";
    sim::rank_sweep(points);
    std::vector<std::size_t> order, front;
    for (const sim::SweepPoint& point : points) {
        order.push_back(point.index);
        if (point.pareto)
            front.push_back(point.index);
    }
    EXPECT_EQ(order, (std::vector<std::size_t>{0, 5, 1, 2, 3, 4, 6}));
    EXPECT_EQ(front, (std::vector<std::size_t>{0, 5, 1, 4}));
    EXPECT_EQ(points[2].place, 3u);
    EXPECT_EQ(points[6].place, 0u);
}

TEST(Sweep, AConfigurationThatCannotRunIsKeptWithWhy) {
    const SweepGrid grid(unit_experiment(),
                         {parse_sweep_flag("kind=1F1B"), parse_sweep_flag("v=1,2")});
    const std::vector<sim::SweepPoint> points = sim::run_sweep(grid, SweepShard{}, 1);
    ASSERT_EQ(points.size(), 2u);
    EXPECT_TRUE(points[0].simulated());
    EXPECT_EQ(points[1].index, 1u);
    EXPECT_NE(points[1].error.find("v must be 1 (got v=2)"), std::string::npos) << points[1].error;
}

}  // namespace
}  // namespace pipelens

namespace pipelens {
namespace {

// Whole-model costs of one sequence, F = I = W = 64 us, and a global batch of 64 sequences.
Experiment model_of_64_sequences() {
    Experiment experiment = plain_experiment();
    experiment.forward_ns = experiment.input_ns = experiment.weight_ns = {64'000};
    experiment.cost_scope = CostScope::model;
    return experiment;
}

TEST(SweepBasis, FlatPerStageCostsOverPpAndMRankPerMicrobatchAndSayWhy) {
    const SweepGrid grid(unit_experiment(),
                         {parse_sweep_flag("kind=1F1B,ZBVZeroBubble"), parse_sweep_flag("pp=4,8"),
                          parse_sweep_flag("m=8,64")});
    const sim::SweepBasis basis = sim::sweep_basis(grid, 0);
    EXPECT_EQ(basis.ranking, sim::SweepRanking::per_microbatch);
    EXPECT_EQ(basis.why,
              "flat per-stage costs make the model grow with pp x v (give --costs-per model or "
              "layer, or a [transformer]); m microbatches of a fixed size make the batch grow "
              "with m (give --global-batch)");
    // 1F1B pp=4 m=8 does an eighth of m=64's work: per microbatch it is the slower,
    // (8 + 3) x 3 us / 8 against (64 + 3) x 3 us / 64.
    const std::vector<sim::SweepPoint> points = sim::run_sweep(grid, SweepShard{}, 1);
    const auto place_of = [&](int pp, int m) {
        for (const sim::SweepPoint& point : points)
            if (point.schedule == "1F1B" && point.pp == pp && point.m == m)
                return point.place;
        return std::size_t{0};
    };
    EXPECT_LT(place_of(4, 64), place_of(4, 8));
    EXPECT_LT(place_of(8, 64), place_of(8, 8));
}

TEST(SweepBasis, WholeModelCostsAndAGlobalBatchRankByTheStep) {
    const SweepGrid grid(
        model_of_64_sequences(),
        {parse_sweep_flag("kind=1F1B"), parse_sweep_flag("pp=4,8"), parse_sweep_flag("m=8,64")});
    EXPECT_EQ(sim::sweep_basis(grid, 0).ranking, sim::SweepRanking::per_microbatch);
    EXPECT_EQ(sim::sweep_basis(grid, 0).why,
              "m microbatches of a fixed size make the batch grow with m (give --global-batch)");
    EXPECT_EQ(sim::sweep_basis(grid, 64).ranking, sim::SweepRanking::per_global_batch);
    EXPECT_EQ(sim::sweep_basis(grid, 64).why, "");
    // Per stage and microbatch F = 64 us x (64 / m sequences) / pp, B = 2F; 1F1B without
    // transfer time takes (m + pp - 1)(F + B): pp=8 stages cost half of pp=4's, m=64's
    // microbatches an eighth of m=8's.
    const std::vector<sim::SweepPoint> points = sim::run_sweep(grid, SweepShard{}, 1, {}, 64);
    std::vector<std::tuple<int, int, std::int64_t>> ranked;
    for (const sim::SweepPoint& point : points)
        ranked.emplace_back(point.pp, point.m, point.step_time_ns);
    EXPECT_EQ(ranked, (std::vector<std::tuple<int, int, std::int64_t>>{
                          {8, 64, 71 * 24'000},     // F 8 us, B 16 us
                          {8, 8, 15 * 192'000},     // F 64 us, B 128 us
                          {4, 64, 67 * 48'000},     // F 16 us, B 32 us
                          {4, 8, 11 * 384'000}}));  // F 128 us, B 256 us
    EXPECT_TRUE(points[0].pareto);
}

// 1F1B pp=4 m=8 over a 16-layer transformer of microbatches of one sequence.
Experiment transformer_experiment() {
    return parse_experiment_toml(R"([schedule]
kind = "1F1B"
pp = 4
m = 8
[transformer]
layers = 16
hidden = 2048
heads = 16
sequence = 2048
microbatch_size = 1
device_tflops = 400
)",
                                 "tr.toml");
}

TEST(SweepBasis, AMicrobatchSizeAxisChangesTheBatchAndRanksPerSequence) {
    const SweepGrid grid(
        transformer_experiment(),
        {parse_sweep_flag("m=8,16"), parse_sweep_flag("transformer.microbatch_size=1,2")});
    const sim::SweepBasis basis = sim::sweep_basis(grid, 0);
    EXPECT_EQ(basis.ranking, sim::SweepRanking::per_sequence);
    EXPECT_EQ(basis.why,
              "m microbatches of a fixed size make the batch grow with m (give --global-batch); "
              "transformer.microbatch_size makes the batch m x the microbatch size (give "
              "--global-batch and sweep m in its place)");
    // Each step's time is its sequences' (m x size) times the bubble's share: per sequence,
    // m = 16 ties at either size and beats m = 8, the smaller microbatch first by its memory.
    // Per microbatch (the step over m alone), m = 8 of one sequence would come second.
    std::vector<std::tuple<int, int, std::int64_t>> ranked;
    for (const sim::SweepPoint& point : sim::run_sweep(grid, SweepShard{}, 1))
        ranked.emplace_back(point.m, point.microbatch_size, point.step_time_ns);
    EXPECT_EQ(
        ranked,
        (std::vector<std::tuple<int, int, std::int64_t>>{
            {16, 1, 137'095'355}, {16, 2, 274'190'710}, {8, 1, 79'370'995}, {8, 2, 158'741'990}}));
}

TEST(SweepBasis, ATransformerAxisThatChangesTheModelSaysSo) {
    const SweepGrid grid(transformer_experiment(),
                         {parse_sweep_flag("transformer.hidden=1024,2048"),
                          parse_sweep_flag("transformer.sequence=2048")});
    EXPECT_EQ(sim::sweep_basis(grid, 64).ranking, sim::SweepRanking::per_microbatch);
    EXPECT_EQ(sim::sweep_basis(grid, 64).why,
              "transformer.hidden changes the model itself (each value trains another one)");
    // How the same model runs keeps it fixed.
    const SweepGrid faster(transformer_experiment(),
                           {parse_sweep_flag("transformer.device_tflops=400,800")});
    EXPECT_EQ(sim::sweep_basis(faster, 0).ranking, sim::SweepRanking::per_global_batch);
}

// --global-batch sets every microbatch's size: an axis of sizes would only relabel one
// configuration, so it is refused before anything runs.
TEST(SweepBasis, AMicrobatchSizeAxisBesideAGlobalBatchIsRefused) {
    const SweepGrid grid(transformer_experiment(),
                         {parse_sweep_flag("transformer.microbatch_size=1,2")});
    EXPECT_EQ(testing::thrown_message<ExperimentError>(
                  [&] { sim::run_sweep(grid, SweepShard{}, 1, {}, 16); }, "no error"),
              "transformer.microbatch_size is swept, and --global-batch 16 sets every microbatch "
              "to 16 / m sequences, so its values would label configurations that are the same: "
              "sweep m (schedule.m) for other microbatch sizes, or leave out --global-batch");
}

TEST(SweepBasis, AGlobalBatchMIsNotADivisorOfIsRefusedForThatConfiguration) {
    const SweepGrid grid(model_of_64_sequences(),
                         {parse_sweep_flag("pp=2"), parse_sweep_flag("m=8,7")});
    const std::vector<sim::SweepPoint> points = sim::run_sweep(grid, SweepShard{}, 1, {}, 64);
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[1].error,
              "m=7 does not divide --global-batch 64: a microbatch holds whole sequences");
}

}  // namespace
}  // namespace pipelens
