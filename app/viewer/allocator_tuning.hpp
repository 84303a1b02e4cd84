// How the viewer process asks glibc's allocator to keep what it frees. A re-simulation builds and
// drops tables of a few to tens of MiB (a 113k-action timeline); by default glibc gives such
// blocks back to the kernel (mmap'd above its threshold, or trimmed from the heap's top) and the
// next re-simulation takes every page again through a page fault. Measured on the 2-core VM
// (ZBVZeroBubble pp=32 m=256, pipelens_bench_resimulate's whole_simulate_run, 2026-11-27): about
// 11,000 page faults and 25 ms per re-simulation without it, none and 16 ms with it.
// tests/viewer/allocator_tuning_test.cpp checks that it takes effect.
#pragma once

namespace pipelens::viewer {

// Called once, first thing in main, before any thread starts. Idempotent.
void keep_freed_memory_for_reuse();

}  // namespace pipelens::viewer
