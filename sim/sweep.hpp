// A sweep's configurations simulated and ranked: what `pipelens sweep` prints, writes and
// draws, and `pipelens merge` joins from several shards.
//
// Invariants: a configuration that cannot be simulated (an impossible combination such as 1F1B
// with v=2, a schedule that hangs) is kept with the reason, never dropped, and never ranked; the
// ranking compares like with like: by time per global batch (the step) where the model and the
// global batch stay fixed across the grid, else by time per sequence (the step over m x
// microbatch size) where an axis sets the microbatch size, else by time per microbatch (the step
// over m), then by peak memory, then configuration number, so it is the same whatever the thread
// count or the shards; which the grid gets follows from the grid alone (sweep_basis); the Pareto
// front (no other configuration is at least as fast and at least as small, and better in one;
// of equal ones, the lowest-numbered) is marked on the ranked list, on the same figure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/experiment/sweep_grid.hpp"

namespace pipelens::sim {

struct SweepPoint {
    std::size_t index = 0;  // the configuration's number in the grid
    std::string schedule;   // what was simulated (a schedule file decides pp, v and m itself)
    int pp = 0, v = 0, m = 0;
    int microbatch_size = 1;  // sequences per microbatch: a [transformer]'s, else 1
    std::int64_t step_time_ns = 0;
    double bubble_ratio = 0;
    std::int64_t peak_memory_bytes = 0;  // the highest rank's
    int peak_memory_rank = -1;
    std::string error;       // why it was not simulated; empty when it was
    bool too_large = false;  // not simulated because it cannot fit this machine's memory
    std::size_t place = 0;   // 1-based place in the ranking; 0 when not simulated
    bool pareto = false;

    bool simulated() const { return error.empty(); }
};

// What a sweep ranks by: the step (time per global batch), the step over m, or the step over the
// m x microbatch size sequences of the step.
enum class SweepRanking { per_global_batch, per_microbatch, per_sequence };

std::string_view sweep_ranking_name(SweepRanking ranking);    // "time per global batch", ...
std::string_view sweep_ranking_figure(SweepRanking ranking);  // "the step", "the step over m", ...
SweepRanking parse_sweep_ranking(std::string_view name);      // std::invalid_argument if unknown
double ranked_time_ns(const SweepPoint& point, SweepRanking ranking);

// What stays fixed across a grid, and so what its configurations can be ranked by. The model is
// fixed when its costs are given per model or per layer ([costs] per, [layers], [transformer]),
// or when no axis changes pp, v or the schedule kind, and no axis changes a [transformer]'s
// layers, hidden size, heads, sequence or vocabulary; the global batch is fixed when
// `global_batch` is given (each microbatch then carries global_batch / m sequences) or no axis
// changes m or the microbatch size. Both fixed: per global batch; else per sequence where an
// axis changes the microbatch size, per microbatch otherwise, `why` saying what is not fixed.
struct SweepBasis {
    SweepRanking ranking = SweepRanking::per_global_batch;
    std::string why;  // empty per global batch
};
SweepBasis sweep_basis(const SweepGrid& grid, int global_batch);

// Throws ExperimentError when `global_batch` is given and an axis sets what it overwrites (a
// [transformer]'s microbatch size): its values would label configurations that are the same.
void refuse_axes_the_global_batch_sets(const SweepGrid& grid, int global_batch);

// Sets each microbatch to global_batch / m sequences: a [transformer]'s microbatch size, or the
// flat [costs] figures (then read as one sequence's) times it. Throws ExperimentError when m
// does not divide the batch or the costs are [layers] (measured for one microbatch size).
void apply_global_batch(Experiment& experiment, int global_batch);

// Configuration `index` as the sweep simulates and records it: the grid's, its microbatches cut
// from `global_batch` sequences when above 0 (apply_global_batch).
Experiment sweep_configuration(const SweepGrid& grid, std::size_t index, int global_batch);

// Validates, lowers and simulates configuration `index` (its microbatches cut from
// `global_batch` sequences when above 0); a bad configuration comes back with `error` set.
SweepPoint simulate_sweep_configuration(const SweepGrid& grid, std::size_t index,
                                        int global_batch = 0);

// The configurations `shard` holds, simulated on `workers` threads (0: one per core), ranked.
// Each configuration is admitted against the memory there is on its own; one that runs out of
// memory beside the others is simulated again alone, after them, so the grid's figures never
// depend on how many ran at once.
// `progress(done, total)` is called from the calling thread.
// Ranked as sweep_basis(grid, global_batch) says.
std::vector<SweepPoint> run_sweep(
    const SweepGrid& grid, const SweepShard& shard, unsigned workers,
    const std::function<void(std::size_t done, std::size_t total)>& progress = {},
    int global_batch = 0);

// Sorts (ranked first, then the rest by number) and sets `place` and `pareto`.
void rank_sweep(std::vector<SweepPoint>& points,
                SweepRanking ranking = SweepRanking::per_global_batch);

}  // namespace pipelens::sim
