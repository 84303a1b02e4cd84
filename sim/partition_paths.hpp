// Chains of computations through a schedule, and their lengths under any split of the layers:
// the lower bounds `pipelens partition` cuts its search with (sim/partition.cpp).
//
// A chain is a sequence of computations (F, I, W, B, OVERLAP_F_B) in which each waits for the
// one before it: the previous computation of its rank (a rank's compute stream runs them in
// program order) or an input it needs (engine/schedule/dependencies.hpp, neighbours waited for
// directly). Under the simulator (simulator.hpp) each computation starts no earlier than the end
// of what it waits for, plus, when that comes from another rank, the transfer: the SEND starts
// after the computation it sends and the RECV ends the transfer time after the SEND started.
// Each lasts its stage's cost on its rank (CostModel::on_rank), an OVERLAP_F_B the sum of its
// parts when overlap_efficiency is 0. So the simulated step is at least the length of any
// chain: the sum of its computations' times and of its transfers.
//
// Invariants: the chains come from the computations and dependency rules alone, which for a
// schedule generated from its shape (kind, pp, v, m) do not depend on the costs, so a chain
// found under one split is a chain of every split of the same schedule, and its length there is
// PathCut's linear form in that split's stage costs and boundary transfers. With rank slowdowns
// an OVERLAP_F_B's parts are rounded one by one, so the form takes 1 ns off per OVERLAP_F_B
// (the two roundings differ by at most that): never more than the chain's length.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/schedule/schedule.hpp"
#include "sim/cost_model.hpp"

namespace pipelens::sim {

// A chain, counted per stage and boundary: its length under any stage costs.
struct PathCut {
    // Per stage, the chain's F, I, W and B of that stage (an OVERLAP_F_B's parts counted singly).
    std::vector<std::array<int, 4>> computations;
    // Per boundary b (between stages b and b + 1, on different ranks): how often the chain
    // crosses it downstream (b to b + 1) and upstream (b + 1 to b).
    std::vector<int> crossings_down, crossings_up;
    int overlaps = 0;  // OVERLAP_F_B computations on the chain

    bool operator==(const PathCut&) const = default;
};

// What a stage costs a chain per computation and per crossing: its F, I, W and B on its rank
// and the transfer of its output over its downstream boundary each way (0 for the last stage).
// Worked out once per stage cost and shared by every chain (the search prices each candidate
// stage against up to hundreds of them).
struct StageTimes {
    std::array<std::int64_t, 4> computations{};  // F, I, W, B on the stage's rank
    std::int64_t down_ns = 0, up_ns = 0;
};
StageTimes stage_times_of(const CostModel& costs, const std::vector<int>& stage_to_rank, int stage,
                          const StageCost& cost, std::int64_t bytes);

// Stage `stage`'s share of `cut`'s length at `times`: its computations on its rank and the
// transfers over its downstream boundary. Inline: the search's innermost loop.
inline std::int64_t stage_share_of(const PathCut& cut, int stage, const StageTimes& times) {
    const std::array<int, 4>& counts = cut.computations[stage];
    std::int64_t share = 0;
    for (std::size_t kind = 0; kind < counts.size(); ++kind)
        share += counts[kind] * times.computations[kind];
    // A boundary the chain never crosses adds nothing, whatever its transfer.
    if (stage < static_cast<int>(cut.crossings_down.size()))
        share += cut.crossings_down[stage] * times.down_ns + cut.crossings_up[stage] * times.up_ns;
    return share;
}

// The same when it costs `cost` and sends `bytes` across its downstream boundary.
std::int64_t stage_share_of(const PathCut& cut, const CostModel& costs,
                            const std::vector<int>& stage_to_rank, int stage, const StageCost& cost,
                            std::int64_t bytes);

// What `cut`'s length adds beyond its stages' shares: -1 ns per OVERLAP_F_B with slowdowns.
std::int64_t rounding_share_of(const PathCut& cut, const CostModel& costs);

// `cut`'s length under `costs` (every stage's cost and boundary bytes from the model).
std::int64_t length_of(const PathCut& cut, const CostModel& costs,
                       const std::vector<int>& stage_to_rank);

struct LongestChain {
    std::int64_t length_ns = 0;  // 0 when the schedule cannot complete
    PathCut cut;
};

// The computations of a schedule (lowered or not) and what each waits for.
class ComputationGraph {
  public:
    explicit ComputationGraph(const Schedule& schedule);

    // The longest chain under `costs`: a lower bound on the simulated step of the split the
    // costs describe, and, as a PathCut, on that of every other split.
    LongestChain longest_chain(const CostModel& costs) const;

    const std::vector<int>& stage_to_rank() const { return schedule_.stage_to_rank; }

  private:
    Schedule schedule_;  // computations only, neighbours waited for directly
};

}  // namespace pipelens::sim
