// See allocator_tuning.hpp. mallopt is glibc's; elsewhere this does nothing.
#include "app/viewer/allocator_tuning.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pipelens::viewer {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
    // Blocks below 1 GiB come from the heap, not from their own mmap; a free heap top is kept up
    // to 2 GiB instead of 128 KiB. Fixing the mmap threshold also stops glibc moving it.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 0x7fffffff);
#endif
}

}  // namespace pipelens::viewer
