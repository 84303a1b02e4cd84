// Benchmark: the worker's part of a re-simulation in the viewer (Workbench's simulate_run), GUI
// free, phase by phase, for the workbench benchmark's pipeline (pp=32, m=256, 1 ms F/I/W): the
// engine's simulation, the rows it would record, the run summary, and the whole simulate_run
// (those and the timeline model built from the rows); then the hold analysis (critical path,
// whom each bubble waited on) that the session finds once the timeline is on screen. (Timing the
// model's build alone, from rows made each iteration, ran several times slower than within
// simulate_run for ZBVZeroBubble, page faults dominating: that measured the benchmark's own
// allocation pattern.) What a change
// costs before the frame that shows it (workbench_bench.cpp, which needs a display, adds the
// frames). With the viewer's allocator tuning, as pipelens-view runs.
//
//   build/tests/pipelens_bench_resimulate --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <string>

#include "app/viewer/allocator_tuning.hpp"
#include "app/viewer/run_summary.hpp"
#include "app/viewer/timeline_model.hpp"
#include "app/viewer/workbench.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "sim/experiment_simulation.hpp"
#include "sim/simulation_trace.hpp"
#include "tests/bench/workbench_pipeline.hpp"

namespace {

using namespace pipelens;
using namespace pipelens::viewer;

Experiment experiment_of(const std::string& kind) {
    return parse_experiment_toml(bench::workbench_pipeline(kind), "bench");
}

const char* kind_of(const benchmark::State& state) {
    static const char* const kKinds[] = {"1F1B", "Interleaved1F1B", "ZBVZeroBubble"};
    return kKinds[state.range(0)];
}

void simulate_only(benchmark::State& state) {
    Experiment experiment = experiment_of(kind_of(state));
    for (auto _ : state)
        benchmark::DoNotOptimize(sim::simulate_experiment(experiment));
}

void rows_only(benchmark::State& state) {
    Experiment experiment = experiment_of(kind_of(state));
    const sim::ExperimentSimulation simulation = sim::simulate_experiment(experiment);
    for (auto _ : state)
        benchmark::DoNotOptimize(
            sim::simulation_rows(*simulation.lowered, simulation.costs, simulation.result));
}

// The hold analysis the session runs once the timeline is shown: critical path, whom each
// bubble waited on, stragglers.
void hold_analysis(benchmark::State& state) {
    const SimulatedRun run = simulate_run(experiment_of(kind_of(state)));
    for (auto _ : state)
        benchmark::DoNotOptimize(run.model->analyse_holds("bench"));
}

void summary_only(benchmark::State& state) {
    const SimulatedRun run = simulate_run(experiment_of(kind_of(state)));
    for (auto _ : state) {
        benchmark::DoNotOptimize(summarize(*run.model, traces::run_outcome(run.model->run(), {})));
        benchmark::DoNotOptimize(critical_path_text(*run.model, 1));
    }
}

// The copy of the timeline the worker hands the session besides the run's shared one.
void model_copy(benchmark::State& state) {
    const SimulatedRun run = simulate_run(experiment_of(kind_of(state)));
    for (auto _ : state) {
        TimelineModel copy(*run.model);
        benchmark::DoNotOptimize(copy);
    }
}

void whole_simulate_run(benchmark::State& state) {
    const Experiment experiment = experiment_of(kind_of(state));
    for (auto _ : state)
        benchmark::DoNotOptimize(simulate_run(experiment));
}

// range(0): 0 = 1F1B, 1 = Interleaved1F1B v=2, 2 = ZBVZeroBubble v=2.
#define PIPELENS_RESIMULATE_BENCHMARK(name) \
    BENCHMARK(name)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime()
PIPELENS_RESIMULATE_BENCHMARK(simulate_only);
PIPELENS_RESIMULATE_BENCHMARK(rows_only);
PIPELENS_RESIMULATE_BENCHMARK(hold_analysis);
PIPELENS_RESIMULATE_BENCHMARK(summary_only);
PIPELENS_RESIMULATE_BENCHMARK(model_copy);
PIPELENS_RESIMULATE_BENCHMARK(whole_simulate_run);

}  // namespace

int main(int argc, char** argv) {
    keep_freed_memory_for_reuse();  // as pipelens-view's main does
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
