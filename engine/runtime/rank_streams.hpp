// A rank's GPU streams, through LibTorch's device-generic stream API (c10::Stream from the
// device guard implementation's pool, c10::StreamGuard, c10::Event), so no CUDA header is needed
// and the CPU, which has no streams, is left exactly as it was.
//
// Why a stream per rank: rank threads (`--transport local`) that share one stream (the default
// one, current for every thread) have their kernels queued one after another, so two ranks on
// one GPU can never compute at the same time, and each rank's CUDA action timer brackets the
// other ranks' kernels too. With its own stream current for the rank thread's whole life, the
// rank's kernels, its allocations (the caching allocator ties a block to the stream current when
// it was taken) and its action timer's events (made on the current stream) all go to that stream.
//
// Why a hand-over: a tensor made on one rank's stream and read on another's needs the reader's
// stream to wait for the kernels that made it, on the device and not by waiting on the host, and
// its memory must not be handed out again by the allocator to the maker's stream before the
// reader's stream has read it.
//
// Invariants: on the CPU both classes do nothing (no stream is made or made current, no event is
// recorded); the hand-over's event is recorded after every kernel the producer's stream had
// queued when it was made; a consumer that calls before_use_on_current_stream() queues nothing
// that reads the tensors before the event has completed.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>

#include <memory>
#include <optional>

#include "engine/runtime/model_library.hpp"

namespace pipelens::runtime {

// A stream from the device's pool, current on the calling thread (for its device) while this
// lives; on the CPU nothing.
class RankComputeStream {
  public:
    explicit RankComputeStream(const c10::Device& device);
    RankComputeStream(const RankComputeStream&) = delete;
    RankComputeStream& operator=(const RankComputeStream&) = delete;

    // The stream made current; none on the CPU.
    std::optional<c10::Stream> stream() const;

  private:
    std::optional<c10::StreamGuard> guard_;
};

// Tensors handed from the stream that made them to another: an event recorded on the producer's
// current stream, waited for by the consumer's stream.
class StreamHandOver {
  public:
    // After the work queued so far on the calling thread's current stream of the tensors'
    // device; nothing to wait for when every tensor is on the CPU.
    static StreamHandOver after_current_work(const TensorList& tensors);

    // The calling thread's current stream waits for the event (the host does not), and the
    // tensors' memory is marked as in use by that stream (as Tensor::record_stream does).
    void before_use_on_current_stream(const TensorList& tensors) const;

    bool waits() const { return ready_ != nullptr; }

  private:
    std::shared_ptr<c10::Event> ready_;  // shared: the hand-over travels by copy
};

}  // namespace pipelens::runtime
