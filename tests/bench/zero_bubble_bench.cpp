// Benchmark: the automatic zero-bubble scheduler (all eight runs of its search) on one core, at
// the paper's largest setting (28.3B, p = 32, m = 256, its profiled times) with 1p and 2p memory,
// and at p = 8, m = 24. The target: p = 32, m = 256 in under a second.
//
//   make bench            # or: build/tests/pipelens_bench_zero_bubble
#include <benchmark/benchmark.h>

#include "engine/schedule/zero_bubble_search.hpp"

namespace {

void search(benchmark::State& state) {
    const int pp = static_cast<int>(state.range(0));
    const int m = static_cast<int>(state.range(1));
    const int limit = static_cast<int>(state.range(2)) * pp;
    const pipelens::ZeroBubbleInputs inputs{10'402'000, 10'248'000, 7'698'000, 460'000, limit};
    for (auto _ : state)
        benchmark::DoNotOptimize(pipelens::search_zero_bubble(pp, m, inputs));
    state.counters["ops/s"] =
        benchmark::Counter(3.0 * pp * m * 8, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(search)
    ->ArgNames({"pp", "m", "limit_p"})
    ->Args({8, 24, 1})
    ->Args({8, 24, 2})
    ->Args({32, 256, 1})
    ->Args({32, 256, 2})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
