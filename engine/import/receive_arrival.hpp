// When a receive's data arrived, the one rule both profiler paths use (the PyTorch runtime's
// `PP:<stage>RECV_*` ranges and a single-stage schedule's `c10d::recv_` posts). Posting a
// receive only starts it: the range that posts it lasts as long as the post, not the transfer.
// The process group's own span of the transfer (`gloo:recv`, `nccl:recv`), which the post
// begins on the same thread, ends when the data is there; it overlaps whatever the thread runs
// meanwhile, so it is never nested inside anything.
//
// Invariants: an arrival is never before the post's end (a span ending inside the post tells
// nothing more than the post does, as NCCL's enqueue range or a blocking Gloo receive); only
// a span of the post's own thread that starts inside the post counts, and of several such the
// first.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace pipelens::import {

struct TimedSpan {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::string thread;  // "pid/tid"
};

// When the receive posted by `post` had its data, where its transfer span says so: the end of
// the first of `receive_transfers` (receive spans only, sorted by start) that began on the
// post's thread during the post, if that ends after the post. None where no span shows the
// data arriving after the post, so the caller keeps what it knew without one.
std::optional<std::int64_t> receive_arrival(std::span<const TimedSpan> receive_transfers,
                                            const TimedSpan& post);

}  // namespace pipelens::import
