// The plan's layout handed to sim/partition as an experiment of per-layer costs, and the split
// it finds priced back through the plan.
#include "sim/plan_split.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include "engine/run_record/parallel_for.hpp"

namespace pipelens::sim {
namespace {

LinkSpec link_spec(double gb_per_s, double latency_us) {
    return {std::llround(latency_us * 1000), gb_per_s};
}

}  // namespace

Experiment plan_split_experiment(const PlanLayout& layout, const ModelSpec& model,
                                 const ClusterSpec& cluster, const PlanOptions& options) {
    Experiment experiment;
    experiment.name = "plan";
    experiment.source = "pipelens plan";
    experiment.shape = {layout.schedule, layout.pp, layout.v, layout.m};
    experiment.layers = plan_layer_costs(layout, model, cluster, options);
    experiment.intra_host =
        link_spec(cluster.links.intra_host_gb_per_s, cluster.links.intra_host_latency_us);
    experiment.inter_host =
        link_spec(cluster.links.inter_host_gb_per_s, cluster.links.inter_host_latency_us);
    experiment.ranks_per_host = pipeline_ranks_per_host(layout, cluster);
    experiment.overlap_efficiency = options.overlap_efficiency;
    return experiment;
}

PlanResult with_best_split(const PlanResult& even, const ModelSpec& model,
                           const ClusterSpec& cluster, const PlanOptions& options,
                           const PartitionLimits& limits, const PartitionProgress& progress) {
    const PlanLayout& layout = even.layout;
    if (layout.pp * layout.v < 2)
        return even;
    const PartitionResult found =
        best_partition(plan_split_experiment(layout, model, cluster, options), limits, progress);
    PlanResult searched = even;
    searched.split_search_simulations = found.splits_simulated;
    if (found.layers_per_stage == stage_layer_counts(layout, model.shape))
        return searched;
    PlanResult result = evaluate_layout(layout, model, cluster, options, found.layers_per_stage);
    if (result.step_time_ns >= even.step_time_ns || (even.fits && !result.fits))
        return searched;
    result.even_step_time_ns = even.step_time_ns;
    result.split_search_simulations = found.splits_simulated;
    return result;
}

std::int64_t least_step_of_any_split(const PlanResult& even, const ModelSpec& model,
                                     const ClusterSpec& cluster, const PlanOptions& options) {
    if (options.overlap_efficiency > 0)
        return 0;
    const PlanLayout& layout = even.layout;
    const CostModel costs = plan_cost_model(layout, model, cluster, options);
    std::int64_t work = 0;
    for (const StageCost& stage : costs.stages)
        // Less 4 ns per pass (its four parts, each rounded up): another split rounds its
        // stages' times differently.
        work +=
            stage.forward_ns + std::min(stage.backward_ns(), stage.input_ns + stage.weight_ns) - 12;
    std::int64_t least = work * layout.m / layout.pp + even.breakdown.optimizer_ns;
    if (!options.overlap_gradient_reduce)
        least += even.breakdown.data_parallel_ns;
    return least;
}

void search_uneven_splits(std::vector<PlanResult>& ranked, const ModelSpec& model,
                          const ClusterSpec& cluster, const PlanOptions& options,
                          const PlanProgress& progress) {
    const auto fitting = static_cast<std::size_t>(
        std::count_if(ranked.begin(), ranked.end(), [](const PlanResult& r) { return r.fits; }));
    if (fitting == 0 || options.uneven_split_top == 0)
        return;
    // A layout ranks among the top only by beating the even step of the top's last layout.
    const std::int64_t threshold =
        ranked[std::min(fitting, options.uneven_split_top) - 1].step_time_ns;
    std::vector<std::size_t> searched;
    for (std::size_t index = 0; index < fitting; ++index) {
        const PlanLayout& layout = ranked[index].layout;
        if (layout.pp * layout.v >= 2 &&
            (index < options.uneven_split_top ||
             least_step_of_any_split(ranked[index], model, cluster, options) < threshold))
            searched.push_back(index);
    }
    // Each search's share done, written by its worker, summed on the calling thread.
    const auto shares = std::make_unique<std::atomic<std::size_t>[]>(searched.size());
    const auto share_of = [](std::string_view phase, std::size_t done, std::size_t total) {
        const std::size_t half = kSearchShares / 2;
        const std::size_t part = total == 0 ? 0 : std::min(done, total) * half / total;
        return phase == "pricing stages" ? part : half + part;
    };
    run_record::parallel_for(
        searched.size(), 0,
        [&](std::size_t at) {
            PlanResult& result = ranked[searched[at]];
            result =
                with_best_split(result, model, cluster, options, kPlanSplitLimits,
                                [&](std::string_view phase, std::size_t done, std::size_t total) {
                                    // Only this worker writes the slot; a later phase never moves
                                    // it back.
                                    const std::size_t share = share_of(phase, done, total);
                                    if (share > shares[at].load(std::memory_order_relaxed))
                                        shares[at].store(share, std::memory_order_relaxed);
                                });
            shares[at].store(kSearchShares, std::memory_order_relaxed);
        },
        progress ? run_record::ItemProgress([&](std::size_t) {
            std::size_t done = 0;
            for (std::size_t at = 0; at < searched.size(); ++at)
                done += shares[at].load(std::memory_order_relaxed);
            progress(kUnevenSplitPhase, done, searched.size() * kSearchShares);
        })
                 : run_record::ItemProgress());
}

}  // namespace pipelens::sim
