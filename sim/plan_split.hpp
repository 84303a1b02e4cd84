// The planner's uneven splits: for one layout, the contiguous split of its layers that
// sim/partition finds fastest on the plan's own per-layer costs (plan_layer_costs: the embedding
// on the first layer, the output layer and loss on the last stage), priced again by the plan
// and kept only when it beats the even split.
//
// Invariants: the split returned is never slower than the even one by the plan's own pricing
// (evaluate_layout), and never turns a layout that fits in memory into one that does not; its
// result keeps the even split's step in even_step_time_ns. The search stays small: each one is
// capped (kPlanSplitLimits), only layouts that fit are searched (the others rank by memory,
// which the search does not minimise), and only those whose least possible step
// (least_step_of_any_split) is below the even step of the top's last layout.
#pragma once

#include "sim/partition.hpp"
#include "sim/training_plan.hpp"

namespace pipelens::sim {

// Small: a plan prices every layout, and a few simulated splits find the usual gain (layers
// moved off the embedding's and the output layer's stages); a search stopped at these limits
// still returns the best split it simulated.
inline constexpr PartitionLimits kPlanSplitLimits{12, 20'000};

// `even` (evaluate_layout of an evenly split layout) or, when partition's best split of that
// layout prices faster and fits wherever the even one fits, that split's result.
PlanResult with_best_split(const PlanResult& even, const ModelSpec& model,
                           const ClusterSpec& cluster, const PlanOptions& options,
                           const PartitionLimits& limits = kPlanSplitLimits,
                           const PartitionProgress& progress = {});

// No split of `even`'s layout takes less: its stages' work spread perfectly over its pp ranks
// (a rank runs one action at a time), plus the optimizer step and, when not overlapped, the
// data-parallel reduction, both of which only grow when a rank holds more layers than its even
// share. 0 when an overlap may hide arithmetic (overlap_efficiency above 0).
std::int64_t least_step_of_any_split(const PlanResult& even, const ModelSpec& model,
                                     const ClusterSpec& cluster, const PlanOptions& options);

// Each fitting result of `ranked` (ranked by rank_results, evenly split) that could rank among
// options.uneven_split_top with its best split replaced by with_best_split; not re-ranked.
// `progress` hears kUnevenSplitPhase in thousandths of a search (kSearchShares each): the
// searches' shares done out of theirs, a search's stage table being its first half and the
// split search its second, so a few long searches (thousands of layers) still move the count.
inline constexpr std::string_view kUnevenSplitPhase = "searching uneven splits";
inline constexpr std::size_t kSearchShares = 1000;
void search_uneven_splits(std::vector<PlanResult>& ranked, const ModelSpec& model,
                          const ClusterSpec& cluster, const PlanOptions& options,
                          const PlanProgress& progress = {});

// The experiment sim/partition searches for `layout`: its schedule shape, the plan's per-layer
// costs and the cluster's links, ranks in Megatron's order.
Experiment plan_split_experiment(const PlanLayout& layout, const ModelSpec& model,
                                 const ClusterSpec& cluster, const PlanOptions& options);

}  // namespace pipelens::sim
