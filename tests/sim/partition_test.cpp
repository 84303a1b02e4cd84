// The partition search against brute force: on every split of small models (seeded random
// per-layer costs, several schedules), the split it returns has the least simulated step of all;
// and the helpers that name a split (split points, the even split) with exact values.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "sim/partition.hpp"

namespace pipelens::sim {
namespace {

LayerCosts random_layers(int count, std::uint32_t seed) {
    std::mt19937 random(seed);
    const auto microseconds = [&](int low, int high) {
        return std::int64_t{1000} * (low + static_cast<int>(random() % (high - low + 1)));
    };
    LayerCosts costs;
    for (int layer = 0; layer < count; ++layer) {
        costs.names.push_back("layers." + std::to_string(layer));
        costs.forward_ns.push_back(microseconds(1, 9));
        costs.input_ns.push_back(microseconds(1, 9));
        costs.weight_ns.push_back(microseconds(1, 9));
        costs.backward_ns.push_back(costs.input_ns.back() + costs.weight_ns.back());
        costs.held_bytes.push_back(1024);
        costs.output_bytes.push_back(256);
        costs.gradient_bytes.push_back(0);
        costs.backward_peak_bytes.push_back(0);
    }
    costs.loss.forward_ns = microseconds(0, 20);
    return costs;
}

Experiment experiment_of(const std::string& kind, int pp, int v, int m, const LayerCosts& costs) {
    Experiment experiment = plain_experiment();
    experiment.shape.kind = parse_schedule_kind(kind);
    experiment.shape.rank_count = pp;
    experiment.shape.stages_per_rank = v;
    experiment.shape.microbatch_count = m;
    experiment.forward_ns = experiment.input_ns = experiment.weight_ns = {};
    experiment.layers = costs;
    experiment.intra_host.latency_ns = 300;
    return experiment;
}

// Every composition of `layers` into `stages` positive parts, in lexicographic order.
void each_split(int layers, int stages, const std::function<void(const std::vector<int>&)>& use) {
    std::vector<int> counts;
    std::function<void(int)> grow = [&](int left) {
        if (static_cast<int>(counts.size()) == stages - 1) {
            counts.push_back(left);
            use(counts);
            counts.pop_back();
            return;
        }
        for (int size = 1; size <= left - (stages - 1 - static_cast<int>(counts.size())); ++size) {
            counts.push_back(size);
            grow(left - size);
            counts.pop_back();
        }
    };
    grow(layers);
}

struct BruteCase {
    std::string kind;
    int pp, v, m, layers;
};

TEST(Partition, FindsTheLeastSimulatedStepOfEverySplit) {
    const BruteCase cases[] = {
        {"1F1B", 2, 1, 4, 12},
        {"1F1B", 4, 1, 8, 10},
        {"1F1B", 6, 1, 6, 9},
        {"GPipe", 3, 1, 4, 24},
        {"Interleaved1F1B", 2, 2, 4, 9},
        {"ZBVZeroBubble", 2, 2, 4, 8},
        {"InterleavedZeroBubble", 4, 1, 8, 9},
        {"DualPipeV", 2, 2, 4, 7},
        {"ZeroBubbleAuto", 3, 1, 6, 8},
    };
    std::uint32_t seed = 1;
    for (const BruteCase& c : cases) {
        SCOPED_TRACE(fmt::format("{} pp={} v={} m={} layers={}", c.kind, c.pp, c.v, c.m, c.layers));
        const Experiment experiment =
            experiment_of(c.kind, c.pp, c.v, c.m, random_layers(c.layers, seed++));
        std::int64_t least = std::numeric_limits<std::int64_t>::max();
        std::size_t splits = 0;
        each_split(c.layers, c.pp * c.v, [&](const std::vector<int>& counts) {
            ++splits;
            least = std::min(least, simulated_step_of_split(experiment, counts));
        });
        const PartitionResult result = best_partition(experiment);
        EXPECT_TRUE(result.proven_optimal);
        EXPECT_EQ(result.step_ns, least);
        EXPECT_EQ(result.lower_bound_ns, least);
        EXPECT_EQ(simulated_step_of_split(experiment, result.layers_per_stage), least);
        EXPECT_LE(result.splits_simulated, splits);
        EXPECT_LE(result.step_ns, result.even_step_ns);
    }
}

TEST(Partition, AHeavyFirstLayerGetsAStageOfItsOwn) {
    LayerCosts costs = random_layers(4, 7);
    for (int layer = 0; layer < 4; ++layer)
        costs.forward_ns[layer] = costs.input_ns[layer] = costs.weight_ns[layer] =
            layer == 0 ? 3000 : 1000;
    for (int layer = 0; layer < 4; ++layer)
        costs.backward_ns[layer] = 2 * costs.forward_ns[layer];
    costs.loss = {};
    Experiment experiment = experiment_of("GPipe", 2, 1, 8, costs);
    experiment.intra_host.latency_ns = 0;
    const PartitionResult result = best_partition(experiment);
    EXPECT_EQ(result.layers_per_stage, (std::vector<int>{1, 3}));
    EXPECT_EQ(result.even_layers_per_stage, (std::vector<int>{2, 2}));
    // GPipe, no transfer time: stage work per microbatch {9, 9} us (F 3, B 6 | F 3, B 6) for
    // {1, 3} against {12, 6} for {2, 2}: 8 forwards and 8 backwards of the slower stage plus one
    // microbatch's pass through the other.
    EXPECT_EQ(result.step_ns, 8 * 9000 + 9000);
    EXPECT_EQ(result.even_step_ns, 8 * 12000 + 6000);
}

TEST(Partition, ALimitedSearchSaysSoAndBoundsTheOptimum) {
    const Experiment experiment = experiment_of("GPipe", 4, 1, 8, random_layers(16, 11));
    const PartitionResult exact = best_partition(experiment);
    ASSERT_GE(exact.splits_simulated, 2u);
    const PartitionResult limited =
        best_partition(experiment, {exact.splits_simulated - 1, 20'000'000});
    EXPECT_FALSE(limited.proven_optimal);
    EXPECT_EQ(limited.splits_simulated, exact.splits_simulated - 1);
    EXPECT_LE(limited.lower_bound_ns, exact.step_ns);
    EXPECT_GE(limited.step_ns, exact.step_ns);
}

// A long search says how far it is: the stage table row by row to the layer count, then each
// split simulated against the limit, and the last report is where the search ended.
TEST(Partition, TheSearchReportsItsProgressPhaseByPhase) {
    const Experiment experiment = experiment_of("GPipe", 4, 1, 8, random_layers(16, 11));
    std::vector<std::tuple<std::string, std::size_t, std::size_t>> reports;
    const PartitionResult result = best_partition(
        experiment, {}, [&](std::string_view phase, std::size_t done, std::size_t total) {
            reports.emplace_back(std::string(phase), done, total);
        });
    ASSERT_GE(reports.size(), 17u);
    for (std::size_t row = 0; row < 16; ++row)
        EXPECT_EQ(reports[row],
                  std::make_tuple(std::string("pricing stages"), row + 1, std::size_t{16}));
    const PartitionLimits limits;
    EXPECT_EQ(reports.back(),
              std::make_tuple(std::string("simulating splits"), result.splits_simulated,
                              limits.max_splits_simulated));
}

TEST(Partition, SplitPointsNameTheFirstLayerOfEveryLaterStage) {
    const LayerCosts costs = random_layers(6, 3);
    EXPECT_EQ(split_points_for(costs, {1, 3, 2}),
              (std::vector<std::string>{"layers.1", "layers.4"}));
    EXPECT_EQ(even_layers_per_stage(10, 4), (std::vector<int>{3, 3, 2, 2}));
}

TEST(Partition, RefusesFewerLayersThanStages) {
    const Experiment experiment = experiment_of("1F1B", 4, 1, 4, random_layers(3, 1));
    EXPECT_THROW(best_partition(experiment), ExperimentError);
}

}  // namespace
}  // namespace pipelens::sim
