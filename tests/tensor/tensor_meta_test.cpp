// Sizes, bytes and strides of tensor metadata, including shapes no tensor can have (a foreign
// or corrupt trace may hold them): their products saturate instead of overflowing.
#include "engine/tensor/tensor_meta.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace pipelens {
namespace {

constexpr std::int64_t kLargest = std::numeric_limits<std::int64_t>::max();

TEST(TensorMeta, CountsBytesAndStridesOfARealShape) {
    const TensorMeta meta{{8, 16, 4}, contiguous_stride({8, 16, 4}), "bf16"};
    EXPECT_EQ(meta.element_count(), 512);
    EXPECT_EQ(meta.byte_count(), 1024);
    EXPECT_EQ(meta.stride, (std::vector<std::int64_t>{64, 4, 1}));
    // A size 0 counts as 1 in the strides, as PyTorch computes them.
    EXPECT_EQ(contiguous_stride({3, 0, 5}), (std::vector<std::int64_t>{5, 5, 1}));
}

TEST(TensorMeta, ShapesPastInt64SaturateRatherThanWrap) {
    const std::int64_t huge = std::int64_t{1} << 62;
    const TensorMeta count_overflows{{huge, 4}, {}, "f32"};
    EXPECT_EQ(count_overflows.element_count(), kLargest);
    EXPECT_EQ(count_overflows.byte_count(), kLargest);
    const TensorMeta bytes_overflow{{huge}, {}, "f32"};
    EXPECT_EQ(bytes_overflow.element_count(), huge);
    EXPECT_EQ(bytes_overflow.byte_count(), kLargest);
    // Found by fuzzing: no elements, but an outermost stride past int64.
    EXPECT_EQ(contiguous_stride({0, huge, 4}), (std::vector<std::int64_t>{kLargest, 4, 1}));
}

TEST(TensorMeta, ATensorNoRunCanHoldIsNamedByWhatIsImpossible) {
    EXPECT_EQ(impossible_tensor({{8, 64}, {64, 1}, "bf16", true}), std::nullopt);
    EXPECT_EQ(impossible_tensor({{0, std::int64_t{1} << 62, 1 << 30}, {0, 0, 1}, "f64"}),
              std::nullopt);  // empty: no bytes, whatever its other sizes
    EXPECT_EQ(impossible_tensor({{-8, 64}, {64, 1}, "f32"}),
              "shape[0] is -8; sizes cannot be negative");
    EXPECT_EQ(impossible_tensor({{8, 64}, {1}, "f32"}),
              "stride has 1 entries for a shape of 2 dimensions");
    EXPECT_EQ(impossible_tensor({{8, 64}, {64, -1}, "f32"}),
              "stride[1] is -1; PyTorch strides cannot be negative");
    EXPECT_EQ(impossible_tensor({{std::int64_t{1} << 61}, {1}, "f32"}),
              "shape [2305843009213693952] holds more bytes than int64 counts");
    EXPECT_EQ(impossible_tensor({{std::int64_t{1} << 61}, {1}, "i16"}), std::nullopt);
    EXPECT_EQ(impossible_tensor({{8}, {1}, "complex999"})
                  .value_or("")
                  .rfind("dtype 'complex999' is not one PyTorch names (known: bf16, f64, f32, ", 0),
              0u);
}

}  // namespace
}  // namespace pipelens
