// The planner's uneven splits (sim/plan_split.hpp) and pinned splits: per-layer costs add up to
// the plan's own stages; a pinned split pins pp and v and is refused naming both layer counts;
// the chosen split is the best of every split by brute force (each simulated by the plan) when
// the output layer makes the last stage heavy; no split beats the least step bound; and the
// search of a default plan stays small.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sim/plan_split.hpp"
#include "sim/training_plan.hpp"
#include "tests/sim/plan_specs.hpp"

namespace pipelens::sim {
namespace {

using testing::plain_options;

// 100 TFLOP/s achieved in full, so stage times add up without rounding.
ClusterSpec cluster_of(int gpus, double hbm_gb_per_s) {
    return testing::cluster_of(gpus, hbm_gb_per_s, 100, 1);
}

// Every split of `layers` into `stages` non-empty stages, in lexicographic order.
std::vector<std::vector<int>> every_split(int layers, int stages) {
    std::vector<std::vector<int>> out;
    std::vector<int> counts;
    std::function<void(int)> fill = [&](int left) {
        if (static_cast<int>(counts.size()) == stages - 1) {
            counts.push_back(left);
            out.push_back(counts);
            counts.pop_back();
            return;
        }
        const int later = stages - 1 - static_cast<int>(counts.size());
        for (int count = 1; count <= left - later; ++count) {
            counts.push_back(count);
            fill(left - count);
            counts.pop_back();
        }
    };
    fill(layers);
    return out;
}

TEST(PlanSplit, PerLayerCostsAreOneLayerOfAStageAndTheOutputLayerIsTheLoss) {
    // 100 TFLOP/s: 1e5 FLOPs per ns; memory-bound work unpriced, so matrix multiplies alone.
    const ModelSpec model{{4, 1024, 16, 512, 8000}, 8};
    const PlanLayout layout{1, 2, 1, ScheduleKind::one_f_one_b, 1, 1, 8};
    const LayerCosts costs = plan_layer_costs(layout, model, cluster_of(2, 0), plain_options());
    const double sbh = 512.0 * 1024, logits = 2 * sbh * 8000;
    const auto ns = [](double flops) { return static_cast<std::int64_t>(std::ceil(flops / 1e5)); };
    ASSERT_EQ(costs.names.size(), 4u);
    EXPECT_EQ(costs.names[3], "layers.3");
    for (int layer = 0; layer < 4; ++layer) {
        EXPECT_EQ(costs.forward_ns[layer], ns(sbh * (24 * 1024 + 4 * 512)));
        EXPECT_EQ(costs.input_ns[layer], ns(sbh * (24 * 1024 + 8 * 512)));
        EXPECT_EQ(costs.weight_ns[layer], ns(sbh * 24 * 1024));
        EXPECT_EQ(costs.output_bytes[layer], 512 * 1024 * 2);
    }
    EXPECT_EQ(costs.loss.forward_ns,
              ns(sbh * (24 * 1024 + 4 * 512) + logits) - ns(sbh * (24 * 1024 + 4 * 512)));
    EXPECT_EQ(costs.loss.weight_ns, ns(sbh * 24 * 1024 + logits) - ns(sbh * 24 * 1024));
}

TEST(PlanSplit, APinnedSplitPinsPpAndVAndKeepsItsLayers) {
    const ModelSpec model{{8, 1024, 16, 512, 1000}, 16};
    PlanOptions options = plain_options();
    options.pins.layers_per_stage = {3, 2, 2, 1};
    const auto four = plan_training(model, cluster_of(8, 0), options);
    ASSERT_FALSE(four.empty());
    for (const PlanResult& result : four) {
        EXPECT_EQ(result.layout.pp, 4);
        EXPECT_EQ(result.layout.v, 1);
        EXPECT_EQ(result.layers_per_stage, (std::vector<int>{3, 2, 2, 1}));
    }
    options.pins.pp = 2;  // four stages on two ranks: v = 2
    for (const PlanResult& result : plan_training(model, cluster_of(8, 0), options)) {
        EXPECT_EQ(result.layout.pp, 2);
        EXPECT_EQ(result.layout.v, 2);
        EXPECT_TRUE(is_multi_stage(result.layout.schedule));
    }
    options.pins.pp = 3;
    try {
        plan_training(model, cluster_of(6, 0), options);
        FAIL() << "three ranks cannot hold four stages";
    } catch (const PlanError& error) {
        EXPECT_STREQ(error.what(),
                     "--layout has 4 stages: --pp 3 must divide them (pp x v stages)");
    }
    options.pins.pp.reset();
    options.pins.layers_per_stage = {3, 3, 3};
    try {
        plan_training(model, cluster_of(6, 0), options);
        FAIL() << "nine layers are not the model's eight";
    } catch (const PlanError& error) {
        EXPECT_STREQ(error.what(), "--layout has 9 transformer layers, the model 8 (--layers)");
    }
}

// The best of every split of `layers` over `layout`'s stages, each simulated by the plan: the
// first of the least step, in lexicographic order.
PlanResult brute_force(const PlanLayout& layout, const ModelSpec& model, const ClusterSpec& cluster,
                       const PlanOptions& options) {
    PlanResult best;
    for (const std::vector<int>& split :
         every_split(static_cast<int>(model.shape.layers), layout.pp * layout.v)) {
        const PlanResult result = evaluate_layout(layout, model, cluster, options, split);
        if (best.layers_per_stage.empty() || result.step_time_ns < best.step_time_ns)
            best = result;
    }
    return best;
}

// 2^17 FLOPs per ns and 2,048 GB/s, so a stage's times are exactly its layers' sums (nothing
// rounds), the output layer and its fp32 cross entropy over a vocabulary of 24,000 on the last
// stage and the embedding's memory-bound work on the first.
struct HeavyEnds {
    ModelSpec model{{12, 1024, 16, 512, 24000}, 8};
    ClusterSpec cluster;
    PlanOptions options = plain_options();

    explicit HeavyEnds(const PlanLayout& layout) : cluster(cluster_of(layout.pp, 2048)) {
        cluster.peak_tflops = 131.072;
        options.pins = {layout.tp, layout.pp,       layout.dp, layout.v, layout.microbatch_size,
                        layout.m,  layout.schedule, {}};
        options.uneven_splits = true;
    }

    PlanResult chosen() const {
        const std::vector<PlanResult> results = plan_training(model, cluster, options);
        EXPECT_EQ(results.size(), 1u);
        return results.front();
    }
};

TEST(PlanSplit, TheChosenSplitIsTheBestOfEverySplitAndMovesLayersOffTheLastStage) {
    const PlanLayout layout{1, 4, 1, ScheduleKind::one_f_one_b, 1, 1, 8};
    const HeavyEnds plan(layout);
    const PlanResult best = brute_force(layout, plan.model, plan.cluster, plan.options);
    const PlanResult chosen = plan.chosen();
    EXPECT_EQ(chosen.layers_per_stage, best.layers_per_stage);  // of 165 splits
    EXPECT_EQ(chosen.step_time_ns, best.step_time_ns);
    EXPECT_EQ(chosen.layers_per_stage, (std::vector<int>{3, 4, 4, 1}));
    const PlanResult even = evaluate_layout(layout, plan.model, plan.cluster, plan.options);
    EXPECT_EQ(chosen.even_step_time_ns, even.step_time_ns);
    EXPECT_LT(chosen.step_time_ns, chosen.even_step_time_ns);
    EXPECT_LE(least_step_of_any_split(even, plan.model, plan.cluster, plan.options),
              best.step_time_ns);
}

TEST(PlanSplit, AnInterleavedLayoutsChosenSplitIsTheBestOfEverySplit) {
    const PlanLayout layout{1, 2, 1, ScheduleKind::interleaved_1f1b, 2, 1, 8};
    const HeavyEnds plan(layout);
    const PlanResult best = brute_force(layout, plan.model, plan.cluster, plan.options);
    const PlanResult chosen = plan.chosen();
    EXPECT_EQ(chosen.layers_per_stage, best.layers_per_stage);
    EXPECT_EQ(chosen.step_time_ns, best.step_time_ns);
    EXPECT_EQ(chosen.layers_per_stage, (std::vector<int>{3, 4, 4, 1}));
    EXPECT_LT(chosen.step_time_ns, chosen.even_step_time_ns);
    const PlanResult even = evaluate_layout(layout, plan.model, plan.cluster, plan.options);
    EXPECT_LE(least_step_of_any_split(even, plan.model, plan.cluster, plan.options),
              best.step_time_ns);
}

// The README's model on 8 GPUs with the command's defaults, uneven splits searched.
struct DefaultPlan {
    ModelSpec model{{8, 1024, 16, 512, 1000}, 16};
    ClusterSpec cluster = cluster_of(8, 3350);
    PlanOptions options = plain_options();

    DefaultPlan() {
        cluster.peak_tflops = 989;
        cluster.achieved_fraction = 0.7;
        cluster.links = {450, 1, 50, 5, 6.6};
        options.uneven_splits = true;
    }

    std::vector<PlanResult> run(const PlanProgress& progress = {}) const {
        return plan_training(model, cluster, options, progress);
    }
};

// Of the default plan's 59 layouts only those that could rank in the top 10 are searched, each
// at most kPlanSplitLimits' splits.
TEST(PlanSplit, TheSearchOfADefaultPlanStaysSmall) {
    const std::vector<PlanResult> results = DefaultPlan().run();
    ASSERT_EQ(results.size(), 59u);
    std::size_t searched = 0, simulated = 0;
    for (const PlanResult& result : results) {
        searched += result.split_search_simulations > 0 ? 1 : 0;
        simulated += result.split_search_simulations;
        EXPECT_LE(result.split_search_simulations, kPlanSplitLimits.max_splits_simulated);
    }
    // 10 layouts simulate splits today, 18 splits in all (the other searches end on the bound
    // without simulating one): a search of every layout, or an uncapped one, goes past these.
    EXPECT_GT(searched, 0u);
    EXPECT_LE(searched, 30u);
    EXPECT_LE(simulated, 30 * kPlanSplitLimits.max_splits_simulated);
}

// What a long plan reports: its layouts priced, then its uneven searches, each phase counted up
// to its own total, on the calling thread.
TEST(PlanSplit, ProgressCountsEachPhaseUpToItsTotal) {
    struct Report {
        std::string phase;
        std::size_t done, total;
    };
    std::vector<Report> reports;
    const std::thread::id caller = std::this_thread::get_id();
    const std::vector<PlanResult> results =
        DefaultPlan().run([&](std::string_view phase, std::size_t done, std::size_t total) {
            EXPECT_EQ(std::this_thread::get_id(), caller);
            reports.push_back({std::string(phase), done, total});
        });
    // A search can end without simulating a split (the bound proves the even one best), so the
    // layouts that simulated some are at least counted, and at most every fitting layout is.
    std::size_t simulated = 0, fitting = 0;
    for (const PlanResult& result : results) {
        simulated += result.split_search_simulations > 0 ? 1 : 0;
        fitting += result.fits ? 1 : 0;
    }
    std::vector<std::string> phases;
    std::map<std::string, Report> last;
    for (const Report& report : reports) {
        if (phases.empty() || phases.back() != report.phase)
            phases.push_back(report.phase);
        if (last.contains(report.phase)) {
            EXPECT_GE(report.done, last.at(report.phase).done) << report.phase;
        }
        last.insert_or_assign(report.phase, report);
    }
    ASSERT_EQ(phases, (std::vector<std::string>{"pricing layouts", "searching uneven splits"}));
    EXPECT_EQ(last.at("pricing layouts").total, 59u);
    EXPECT_EQ(last.at("pricing layouts").done, 59u);
    // The searches report their shares (kSearchShares each), so a few long ones still move it.
    const Report searches = last.at("searching uneven splits");
    EXPECT_EQ(searches.total % kSearchShares, 0u);
    EXPECT_GE(searches.total, simulated * kSearchShares);
    EXPECT_GT(simulated, 0u);
    EXPECT_LE(searches.total, fitting * kSearchShares);
    EXPECT_EQ(searches.done, searches.total);
}

}  // namespace
}  // namespace pipelens::sim
