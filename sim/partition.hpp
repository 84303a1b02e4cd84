// `pipelens partition`: the contiguous split of a model's layers over the pp x v stages that
// gives the shortest SIMULATED step for a schedule, found exactly by branch and bound.
//
// Invariants: every candidate split is priced by the one cost path every command uses
// (Experiment [layers] -> cost_model_for -> simulate); a branch is cut only by a bound proven not
// to exceed the simulated step of any split below it (the proof is in partition.cpp), so when
// the search ends within its limits the split returned has the least simulated step of all
// splits (proven_optimal); of equally fast splits the even one is kept, then the first met.
// When a limit stops it first, the result says so and gives the least bound of what was left
// unexplored: no split is faster than lower_bound_ns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/experiment/experiment.hpp"

namespace pipelens::sim {

// The per-layer costs a partition divides: the experiment's [layers] (a calibrated run's
// profile) as they are, or its [transformer] layers, each costing the Zero Bubble paper's FLOPs
// (transformer_flops.hpp). Throws ExperimentError when it has neither.
LayerCosts partition_layer_costs(const Experiment& experiment);

// "layers.K" split points (model.split_points, `--split`) for stages of `layers_per_stage`:
// the first layer of every stage after the first.
std::vector<std::string> split_points_for(const LayerCosts& costs,
                                          const std::vector<int>& layers_per_stage);

// Layers per stage of the even split: as even as possible, earlier stages taking the remainder
// (what a run does without split points).
std::vector<int> even_layers_per_stage(int layers, int stage_count);

// The simulated step of `experiment` (with [layers]) split as `layers_per_stage`.
std::int64_t simulated_step_of_split(Experiment experiment,
                                     const std::vector<int>& layers_per_stage);

// How far the search may go before it stops with the best split found so far. Many splits of
// nearly equal step (a model of identical layers) defeat the bounds; the limits keep such a
// search to about a second.
struct PartitionLimits {
    std::size_t max_splits_simulated = 64;
    std::size_t max_nodes = 500'000;
};

struct PartitionResult {
    std::vector<int> layers_per_stage;  // the best split
    std::int64_t step_ns = 0;
    std::vector<int> even_layers_per_stage;
    std::int64_t even_step_ns = 0;
    std::size_t splits_simulated = 0;  // leaves the bounds did not cut
    std::size_t nodes = 0;             // partial splits visited
    bool proven_optimal = false;       // the search ended within its limits
    std::int64_t lower_bound_ns = 0;   // no split is faster; step_ns when proven_optimal
};

// The best split of `experiment`'s layers (partition_layer_costs) over its pp x v stages, under
// its schedule, microbatches and network. Throws ExperimentError when there are fewer layers
// than stages, and what simulating throws.
// More layers than kMaxPartitionLayers throw ScheduleTooLargeError before any table is built
// (the search's tables hold every run of consecutive layers: memory grows with layers squared).
inline constexpr std::size_t kMaxPartitionLayers = 4096;
// What a long search reports as it goes: the phase ("pricing stages": first layers of the stage
// table done, of the layer count; "bounding partial splits": partial splits visited before the
// first split is simulated, of the node limit; "simulating splits": splits simulated, of their
// limit), what is done and of how much. Either limit ends the search.
using PartitionProgress =
    std::function<void(std::string_view phase, std::size_t done, std::size_t total)>;

PartitionResult best_partition(const Experiment& experiment, const PartitionLimits& limits = {},
                               const PartitionProgress& progress = {});

}  // namespace pipelens::sim
