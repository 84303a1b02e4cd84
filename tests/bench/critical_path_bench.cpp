// Benchmark: the critical path (engine/analysis) of a simulated Interleaved1F1B run with uneven
// stages and a link, from ~1 million actions (pp=64 v=2 m=1280, the viewer benchmark's trace) to
// ~10 million (pp=256 v=2 m=3328), on one core: what held each action (HoldGraph) and the walk
// back from the last action. The simulation and its timed schedule are built once, outside the
// timed loop; so is reading a trace, which the viewer and `summary` pay on top.
//
//   make bench            # or: build/tests/pipelens_bench_critical_path
#include <benchmark/benchmark.h>

#include "engine/analysis/critical_path.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace pipelens;

// The simulated run as the analysis takes it: the lowered schedule and each action's times.
analysis::TimedSchedule simulated_run(int pp, int m) {
    analysis::TimedSchedule timed;
    timed.schedule = lower(generate_schedule({ScheduleKind::interleaved_1f1b, pp, 2, m}));
    sim::CostModel costs;
    for (int stage = 0; stage < 2 * pp; ++stage)
        costs.stages.push_back({1000 + 7 * (stage % 5), 900, 700, std::nullopt});
    costs.intra_host.latency_ns = 50;
    const sim::SimulationResult result = sim::simulate(timed.schedule, costs);
    timed.times.resize(timed.schedule.ranks.size());
    for (std::size_t rank = 0; rank < timed.schedule.ranks.size(); ++rank)
        for (std::size_t step = 0; step < timed.schedule.ranks[rank].size(); ++step) {
            const sim::TimelineEntry& entry = result.timeline[result.first_entry[rank] + step];
            timed.times[rank].push_back({entry.start_ns, entry.end_ns, static_cast<int>(step),
                                         entry.lane == sim::Lane::communication});
        }
    return timed;
}

void critical_path_of_interleaved(benchmark::State& state) {
    const analysis::TimedSchedule timed =
        simulated_run(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
    const auto actions = static_cast<std::int64_t>(timed.schedule.action_count());
    std::size_t links = 0;
    for (auto _ : state) {
        const analysis::HoldGraph holds(timed);
        const analysis::CriticalPath path = analysis::critical_path(timed, holds);
        links = path.links.size();
        benchmark::DoNotOptimize(path.end_ns);
    }
    state.counters["actions"] = static_cast<double>(actions);
    state.counters["links"] = static_cast<double>(links);
    state.SetItemsProcessed(state.iterations() * actions);
}

BENCHMARK(critical_path_of_interleaved)
    ->Args({64, 1280})
    ->Args({256, 3328})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
