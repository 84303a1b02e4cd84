// Message header. Layout, all int64: magic, tag, tensor count, flags (1: payload inline), then
// (dtype, element count) for each of kMaxTensorsPerMessage slots, unused slots zero. The dtype is
// c10::ScalarType's value, which both ends share because they run the same build.
#include "engine/runtime/message_header.hpp"

#include <fmt/format.h>

namespace pipelens::runtime {
namespace {

constexpr std::int64_t kMagic = 0x706c6e73'00000001;  // "plns", layout 1
constexpr std::int64_t kInlinePayloadFlag = 1;
constexpr int kFirstTensorField = 4;

}  // namespace

torch::Tensor encode_message_header(int tag, const TensorList& tensors, bool inline_payload,
                                    const std::string& transport_name) {
    if (tensors.size() > static_cast<std::size_t>(kMaxTensorsPerMessage))
        throw std::invalid_argument(
            fmt::format("{}: a message carries at most {} tensors, but tag {} has {}",
                        transport_name, kMaxTensorsPerMessage, tag, tensors.size()));
    torch::Tensor header = torch::zeros({kMessageHeaderElements}, torch::kInt64);
    std::int64_t* values = header.data_ptr<std::int64_t>();
    values[0] = kMagic;
    values[1] = tag;
    values[2] = static_cast<std::int64_t>(tensors.size());
    values[3] = inline_payload ? kInlinePayloadFlag : 0;
    for (std::size_t index = 0; index < tensors.size(); ++index) {
        values[kFirstTensorField + 2 * index] =
            static_cast<std::int64_t>(tensors[index].scalar_type());
        values[kFirstTensorField + 2 * index + 1] = tensors[index].numel();
    }
    return header;
}

torch::Tensor empty_message_header() {
    return torch::empty({kMessageHeaderElements}, torch::kInt64);
}

MessageHeader decode_message_header(const torch::Tensor& header, int peer, int rank,
                                    const std::string& transport_name) {
    const std::int64_t* values = header.data_ptr<std::int64_t>();
    const std::int64_t count = values[2];
    if (values[0] != kMagic || count < 0 || count > kMaxTensorsPerMessage)
        throw std::runtime_error(fmt::format(
            "{}: rank {} received a malformed message header from rank {} (are both ranks "
            "running the same pipelens build?)",
            transport_name, rank, peer));
    MessageHeader decoded;
    decoded.tag = values[1];
    decoded.inline_payload = (values[3] & kInlinePayloadFlag) != 0;
    for (std::int64_t index = 0; index < count; ++index) {
        const std::int64_t dtype = values[kFirstTensorField + 2 * index];
        const std::int64_t elements = values[kFirstTensorField + 2 * index + 1];
        if (dtype < 0 || dtype >= static_cast<std::int64_t>(c10::ScalarType::NumOptions) ||
            elements < 0)
            throw std::runtime_error(fmt::format(
                "{}: rank {} received a malformed message header from rank {} (tensor {})",
                transport_name, rank, peer, index));
        decoded.tensors.push_back({static_cast<c10::ScalarType>(dtype), elements});
    }
    return decoded;
}

void check_message_fits(const MessageHeader& header, const TensorList& buffers, int peer,
                        int rank) {
    if (header.tensors.size() != buffers.size())
        throw std::runtime_error(
            fmt::format("rank {} sent {} tensors (tag {}) but rank {} expects {}", peer,
                        header.tensors.size(), header.tag, rank, buffers.size()));
    for (std::size_t index = 0; index < buffers.size(); ++index) {
        const TensorDescription& sent = header.tensors[index];
        if (sent.elements != buffers[index].numel() || sent.dtype != buffers[index].scalar_type())
            throw std::runtime_error(fmt::format(
                "rank {} sent tensor {} (tag {}) with {} elements of {} but rank {} expects {} "
                "of {}",
                peer, index, header.tag, sent.elements, c10::toString(sent.dtype), rank,
                buffers[index].numel(), c10::toString(buffers[index].scalar_type())));
    }
}

}  // namespace pipelens::runtime
