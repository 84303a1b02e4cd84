// Discrete-event simulation of a lowered schedule under a cost model.
//
// Each rank has a compute stream and a communication stream; each stream runs its share of the
// rank's actions in program order, and an action starts when its stream is free and its inputs
// exist: F after its RECV_F (or the same-rank upstream F), I/B after their F and their RECV_B
// (or the same-rank downstream I/B), W after its I, SEND after the computation it sends (and
// holds the stream for the transfer), RECV ends once the SEND has started and the transfer time
// has passed (a posted receive does not hold the stream). The result is the timeline
// of every action, memory over time (activations held from F until B or W), and per rank the
// bubble split into warm-up, cool-down and waiting on each peer.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "engine/schedule/schedule.hpp"
#include "sim/cost_model.hpp"

namespace pipelens::sim {

enum class Lane : std::uint8_t { compute = 0, communication = 1 };

struct TimelineEntry {
    std::int32_t rank = 0;
    std::int32_t step = 0;  // index in the rank's action list
    Lane lane = Lane::compute;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t bytes = 0;
    std::int32_t pair_id = kNoPair;
};

struct MemorySample {
    std::int32_t rank = 0;
    std::int64_t time_ns = 0;
    std::int64_t bytes = 0;
};

struct BubbleBreakdown {
    std::int64_t warmup_ns = 0;    // idle before the rank's first computation
    std::int64_t cooldown_ns = 0;  // idle after its last computation until the step ends
    std::map<int, std::int64_t> waiting_on_rank;  // idle in between, by the rank waited on

    std::int64_t waiting_ns() const;
};

struct RankResult {
    int rank = 0;
    std::int64_t busy_ns = 0;
    std::int64_t bubble_ns = 0;
    double bubble_ratio = 0;
    std::int64_t peak_memory_bytes = 0;
    BubbleBreakdown bubbles;
};

struct SimulationResult {
    std::int64_t step_time_ns = 0;
    double bubble_ratio = 0;  // idle compute time over ranks x step time
    std::vector<RankResult> ranks;
    std::vector<TimelineEntry> timeline;  // rank by rank, in program order
    std::vector<MemorySample> memory;
};

// Simulates `schedule`, lowering it first if it has no SEND/RECV actions yet. Throws
// ScheduleHangError when the schedule cannot complete.
SimulationResult simulate(const Schedule& schedule, const CostModel& costs);

}  // namespace pipelens::sim
