// The viewer's allocator tuning takes effect: a block of tens of MiB, the size of a
// re-simulation's tables, comes from the heap rather than its own mmap, and stays with the process
// when freed, so the next re-simulation reuses its pages instead of faulting every one in again.
// (The tuning once compiled to nothing, with no test to notice.) Each test runs in its own
// process under ctest, so the tuning does not leak into other tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

#include "app/viewer/allocator_tuning.hpp"

// A sanitizer's allocator stands in for glibc's, which then neither takes the tuning nor counts
// the blocks.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PIPELENS_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define PIPELENS_SANITIZER_ALLOCATOR 1
#endif
#endif

namespace pipelens::viewer {
namespace {

#if defined(M_TRIM_THRESHOLD) && defined(__GLIBC__) && !defined(PIPELENS_SANITIZER_ALLOCATOR) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))

TEST(AllocatorTuning, AFreedBlockOfTensOfMiBStaysInTheHeap) {
    keep_freed_memory_for_reuse();
    constexpr std::size_t kBlock = std::size_t{48} << 20;
    const struct mallinfo2 before = mallinfo2();
    char* volatile block = static_cast<char*>(std::malloc(kBlock));
    ASSERT_NE(block, nullptr);
    std::memset(block, 1, kBlock);
    const struct mallinfo2 held = mallinfo2();
    EXPECT_LT(held.hblkhd, before.hblkhd + kBlock) << "the block was mmapped on its own";
    EXPECT_GE(held.arena, before.arena + kBlock);
    std::free(block);
    const struct mallinfo2 after = mallinfo2();
    EXPECT_GE(after.arena, before.arena + kBlock) << "the freed block went back to the kernel";
}

#else

TEST(AllocatorTuning, AFreedBlockOfTensOfMiBStaysInTheHeap) {
    GTEST_SKIP() << "glibc's allocator, mallopt and mallinfo2 are not what this build runs";
}

#endif

}  // namespace
}  // namespace pipelens::viewer
