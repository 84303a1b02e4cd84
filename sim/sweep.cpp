// Sweep configurations through the same path as `pipelens simulate`: experiment -> lowered
// schedule -> cost model -> simulation; only the figures a sweep reports are kept.
#include "sim/sweep.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>
#include <tuple>

#include "engine/run_record/experiment_schedule.hpp"
#include "engine/run_record/parallel_for.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/simulator.hpp"
#include "sim/zero_bubble_inputs.hpp"

namespace pipelens::sim {

SweepPoint simulate_sweep_configuration(const SweepGrid& grid, std::size_t index) {
    SweepPoint point;
    point.index = index;
    try {
        Experiment experiment = grid.configuration(index);
        resolve_zero_bubble_inputs(experiment);
        const Schedule lowered = lowered_schedule_for(experiment);
        point.schedule = lowered.name;
        point.pp = experiment.shape.rank_count;
        point.v = experiment.shape.stages_per_rank;
        point.m = experiment.shape.microbatch_count;
        const SimulationResult result =
            simulate(lowered, cost_model_for(experiment, lowered.stage_count));
        point.step_time_ns = result.step_time_ns;
        point.bubble_ratio = result.bubble_ratio;
        for (const RankResult& rank : result.ranks)
            if (point.peak_memory_rank < 0 || rank.peak_memory_bytes > point.peak_memory_bytes) {
                point.peak_memory_bytes = rank.peak_memory_bytes;
                point.peak_memory_rank = rank.rank;
            }
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& error) {  // the configuration's own fault: report, go on
        point.error = error.what();
    }
    return point;
}

std::vector<SweepPoint> run_sweep(
    const SweepGrid& grid, const SweepShard& shard, unsigned workers,
    const std::function<void(std::size_t done, std::size_t total)>& progress) {
    const std::size_t total = shard.size_of(grid.size());
    std::vector<SweepPoint> points(total);
    run_record::parallel_for(
        total, workers,
        [&](std::size_t item) {
            points[item] = simulate_sweep_configuration(grid, item * shard.count + shard.index - 1);
        },
        [&](std::size_t done) {
            if (progress)
                progress(done, total);
        });
    rank_sweep(points);
    return points;
}

void rank_sweep(std::vector<SweepPoint>& points) {
    std::sort(points.begin(), points.end(), [](const SweepPoint& a, const SweepPoint& b) {
        if (a.simulated() != b.simulated())
            return a.simulated();
        if (!a.simulated())
            return a.index < b.index;
        return std::tie(a.step_time_ns, a.peak_memory_bytes, a.index) <
               std::tie(b.step_time_ns, b.peak_memory_bytes, b.index);
    });
    // In ranked order a configuration is on the front when it needs less memory than every
    // faster one (ties in time: the first of them, which also has the least memory).
    std::int64_t least_memory_so_far = 0;
    for (std::size_t place = 0; place < points.size() && points[place].simulated(); ++place) {
        SweepPoint& point = points[place];
        point.place = place + 1;
        point.pareto = place == 0 || point.peak_memory_bytes < least_memory_so_far;
        least_memory_so_far = place == 0 ? point.peak_memory_bytes
                                         : std::min(least_memory_so_far, point.peak_memory_bytes);
    }
}

}  // namespace pipelens::sim
