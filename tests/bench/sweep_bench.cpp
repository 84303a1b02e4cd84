// Benchmark: `pipelens sweep` throughput on one core, in configurations per second, on grids
// that vary what a sweep varies (schedule kind, pp, m; and v), with pp <= 16 and m <= 64. Each
// configuration goes the whole way a sweep takes it: settings applied to the experiment,
// validated, schedule generated and lowered, costs derived, simulated. Target: >= 1,000
// configurations per second per core.
//
//   make bench            # or: build/tests/pipelens_bench_sweep
#include <benchmark/benchmark.h>

#include "engine/experiment/experiment.hpp"
#include "engine/experiment/sweep_grid.hpp"
#include "sim/sweep.hpp"

namespace {

using namespace pipelens;

Experiment base_experiment() {
    Experiment experiment = plain_experiment();
    experiment.forward_ns = {1'000'000};
    experiment.input_ns = {1'000'000};
    experiment.weight_ns = {1'000'000};
    experiment.activation_bytes = {16 << 20};
    experiment.held_activation_bytes = {1 << 30};
    experiment.intra_host = experiment.inter_host = {8'000, 150.0};
    return experiment;
}

// range(0): 0 = kinds x pp x m (v each kind's default), 1 = the same x v in {1, 2, 4}.
void sweep_configurations(benchmark::State& state) {
    std::vector<SweepAxis> axes = {
        parse_sweep_flag("kind=GPipe,1F1B,Interleaved1F1B,LoopedBFS,InterleavedZeroBubble,"
                         "ZBVZeroBubble,DualPipeV"),
        parse_sweep_flag("pp=2,4,8,16"), parse_sweep_flag("m=8,16,32,64")};
    if (state.range(0) == 1)
        axes.push_back(parse_sweep_flag("v=1,2,4"));
    const SweepGrid grid(base_experiment(), axes);
    std::size_t simulated = 0;
    for (auto _ : state) {
        const std::vector<sim::SweepPoint> points = sim::run_sweep(grid, SweepShard{}, 1);
        simulated = 0;
        for (const sim::SweepPoint& point : points)
            simulated += point.simulated() ? 1 : 0;
        benchmark::DoNotOptimize(points.data());
    }
    state.counters["configurations"] = static_cast<double>(grid.size());
    state.counters["simulated"] = static_cast<double>(simulated);
    // Configurations that fail validation cost little; this rate counts only simulated ones.
    state.counters["simulated_per_second"] = benchmark::Counter(
        static_cast<double>(simulated * state.iterations()), benchmark::Counter::kIsRate);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(grid.size()));
}

BENCHMARK(sweep_configurations)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
