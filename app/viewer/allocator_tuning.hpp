// How the viewer process asks glibc's allocator to keep what it frees. A re-simulation builds and
// drops tables of a few to tens of MiB (a 113k-action timeline); by default glibc gives such
// blocks back to the kernel (mmap'd above its threshold, or trimmed from the heap's top) and the
// next re-simulation takes every page again through a page fault. Measured on the 2-core VM
// (ZBVZeroBubble pp=32 m=256, simulation plus timeline model): 150-250 ms for the first several
// re-simulations, 35 ms once warm; with the memory kept, 35 ms from the second on.
#pragma once

namespace pipelens::viewer {

// Called once, first thing in main, before any thread starts. Idempotent.
void keep_freed_memory_for_reuse();

}  // namespace pipelens::viewer
