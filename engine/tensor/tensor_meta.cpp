// TensorMeta printing and boundary checks. Shapes print as torch.Size([...]) and strides as
// Python tuples in mismatch messages because that is what PyTorch prints there, so a message
// from pipelens and one from PyTorch can be compared (or grepped) as text.
#include "engine/tensor/tensor_meta.hpp"

#include "engine/tensor/dtype_names.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pipelens {
namespace {

std::string size_text(const std::vector<std::int64_t>& shape) {
    return fmt::format("torch.Size([{}])", fmt::join(shape, ", "));
}

// Sizes multiply saturating at int64's largest: no real tensor comes near it, and a foreign or
// corrupt trace's shape must still give a defined (if absurd) count, bytes and strides. Where a
// shape is taken as input to be computed on, its parser refuses it first (sharding's
// checked_element_count).
std::int64_t saturating_product(std::int64_t left, std::int64_t right) {
    std::int64_t product = 0;
    if (__builtin_mul_overflow(left, right, &product))
        return (left < 0) != (right < 0) ? std::numeric_limits<std::int64_t>::min()
                                         : std::numeric_limits<std::int64_t>::max();
    return product;
}

std::string tuple_text(const std::vector<std::int64_t>& values) {
    if (values.size() == 1)
        return fmt::format("({},)", values.front());
    return fmt::format("({})", fmt::join(values, ", "));
}

}  // namespace

std::int64_t TensorMeta::element_count() const {
    std::int64_t count = 1;
    for (std::int64_t size : shape)
        count = saturating_product(count, size);
    return count;
}

std::int64_t TensorMeta::byte_count() const {
    // A name outside PyTorch's table (only a foreign trace holds one) counts a byte an element,
    // so its size stays defined; parsers of user input refuse such names first.
    return saturating_product(element_count(), dtype_item_bytes(dtype).value_or(1));
}

std::optional<std::string> impossible_tensor(const TensorMeta& meta) {
    const auto item_bytes = dtype_item_bytes(meta.dtype);
    if (!item_bytes)
        return fmt::format("dtype '{}' is not one PyTorch names (known: {})", meta.dtype,
                           known_dtype_names());
    for (std::size_t index = 0; index < meta.shape.size(); ++index)
        if (meta.shape[index] < 0)
            return fmt::format("shape[{}] is {}; sizes cannot be negative", index,
                               meta.shape[index]);
    if (meta.stride.size() != meta.shape.size())
        return fmt::format("stride has {} entries for a shape of {} dimensions", meta.stride.size(),
                           meta.shape.size());
    for (std::size_t index = 0; index < meta.stride.size(); ++index)
        if (meta.stride[index] < 0)
            return fmt::format("stride[{}] is {}; PyTorch strides cannot be negative", index,
                               meta.stride[index]);
    if (std::find(meta.shape.begin(), meta.shape.end(), 0) != meta.shape.end())
        return std::nullopt;  // empty, however large its other sizes
    std::int64_t bytes = *item_bytes;
    for (std::int64_t size : meta.shape)
        if (__builtin_mul_overflow(bytes, size, &bytes))
            return fmt::format("shape [{}] holds more bytes than int64 counts",
                               fmt::join(meta.shape, ", "));
    return std::nullopt;
}

std::string to_string(const TensorMeta& meta) {
    return fmt::format("{}[{}]", meta.dtype, fmt::join(meta.shape, ", "));
}

std::string to_string(const std::vector<TensorMeta>& metas) {
    std::string text = "(";
    for (std::size_t index = 0; index < metas.size(); ++index) {
        if (index > 0)
            text += ", ";
        text += to_string(metas[index]);
    }
    return text + ")";
}

std::vector<std::int64_t> contiguous_stride(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> stride(shape.size(), 1);
    for (std::size_t index = shape.size(); index-- > 1;)
        stride[index - 1] =
            saturating_product(stride[index], std::max<std::int64_t>(shape[index], 1));
    return stride;
}

std::optional<MetadataMismatch> check_tensors_metadata(const std::string& what,
                                                       const std::vector<TensorMeta>& expected,
                                                       const std::vector<TensorMeta>& actual) {
    if (expected.size() != actual.size()) {
        const std::string expected_count = std::to_string(expected.size());
        const std::string actual_count = std::to_string(actual.size());
        return MetadataMismatch{"count", -1, expected_count, actual_count,
                                fmt::format("Number of {} ({}) does not match expected number ({})",
                                            what, actual_count, expected_count)};
    }
    for (std::size_t index = 0; index < expected.size(); ++index) {
        const TensorMeta& want = expected[index];
        const TensorMeta& got = actual[index];
        const auto mismatch = [&](std::string kind, std::string want_text, std::string got_text) {
            std::string message = fmt::format("{}[{}] has a {} mismatch: expected {} actual {}",
                                              what, index, kind, want_text, got_text);
            return MetadataMismatch{std::move(kind), static_cast<int>(index), std::move(want_text),
                                    std::move(got_text), std::move(message)};
        };
        if (want.shape != got.shape)
            return mismatch("shape", size_text(want.shape), size_text(got.shape));
        if (want.dtype != got.dtype)
            return mismatch("dtype", torch_dtype_name(want.dtype), torch_dtype_name(got.dtype));
        if (want.stride != got.stride)
            return mismatch("stride", tuple_text(want.stride), tuple_text(got.stride));
    }
    return std::nullopt;
}

}  // namespace pipelens
