// The chain bounds of `pipelens partition`: exact chains and lengths on hand-computed 1F1B
// pipelines (including one where the textbook (m - 1) max(F + B) + sum(F + B) overshoots the
// step), and on seeded random splits of eight schedules that no chain, found under the split
// itself or under another split, is longer than the simulated step.
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "engine/run_record/experiment_schedule.hpp"
#include "engine/schedule/generate.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/partition.hpp"
#include "sim/partition_paths.hpp"
#include "sim/simulator.hpp"

namespace pipelens::sim {
namespace {

Schedule one_f_one_b(int pp, int m) {
    ScheduleShape shape;
    shape.kind = ScheduleKind::one_f_one_b;
    shape.rank_count = pp;
    shape.microbatch_count = m;
    return generate_schedule(shape);
}

CostModel two_stages(StageCost first, StageCost last, std::int64_t latency_ns) {
    CostModel costs;
    costs.stages = {first, last};
    costs.intra_host.latency_ns = latency_ns;
    return costs;
}

StageCost forward_backward(std::int64_t forward, std::int64_t backward) {
    StageCost cost;
    cost.forward_ns = forward;
    cost.input_ns = backward;
    cost.weight_ns = 0;
    return cost;
}

TEST(PartitionPaths, TheTextbookOneFOneBFormulaOvershootsWhenWarmUpHidesTheRoundTrip) {
    // Stage 0 F 1 us, B 10 us; stage 1 F 1, B 1; m = 2, free transfers. Stage 0 runs F0 F1
    // (warm-up) while microbatch 0 goes down and back, so its B0 starts at 3 us and its two
    // backwards end at 23 us; (m - 1) max(F + B) + sum(F + B) says 11 + 13 = 24 us.
    const Schedule schedule = one_f_one_b(2, 2);
    const CostModel costs =
        two_stages(forward_backward(1000, 10'000), forward_backward(1000, 1000), 0);
    EXPECT_EQ(simulate(schedule, costs).step_time_ns, 23'000);
    const LongestChain chain = ComputationGraph(schedule).longest_chain(costs);
    EXPECT_EQ(chain.length_ns, 23'000);
    // F0 on both stages, B0 on stage 1, then B0 and B1 on stage 0.
    EXPECT_EQ(chain.cut.computations,
              (std::vector<std::array<int, 4>>{{1, 0, 0, 2}, {1, 0, 0, 1}}));
    EXPECT_EQ(chain.cut.crossings_down, std::vector<int>{1});
    EXPECT_EQ(chain.cut.crossings_up, std::vector<int>{1});
    EXPECT_EQ(chain.cut.overlaps, 0);
    EXPECT_EQ(length_of(chain.cut, costs, schedule.stage_to_rank), 23'000);
}

TEST(PartitionPaths, ALastStageBottleneckGivesTheTextbookChain) {
    // Stage 0 F 1 us, B 1; stage 1 F 2, B 4; m = 3, 500 ns a transfer. Microbatch 0 reaches
    // stage 1 at 1.5 us, which then runs all its work (18 us) without a gap, and the last
    // backward comes back: 1 + 0.5 + 18 + 0.5 + 1 = 21 us = (m - 1) 6 + (2 + 6) + 2 x 0.5.
    const Schedule schedule = one_f_one_b(2, 3);
    const CostModel costs =
        two_stages(forward_backward(1000, 1000), forward_backward(2000, 4000), 500);
    EXPECT_EQ(simulate(schedule, costs).step_time_ns, 21'000);
    const LongestChain chain = ComputationGraph(schedule).longest_chain(costs);
    EXPECT_EQ(chain.length_ns, 21'000);
    EXPECT_EQ(chain.cut.computations,
              (std::vector<std::array<int, 4>>{{1, 0, 0, 1}, {3, 0, 0, 3}}));
    EXPECT_EQ(chain.cut.crossings_down, std::vector<int>{1});
    EXPECT_EQ(chain.cut.crossings_up, std::vector<int>{1});
    // The same chain under the first pipeline's costs: F0 1 + B0 10 + 3 x (1 + 1) + 2 x 0 us.
    const CostModel other =
        two_stages(forward_backward(1000, 10'000), forward_backward(1000, 1000), 0);
    EXPECT_EQ(length_of(chain.cut, other, schedule.stage_to_rank), 17'000);
}

LayerCosts random_layers(int count, std::mt19937& random) {
    const auto nanoseconds = [&](int low, int high) {
        return std::int64_t{100} * (low + static_cast<int>(random() % (high - low + 1)));
    };
    LayerCosts costs;
    for (int layer = 0; layer < count; ++layer) {
        costs.names.push_back("layers." + std::to_string(layer));
        costs.forward_ns.push_back(nanoseconds(1, 90));
        costs.input_ns.push_back(nanoseconds(1, 90));
        costs.weight_ns.push_back(nanoseconds(1, 90));
        costs.backward_ns.push_back(costs.input_ns.back() + costs.weight_ns.back());
        costs.held_bytes.push_back(1024);
        costs.output_bytes.push_back(1000 * (1 + static_cast<int>(random() % 50)));
        costs.gradient_bytes.push_back(0);
        costs.backward_peak_bytes.push_back(0);
    }
    costs.loss.forward_ns = nanoseconds(0, 200);
    return costs;
}

std::vector<int> random_split(int layers, int stages, std::mt19937& random) {
    std::vector<int> counts(stages, 1);
    for (int layer = stages; layer < layers; ++layer)
        ++counts[random() % stages];
    return counts;
}

struct Shape {
    std::string kind;
    int pp, v, m;
};

TEST(PartitionPaths, NoChainOfAnySplitIsLongerThanTheSimulatedStep) {
    const Shape shapes[] = {
        {"1F1B", 4, 1, 8},
        {"GPipe", 3, 1, 5},
        {"Interleaved1F1B", 2, 2, 4},
        {"InterleavedZeroBubble", 4, 1, 8},
        {"ZBVZeroBubble", 2, 2, 4},
        {"DualPipeV", 2, 2, 4},
        {"ZeroBubbleH2", 3, 1, 6},
        {"1F1B", 6, 1, 12},
    };
    std::mt19937 random(5);
    int exact = 0;  // chains as long as the step: the bound is tight where transfers never queue
    for (const Shape& shape : shapes)
        for (const bool slow_rank : {false, true}) {
            SCOPED_TRACE(fmt::format("{} pp={} v={} m={} slowdown={}", shape.kind, shape.pp,
                                     shape.v, shape.m, slow_rank));
            const int stages = shape.pp * shape.v, layers = stages + 7;
            Experiment experiment = plain_experiment();
            experiment.shape.kind = parse_schedule_kind(shape.kind);
            experiment.shape.rank_count = shape.pp;
            experiment.shape.stages_per_rank = shape.v;
            experiment.shape.microbatch_count = shape.m;
            experiment.forward_ns = experiment.input_ns = experiment.weight_ns = {};
            experiment.layers = random_layers(layers, random);
            experiment.intra_host = {700, 2.0};
            experiment.inter_host = {2000, 0.5};
            experiment.ranks_per_host = 2;
            if (slow_rank) {
                experiment.rank_slowdown.assign(shape.pp, 1.0);
                experiment.rank_slowdown[1] = 1.37;
            }
            std::vector<PathCut> cuts;
            for (int trial = 0; trial < 6; ++trial) {
                Experiment split = experiment;
                split.model.split_points =
                    split_points_for(*experiment.layers, random_split(layers, stages, random));
                const Schedule schedule = lowered_schedule_for(split);
                const CostModel costs = cost_model_for(split, schedule.stage_count);
                const std::int64_t step = simulate(schedule, costs).step_time_ns;
                const LongestChain chain = ComputationGraph(schedule).longest_chain(costs);
                EXPECT_GT(chain.length_ns, 0);
                EXPECT_LE(chain.length_ns, step);
                exact += chain.length_ns == step;
                const std::int64_t length = length_of(chain.cut, costs, schedule.stage_to_rank);
                if (slow_rank)
                    EXPECT_LE(length, chain.length_ns);
                else
                    EXPECT_EQ(length, chain.length_ns);
                for (const PathCut& cut : cuts)
                    EXPECT_LE(length_of(cut, costs, schedule.stage_to_rank), step);
                cuts.push_back(chain.cut);
            }
        }
    EXPECT_GT(exact, 0);
}

}  // namespace
}  // namespace pipelens::sim
