// Benchmark: generate + lower + check (static check and dry run) of an Interleaved1F1B
// schedule, on one core. Reports actions per second, nanoseconds per action and the peak heap
// bytes per action of the lowered schedule (counted by replacing the global allocator), over
// sizes from pp=64 v=2 m=256 (~195,000 actions) to pp=1024 v=2 m=4096 (~50 million).
//
//   make bench            # or: build/tests/pipelens_bench_schedule
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"

namespace {

std::atomic<std::size_t> heap_in_use{0};
std::atomic<std::size_t> heap_peak{0};

void* counted_allocate(std::size_t size) {
    void* pointer = std::malloc(size == 0 ? 1 : size);
    if (!pointer)
        throw std::bad_alloc();
    const std::size_t now = heap_in_use += malloc_usable_size(pointer);
    std::size_t peak = heap_peak.load(std::memory_order_relaxed);
    while (now > peak && !heap_peak.compare_exchange_weak(peak, now)) {
    }
    return pointer;
}

void counted_free(void* pointer) {
    if (!pointer)
        return;
    heap_in_use -= malloc_usable_size(pointer);
    std::free(pointer);
}

}  // namespace

void* operator new(std::size_t size) {
    return counted_allocate(size);
}
void* operator new[](std::size_t size) {
    return counted_allocate(size);
}
void operator delete(void* pointer) noexcept {
    counted_free(pointer);
}
void operator delete[](void* pointer) noexcept {
    counted_free(pointer);
}
void operator delete(void* pointer, std::size_t) noexcept {
    counted_free(pointer);
}
void operator delete[](void* pointer, std::size_t) noexcept {
    counted_free(pointer);
}

namespace {

using namespace pipelens;

void GenerateLowerCheck(benchmark::State& state) {
    const ScheduleShape shape{ScheduleKind::interleaved_1f1b, static_cast<int>(state.range(0)),
                              static_cast<int>(state.range(1)), static_cast<int>(state.range(2))};
    std::size_t actions = 0;
    std::size_t peak_bytes = 0;
    for (auto _ : state) {
        const std::size_t base = heap_in_use.load();
        heap_peak = base;
        Schedule lowered = lower(generate_schedule(shape));
        const DryRunResult run = dry_run(lowered);  // runs the full static check first
        if (!run.completed)
            state.SkipWithError("schedule failed its check");
        actions = lowered.action_count();
        peak_bytes = std::max(peak_bytes, heap_peak.load() - base);
        benchmark::DoNotOptimize(lowered);
    }
    state.counters["actions"] = static_cast<double>(actions);
    state.counters["actions_per_second"] = benchmark::Counter(
        static_cast<double>(actions), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["peak_bytes_per_action"] =
        static_cast<double>(peak_bytes) / static_cast<double>(actions);
}

// The two sizes the targets name, a series in between to show the cost is linear, and a series
// of many stages per rank.
BENCHMARK(GenerateLowerCheck)
    ->ArgNames({"pp", "v", "m"})
    ->Args({64, 2, 256})
    ->Args({128, 2, 512})
    ->Args({256, 2, 1024})
    ->Args({512, 2, 2048})
    ->Args({1024, 2, 4096})
    // Many stages on few ranks: the FSDP pass once sorted every stage of a rank at every action.
    ->Args({4, 1000, 4})
    ->Args({4, 4000, 4})
    ->Args({4, 16000, 4})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
