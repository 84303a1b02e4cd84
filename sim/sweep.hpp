// A sweep's configurations simulated and ranked: what `pipelens sweep` prints, writes and
// draws, and `pipelens merge` joins from several shards.
//
// Invariants: a configuration that cannot be simulated (an impossible combination such as 1F1B
// with v=2, a schedule that hangs) is kept with the reason, never dropped, and never ranked; the
// ranking is by step time, then peak memory, then configuration number, so it is the same
// whatever the thread count or the shards; the Pareto front (no other configuration is at least
// as fast and at least as small, and better in one; of equal ones, the lowest-numbered) is marked
// on the ranked list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/experiment/sweep_grid.hpp"

namespace pipelens::sim {

struct SweepPoint {
    std::size_t index = 0;  // the configuration's number in the grid
    std::string schedule;   // what was simulated (a schedule file decides pp, v and m itself)
    int pp = 0, v = 0, m = 0;
    std::int64_t step_time_ns = 0;
    double bubble_ratio = 0;
    std::int64_t peak_memory_bytes = 0;  // the highest rank's
    int peak_memory_rank = -1;
    std::string error;      // why it was not simulated; empty when it was
    std::size_t place = 0;  // 1-based place in the ranking; 0 when not simulated
    bool pareto = false;

    bool simulated() const { return error.empty(); }
};

// Validates, lowers and simulates configuration `index`; a bad configuration comes back with
// `error` set.
SweepPoint simulate_sweep_configuration(const SweepGrid& grid, std::size_t index);

// The configurations `shard` holds, simulated on `workers` threads (0: one per core), ranked.
// `progress(done, total)` is called from the calling thread.
std::vector<SweepPoint> run_sweep(
    const SweepGrid& grid, const SweepShard& shard, unsigned workers,
    const std::function<void(std::size_t done, std::size_t total)>& progress = {});

// Sorts (ranked first, then the rest by number) and sets `place` and `pareto`.
void rank_sweep(std::vector<SweepPoint>& points);

}  // namespace pipelens::sim
