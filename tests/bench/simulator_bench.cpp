// Benchmark: simulation throughput in actions per second of a lowered Interleaved1F1B schedule
// (unit times, zero communication cost, as PyTorch's `_simulate_comms_compute` measures it) from
// pp=64 v=2 m=256 (~195,000 actions) to pp=1024 v=2 m=4096 (~50 million), on one core. The
// schedule is generated and lowered once, outside the timed loop.
//
//   make bench            # or: build/tests/pipelens_bench_simulator
#include <benchmark/benchmark.h>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace pipelens;

void simulate_interleaved(benchmark::State& state) {
    const int pp = static_cast<int>(state.range(0));
    const int m = static_cast<int>(state.range(1));
    const Schedule lowered = lower(generate_schedule({ScheduleKind::interleaved_1f1b, pp, 2, m}));
    std::int64_t actions = 0;
    for (const auto& rank : lowered.ranks)
        actions += static_cast<std::int64_t>(rank.size());
    sim::CostModel costs;
    costs.stages = {sim::StageCost{1, 1, 1, std::nullopt}};
    for (auto _ : state) {
        sim::SimulationResult result = sim::simulate(lowered, costs);
        benchmark::DoNotOptimize(result.step_time_ns);
    }
    state.counters["actions"] = static_cast<double>(actions);
    state.SetItemsProcessed(state.iterations() * actions);
}

BENCHMARK(simulate_interleaved)
    ->Args({64, 256})
    ->Args({256, 1024})
    ->Args({1024, 4096})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
