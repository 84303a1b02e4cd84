// The header that travels ahead of every message in the multi-process transports (gloo, nccl):
// the tag and, per tensor, its dtype and element count. A receiver reads it before any payload
// reaches its buffers, so a message that does not fit them is refused with the same one-line
// error as the local transport, instead of a wire-level failure (gloo aborts the process when
// more bytes arrive than were posted, and fills silently when fewer do); and the nccl transport,
// whose wire has no tags, learns which tag the next message on a channel carries.
//
// Invariants: the header has a fixed size (kMessageHeaderElements int64 values), so it can be
// received before anything about the message is known; it starts with a magic number, so a
// receiver that lost step with its sender says so instead of reading garbage as sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/runtime/model_library.hpp"

namespace pipelens::runtime {

inline constexpr int kMaxTensorsPerMessage = 15;
inline constexpr std::int64_t kMessageHeaderElements = 4 + 2 * kMaxTensorsPerMessage;
inline constexpr std::int64_t kMessageHeaderBytes = kMessageHeaderElements * 8;

struct TensorDescription {
    c10::ScalarType dtype = c10::ScalarType::Float;
    std::int64_t elements = 0;
    std::int64_t bytes() const {
        return elements * static_cast<std::int64_t>(c10::elementSize(dtype));
    }
};

struct MessageHeader {
    std::int64_t tag = 0;
    // The payload follows the header in the same wire message (a transport's choice for small
    // messages) rather than as messages of its own.
    bool inline_payload = false;
    std::vector<TensorDescription> tensors;
};

// The header of a message of `tensors` as a CPU int64 tensor, ready to send. Throws
// std::invalid_argument when the message has more than kMaxTensorsPerMessage tensors.
torch::Tensor encode_message_header(int tag, const TensorList& tensors, bool inline_payload,
                                    const std::string& transport_name);

// An uninitialised CPU tensor of the header's size and dtype, to receive a header into.
torch::Tensor empty_message_header();

// Reads a received header (kMessageHeaderElements int64 values, contiguous, on the CPU).
// Throws std::runtime_error when it is not one.
MessageHeader decode_message_header(const torch::Tensor& header, int peer, int rank,
                                    const std::string& transport_name);

// Throws std::runtime_error, worded as the local transport words it, when the message
// described by `header` does not fit `buffers` (count, element counts or dtypes differ).
void check_message_fits(const MessageHeader& header, const TensorList& buffers, int peer, int rank);

}  // namespace pipelens::runtime
