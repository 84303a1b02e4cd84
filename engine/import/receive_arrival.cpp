// The receive-arrival rule (receive_arrival.hpp): a binary search to the first span starting in
// the post, then a walk over those that start before the post ends.
#include "engine/import/receive_arrival.hpp"

#include <algorithm>

namespace pipelens::import {

std::optional<std::int64_t> receive_arrival(std::span<const TimedSpan> receive_transfers,
                                            const TimedSpan& post) {
    auto at = std::lower_bound(
        receive_transfers.begin(), receive_transfers.end(), post.start_ns,
        [](const TimedSpan& transfer, std::int64_t start) { return transfer.start_ns < start; });
    for (; at != receive_transfers.end() && at->start_ns <= post.end_ns; ++at)
        if (at->thread == post.thread)
            return at->end_ns > post.end_ns ? std::optional(at->end_ns) : std::nullopt;
    return std::nullopt;
}

}  // namespace pipelens::import
