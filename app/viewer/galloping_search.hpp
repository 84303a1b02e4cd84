// A partition point found by galloping from the front: probes at 1, 2, 4, ... places on, then a
// binary search in the last step. The viewer asks for points a few places after the last one
// (a merged block's end, the memory sample of the next pixel column), so the search stays in
// the cache lines it already touched where a plain binary search over the rest would miss at
// every step.
#pragma once

#include <algorithm>
#include <iterator>

namespace pipelens::viewer {

// The first element of [first, last) for which `before` is false; `before` must hold for a
// prefix of the range and not after it, as for std::partition_point.
template <typename Iterator, typename Before>
Iterator galloping_partition_point(Iterator first, Iterator last, Before before) {
    Iterator low = first;
    typename std::iterator_traits<Iterator>::difference_type reach = 1;
    while (reach <= last - low && before(*(low + (reach - 1)))) {
        low += reach;
        reach *= 2;
    }
    return std::partition_point(low, low + std::min(reach, last - low), before);
}

}  // namespace pipelens::viewer
