// Sweep configurations through the same path as `pipelens simulate`: experiment -> lowered
// schedule -> cost model -> simulation; only the figures a sweep reports are kept.
#include "sim/sweep.hpp"

#include <algorithm>
#include <limits>
#include <new>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/run_record/experiment_schedule.hpp"
#include "engine/run_record/parallel_for.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/simulator.hpp"
#include "sim/zero_bubble_inputs.hpp"

namespace pipelens::sim {
namespace {

constexpr const char* kOutOfMemory =
    "ran out of memory simulating it: too large for this machine's memory";

constexpr const char* kMicrobatchSize = "transformer.microbatch_size";

// A [transformer]'s fields that make it another model (its dtype and device_tflops say how it
// runs, its layers_per_stage how it is split).
constexpr std::initializer_list<const char*> kModelKeys = {
    "transformer.layers", "transformer.hidden", "transformer.heads", "transformer.sequence",
    "transformer.vocabulary"};

constexpr SweepRanking kRankings[] = {SweepRanking::per_global_batch, SweepRanking::per_microbatch,
                                      SweepRanking::per_sequence};

// The axes among `keys` that take more than one value.
std::vector<std::string> varying(const SweepGrid& grid, std::initializer_list<const char*> keys) {
    std::vector<std::string> found;
    for (const SweepAxis& axis : grid.axes())
        for (const char* key : keys)
            if (axis.key == key && axis.values.size() > 1)
                found.push_back(axis.key);
    return found;
}

// Why the model is not the same in every configuration; empty when it is.
std::vector<std::string> loose_model(const SweepGrid& grid) {
    const Experiment& base = grid.base();
    const bool whole_model_costs = base.transformer || base.layers ||
                                   base.cost_scope != CostScope::stage ||
                                   !varying(grid, {"costs.per"}).empty();
    std::vector<std::string> loose;
    if (!whole_model_costs &&
        !varying(grid, {"schedule.pp", "schedule.v", "schedule.kind", "schedule.file"}).empty())
        loose.push_back(
            "flat per-stage costs make the model grow with pp x v (give --costs-per model or "
            "layer, or a [transformer])");
    if (const std::vector<std::string> keys = varying(grid, kModelKeys); !keys.empty())
        loose.push_back(fmt::format("{} {} the model itself (each value trains another one)",
                                    fmt::join(keys, " and "),
                                    keys.size() == 1 ? "changes" : "change"));
    return loose;
}

// Why the global batch is not the same in every configuration; empty when it is.
std::vector<std::string> loose_batch(const SweepGrid& grid, int global_batch) {
    std::vector<std::string> loose;
    if (global_batch > 0)
        return loose;
    if (!varying(grid, {"schedule.m", "schedule.file"}).empty())
        loose.push_back(
            "m microbatches of a fixed size make the batch grow with m (give "
            "--global-batch)");
    if (!varying(grid, {kMicrobatchSize}).empty())
        loose.push_back(
            "transformer.microbatch_size makes the batch m x the microbatch size (give "
            "--global-batch and sweep m in its place)");
    return loose;
}

}  // namespace

std::string_view sweep_ranking_name(SweepRanking ranking) {
    switch (ranking) {
        case SweepRanking::per_global_batch:
            return "time per global batch";
        case SweepRanking::per_microbatch:
            return "time per microbatch";
        case SweepRanking::per_sequence:
            return "time per sequence";
    }
    return "";
}

std::string_view sweep_ranking_figure(SweepRanking ranking) {
    switch (ranking) {
        case SweepRanking::per_global_batch:
            return "the step";
        case SweepRanking::per_microbatch:
            return "the step over m";
        case SweepRanking::per_sequence:
            return "the step over m x microbatch size";
    }
    return "";
}

SweepRanking parse_sweep_ranking(std::string_view name) {
    for (const SweepRanking ranking : kRankings)
        if (name == sweep_ranking_name(ranking))
            return ranking;
    throw std::invalid_argument(
        fmt::format("'{}' is no ranking: expected 'time per global batch', 'time per microbatch' "
                    "or 'time per sequence'",
                    name));
}

double ranked_time_ns(const SweepPoint& point, SweepRanking ranking) {
    const double step = static_cast<double>(point.step_time_ns);
    switch (ranking) {
        case SweepRanking::per_global_batch:
            return step;
        case SweepRanking::per_microbatch:
            return step / std::max(point.m, 1);
        case SweepRanking::per_sequence:
            return step /
                   (static_cast<double>(std::max(point.m, 1)) * std::max(point.microbatch_size, 1));
    }
    return step;
}

SweepBasis sweep_basis(const SweepGrid& grid, int global_batch) {
    std::vector<std::string> loose = loose_model(grid);
    const std::vector<std::string> batch = loose_batch(grid, global_batch);
    loose.insert(loose.end(), batch.begin(), batch.end());
    if (loose.empty())
        return {};
    // The step's sequences are m x microbatch size: where an axis sets the size, each
    // configuration's step is divided by its own.
    const bool sizes_vary = global_batch <= 0 && !varying(grid, {kMicrobatchSize}).empty();
    return {sizes_vary ? SweepRanking::per_sequence : SweepRanking::per_microbatch,
            fmt::format("{}", fmt::join(loose, "; "))};
}

void refuse_axes_the_global_batch_sets(const SweepGrid& grid, int global_batch) {
    if (global_batch <= 0)
        return;
    for (const SweepAxis& axis : grid.axes())
        if (axis.key == kMicrobatchSize)
            throw ExperimentError(fmt::format(
                "{} is swept, and --global-batch {} sets every microbatch to {} / m sequences, "
                "so its values would label configurations that are the same: sweep m "
                "(schedule.m) for other microbatch sizes, or leave out --global-batch",
                kMicrobatchSize, global_batch, global_batch));
}

void apply_global_batch(Experiment& experiment, int global_batch) {
    const int m = experiment.shape.microbatch_count;
    if (m <= 0 || global_batch % m != 0)
        throw ExperimentError(
            fmt::format("m={} does not divide --global-batch {}: a microbatch holds whole "
                        "sequences",
                        m, global_batch));
    const int sequences = global_batch / m;
    if (experiment.layers)
        throw ExperimentError(
            "--global-batch: [layers] costs were measured for one microbatch size; sweep m "
            "without --global-batch, or give per-sequence [costs]");
    if (experiment.transformer) {
        experiment.transformer->microbatch_size = sequences;
        return;
    }
    for (std::vector<std::int64_t>* figures :
         {&experiment.forward_ns, &experiment.input_ns, &experiment.weight_ns,
          &experiment.backward_ns, &experiment.activation_bytes, &experiment.held_activation_bytes})
        for (std::int64_t& figure : *figures)
            figure *= sequences;
}

Experiment sweep_configuration(const SweepGrid& grid, std::size_t index, int global_batch) {
    Experiment experiment = grid.configuration(index);
    if (global_batch > 0)
        apply_global_batch(experiment, global_batch);
    return experiment;
}

SweepPoint simulate_sweep_configuration(const SweepGrid& grid, std::size_t index,
                                        int global_batch) {
    SweepPoint point;
    point.index = index;
    try {
        Experiment experiment = sweep_configuration(grid, index, global_batch);
        resolve_zero_bubble_inputs(experiment);
        const Schedule lowered = lowered_schedule_for(experiment);
        point.schedule = lowered.name;
        point.pp = experiment.shape.rank_count;
        point.v = experiment.shape.stages_per_rank;
        point.m = experiment.shape.microbatch_count;
        if (experiment.transformer)
            point.microbatch_size = experiment.transformer->microbatch_size;
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
        point.error = kOutOfMemory;
        point.too_large = true;
    } catch (const ScheduleTooLargeError& error) {
        point.error = error.what();
        point.too_large = true;
    } catch (const std::exception& error) {  // the configuration's own fault: report, go on
        point.error = error.what();
    }
    return point;
}

std::vector<SweepPoint> run_sweep(
    const SweepGrid& grid, const SweepShard& shard, unsigned workers,
    const std::function<void(std::size_t done, std::size_t total)>& progress, int global_batch) {
    refuse_axes_the_global_batch_sets(grid, global_batch);
    const std::size_t total = shard.size_of(grid.size());
    std::vector<SweepPoint> points(total);
    run_record::parallel_for(
        total, workers,
        [&](std::size_t item) {
            points[item] = simulate_sweep_configuration(grid, item * shard.count + shard.index - 1,
                                                        global_batch);
        },
        [&](std::size_t done) {
            if (progress)
                progress(done, total);
        });
    // Every configuration too large beside the others is tried again alone: one refused by its
    // size estimate is refused again at once, before allocating.
    if (run_record::worker_count(total, workers) > 1)
        for (SweepPoint& point : points)
            if (point.too_large)
                point = simulate_sweep_configuration(grid, point.index, global_batch);
    rank_sweep(points, sweep_basis(grid, global_batch).ranking);
    return points;
}

void rank_sweep(std::vector<SweepPoint>& points, SweepRanking ranking) {
    std::sort(points.begin(), points.end(), [&](const SweepPoint& a, const SweepPoint& b) {
        if (a.simulated() != b.simulated())
            return a.simulated();
        if (!a.simulated())
            return a.index < b.index;
        const double a_time = ranked_time_ns(a, ranking), b_time = ranked_time_ns(b, ranking);
        return std::tie(a_time, a.peak_memory_bytes, a.index) <
               std::tie(b_time, b.peak_memory_bytes, b.index);
    });
    // A configuration is on the front when no other is at least as good in time and memory and
    // better in one. In ranked order: it needs less memory than every strictly faster one, and
    // no more than the first of its own time (the least memory there). Exact ties dominate
    // none of each other, so all of them are on it.
    std::int64_t least_faster_memory = std::numeric_limits<std::int64_t>::max();
    std::int64_t group_memory = 0;
    std::size_t group_start = 0;
    for (std::size_t place = 0; place < points.size() && points[place].simulated(); ++place) {
        SweepPoint& point = points[place];
        point.place = place + 1;
        const double time = ranked_time_ns(point, ranking);
        if (place == 0 || time != ranked_time_ns(points[group_start], ranking)) {
            for (std::size_t earlier = group_start; earlier < place; ++earlier)
                least_faster_memory =
                    std::min(least_faster_memory, points[earlier].peak_memory_bytes);
            group_start = place;
            group_memory = point.peak_memory_bytes;
        }
        point.pareto = point.peak_memory_bytes < least_faster_memory &&
                       point.peak_memory_bytes == group_memory;
    }
}

}  // namespace pipelens::sim
