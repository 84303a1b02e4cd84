// Discrete-event simulation of a lowered schedule under a cost model.
//
// Each rank has a compute stream and a communication stream; each stream runs its share of the
// rank's actions in program order, and an action starts when its stream is free and its inputs
// exist, its inputs being what engine/schedule/dependencies.hpp says it waits for. A SEND holds
// its stream for the transfer; a RECV ends once the SEND has started and the transfer time has
// passed, or with rendezvous transfers once the SEND has started and the RECV was posted (its
// rank finished the computation before it); a posted receive does not hold the stream. With a
// send issue time, a SEND also starts no earlier than its rank's computations before it, and
// its rank's next computation starts no earlier than the end (the host issues actions
// in program order). UNSHARD and
// REDUCE_GRAD are collectives on the communication stream; RESHARD takes compute time. The result
// is the timeline of every action, memory over time (activations held from F until B or W), and per
// rank the bubble split into warm-up, cool-down, waiting on each peer and local idle time
// (engine/analysis's bubble accounting, fed with the rank whose input each computation waited for
// last).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/analysis/bubble_accounting.hpp"
#include "engine/schedule/dependencies.hpp"
#include "engine/schedule/schedule.hpp"
#include "sim/cost_model.hpp"

namespace pipelens::sim {

enum class Lane : std::uint8_t { compute = 0, communication = 1 };

// One executed action. Which action it is follows from its place in the timeline (see
// SimulationResult::first_entry), which keeps an entry at 32 bytes: a 50-million-action timeline
// is 1.6 GB, and touching that memory is most of what simulating it costs.
struct TimelineEntry {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t bytes = 0;
    std::int32_t pair_id = kNoPair;
    Lane lane = Lane::compute;
};

struct MemorySample {
    std::int32_t rank = 0;
    std::int64_t time_ns = 0;
    std::int64_t bytes = 0;
};

// Warm-up, cool-down, waiting by the peer waited on, and local idle time in between, as
// engine/analysis/bubble_accounting.hpp defines them for every kind of run.
using BubbleBreakdown = analysis::BubbleSplit;

struct RankResult {
    int rank = 0;
    std::int64_t busy_ns = 0;
    // Of busy_ns, the arithmetic the cost model knows of (StageCost's *_arithmetic_ns); the rest
    // is communication inside computations, or time of unknown kind.
    std::int64_t arithmetic_ns = 0;
    std::int64_t bubble_ns = 0;
    double bubble_ratio = 0;
    std::int64_t peak_memory_bytes = 0;
    BubbleBreakdown bubbles;
};

struct SimulationResult {
    std::int64_t step_time_ns = 0;
    double bubble_ratio = 0;  // idle compute time over ranks x step time
    std::vector<RankResult> ranks;
    // Rank by rank, in program order: rank r's step s is timeline[first_entry[r] + s], and
    // first_entry has one more element than there are ranks (the end of the last rank).
    std::vector<TimelineEntry> timeline;
    std::vector<std::size_t> first_entry;
    std::vector<MemorySample> memory;
    // What the memory figures count (the cost model's sizes): activations, plus weight gradients
    // and backward temporaries when true; never weights or optimizer state.
    bool memory_sizes_gradients = false;
};

// The rules a cost model is simulated with: PyTorch's, with rendezvous transfers if it says so.
const DependencyRules& rules_for(const CostModel& costs);

// Simulates `schedule`, lowering it first if it has no SEND/RECV actions yet. What waits for what
// is `rules` (default: rules_for(costs)); this only decides when. Throws ScheduleHangError when
// the schedule cannot complete.
SimulationResult simulate(const Schedule& schedule, const CostModel& costs,
                          const DependencyRules& rules);
SimulationResult simulate(const Schedule& schedule, const CostModel& costs);

// The same with each computation's time multiplied by its own factor: `compute_factors` has one
// per action of the lowered `schedule`, rank by rank in program order (the timeline's order),
// and a communication's is not read. What one draw of a noisy machine looks like
// (sim/step_spread.hpp); a schedule that is not lowered yet is refused, as the factors could not
// name its actions; a drawn computation past 2^52 ns (52 days), or ending past 2^62 ns, throws
// std::overflow_error.
SimulationResult simulate(const Schedule& schedule, const CostModel& costs,
                          const DependencyRules& rules, const std::vector<double>& compute_factors);

}  // namespace pipelens::sim
