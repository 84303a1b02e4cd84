// fr_trace's matching rules on hand-made entries: what a collective seen on two ranks and a send
// matched with a recv must agree on, in which order the differences are reported, and that
// element counts saturate instead of overflowing.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "engine/import/flight_recorder_rules.hpp"

namespace pipelens::import {
namespace {

FlightRecorderEntry op(const std::string& type, std::vector<std::vector<std::int64_t>> inputs,
                       std::vector<std::vector<std::int64_t>> outputs,
                       const std::string& dtype = "Float") {
    FlightRecorderEntry entry;
    entry.op.backend = "nccl";
    entry.op.type = type;
    entry.profiling_name = "nccl:" + type;
    entry.input_sizes = std::move(inputs);
    entry.output_sizes = std::move(outputs);
    entry.input_dtypes = {dtype};
    entry.output_dtypes = {dtype};
    return entry;
}

FlightRecorderEntry transfer(const std::string& type, int src, int dst,
                             std::vector<std::vector<std::int64_t>> sizes,
                             const std::string& dtype = "Float") {
    FlightRecorderEntry entry = op(type, sizes, sizes, dtype);
    entry.op.src = src;
    entry.op.dst = dst;
    return entry;
}

constexpr EntryState kDone = EntryState::completed;

TEST(FlightRecorderRules, AgreeingCollectivesHaveNoDifference) {
    const auto ref = op("all_reduce", {{4, 8}}, {{4, 8}});
    EXPECT_FALSE(compare_collective(ref, kDone, ref, kDone, 2).has_value());
}

TEST(FlightRecorderRules, TypeComesBeforeEverythingElse) {
    const auto difference =
        compare_collective(op("all_reduce", {{4}}, {{4}}), kDone,
                           op("broadcast", {{5}}, {{5}}, "Half"), EntryState::started, 2);
    ASSERT_TRUE(difference.has_value());
    EXPECT_EQ(difference->kind, "type_mismatch");
    EXPECT_EQ(difference->expected, "nccl:all_reduce");
    EXPECT_EQ(difference->actual, "nccl:broadcast");
    EXPECT_EQ(difference->what, "op");
}

TEST(FlightRecorderRules, DtypesComeBeforeSizesAndSizesBeforeState) {
    const auto dtype = compare_collective(op("all_reduce", {{4}}, {{4}}), kDone,
                                          op("all_reduce", {{5}}, {{5}}, "Half"), kDone, 2);
    ASSERT_TRUE(dtype.has_value());
    EXPECT_EQ(dtype->kind, "dtype_mismatch");
    EXPECT_EQ(dtype->expected, "[Float] -> [Float]");
    EXPECT_EQ(dtype->actual, "[Half] -> [Half]");

    const auto size =
        compare_collective(op("all_reduce", {{4, 2}}, {{4, 2}}), kDone,
                           op("all_reduce", {{4, 3}}, {{4, 3}}), EntryState::started, 2);
    ASSERT_TRUE(size.has_value());
    EXPECT_EQ(size->kind, "size_mismatch");
    EXPECT_EQ(size->expected, "[[4, 2]]");
    EXPECT_EQ(size->actual, "[[4, 3]]");
    EXPECT_EQ(size->what, "input sizes");

    const auto state = compare_collective(op("all_reduce", {{4}}, {{4}}), kDone,
                                          op("all_reduce", {{4}}, {{4}}), EntryState::started, 2);
    ASSERT_TRUE(state.has_value());
    EXPECT_EQ(state->kind, "state_mismatch");
    EXPECT_EQ(state->expected, "completed");
    EXPECT_EQ(state->actual, "started");
}

TEST(FlightRecorderRules, AllGatherOutputHoldsGroupSizeTimesTheInput) {
    // Per-rank inputs of 6 elements over 4 ranks: every output holds 24.
    const auto ref = op("all_gather", {{2, 3}}, {{8, 3}});
    EXPECT_FALSE(
        compare_collective(ref, kDone, op("all_gather", {{2, 3}}, {{8, 3}}), kDone, 4).has_value());
    const auto difference =
        compare_collective(ref, kDone, op("all_gather", {{2, 3}}, {{8, 3}}), kDone, 5);
    ASSERT_TRUE(difference.has_value());
    EXPECT_EQ(difference->kind, "size_mismatch");
    EXPECT_EQ(difference->expected, "30 output elements");
    EXPECT_EQ(difference->actual, "24");
    EXPECT_EQ(difference->what, "output size");
}

TEST(FlightRecorderRules, ReduceScatterInputHoldsGroupSizeTimesTheOutput) {
    const auto ref = op("reduce_scatter", {{12}}, {{3}});
    EXPECT_FALSE(
        compare_collective(ref, kDone, op("reduce_scatter", {{12}}, {{3}}), kDone, 4).has_value());
    const auto difference =
        compare_collective(ref, kDone, op("reduce_scatter", {{12}}, {{3}}), kDone, 2);
    ASSERT_TRUE(difference.has_value());
    EXPECT_EQ(difference->expected, "6 input elements");
    EXPECT_EQ(difference->actual, "12");
    EXPECT_EQ(difference->what, "input size");
}

TEST(FlightRecorderRules, ElementCountsSaturateInsteadOfOverflowing) {
    const std::int64_t huge = std::int64_t{1} << 62;
    const auto difference = compare_collective(op("all_gather", {{huge}}, {{huge}}), kDone,
                                               op("all_gather", {{huge}}, {{huge}}), kDone, 4);
    ASSERT_TRUE(difference.has_value());
    EXPECT_EQ(difference->expected,
              std::to_string(std::numeric_limits<std::int64_t>::max()) + " output elements");
}

TEST(FlightRecorderRules, TransferSizesComeBeforeDtypesAndMissingDtypesAreNoDifference) {
    const auto send = transfer("send", 0, 1, {{4, 8}});
    EXPECT_FALSE(compare_transfer(send, transfer("recv", 0, 1, {{4, 8}})).has_value());

    const auto size = compare_transfer(send, transfer("recv", 0, 1, {{4, 9}}, "Half"));
    ASSERT_TRUE(size.has_value());
    EXPECT_EQ(size->kind, "size_mismatch");
    EXPECT_EQ(size->expected, "[[4, 8]]");
    EXPECT_EQ(size->actual, "[[4, 9]]");
    EXPECT_EQ(size->what, "sizes");

    const auto dtype = compare_transfer(send, transfer("recv", 0, 1, {{4, 8}}, "Half"));
    ASSERT_TRUE(dtype.has_value());
    EXPECT_EQ(dtype->kind, "dtype_mismatch");
    EXPECT_EQ(dtype->expected, "[Float]");
    EXPECT_EQ(dtype->actual, "[Half]");

    auto untyped = transfer("recv", 0, 1, {{4, 8}});
    untyped.output_dtypes.clear();
    EXPECT_FALSE(compare_transfer(send, untyped).has_value());
}

TEST(FlightRecorderRules, PartnerNamesAndMarkers) {
    EXPECT_EQ(partner_name(transfer("send", 0, 1, {})), "nccl:recv 1<-0");
    EXPECT_EQ(partner_name(transfer("recv", 0, 1, {})), "nccl:send 0->1");
    EXPECT_TRUE(is_marker(op("coalesced", {}, {})));
    EXPECT_FALSE(is_collective(op("coalesced", {}, {})));
    EXPECT_TRUE(is_collective(op("all_reduce", {}, {})));
    EXPECT_FALSE(is_collective(transfer("send", 0, 1, {})));
}

}  // namespace
}  // namespace pipelens::import
