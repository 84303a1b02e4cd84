// See allocator_tuning.hpp. mallopt and its parameters are glibc's; where <malloc.h> does not
// define them this does nothing. The test is on the parameters themselves: __GLIBC__ is only
// defined once a libc header is in, so testing it first silently compiled this to nothing.
#include "app/viewer/allocator_tuning.hpp"

#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

namespace pipelens::viewer {

void keep_freed_memory_for_reuse() {
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    // Blocks below 1 GiB come from the heap, not from their own mmap; a free heap top is kept up
    // to 2 GiB instead of 128 KiB. Fixing the mmap threshold also stops glibc moving it.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 0x7fffffff);
#endif
}

}  // namespace pipelens::viewer
