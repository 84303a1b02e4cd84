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

TEST(FlightRecorderRules, SizesComeBeforeDtypesAndDtypesBeforeState) {
    // fr_trace's Op.match order: a rank whose sizes and dtype both differ is a size mismatch.
    const auto size =
        compare_collective(op("all_reduce", {{4, 2}}, {{4, 2}}), kDone,
                           op("all_reduce", {{4, 3}}, {{4, 3}}, "Half"), EntryState::started, 2);
    ASSERT_TRUE(size.has_value());
    EXPECT_EQ(size->kind, "size_mismatch");
    EXPECT_EQ(size->expected, "[[4, 2]]");
    EXPECT_EQ(size->actual, "[[4, 3]]");
    EXPECT_EQ(size->what, "input sizes");

    const auto dtype =
        compare_collective(op("all_reduce", {{4}}, {{4}}), kDone,
                           op("all_reduce", {{4}}, {{4}}, "Half"), EntryState::started, 2);
    ASSERT_TRUE(dtype.has_value());
    EXPECT_EQ(dtype->kind, "dtype_mismatch");
    EXPECT_EQ(dtype->expected, "[Float] -> [Float]");
    EXPECT_EQ(dtype->actual, "[Half] -> [Half]");

    const auto state = compare_collective(op("all_reduce", {{4}}, {{4}}), kDone,
                                          op("all_reduce", {{4}}, {{4}}), EntryState::started, 2);
    ASSERT_TRUE(state.has_value());
    EXPECT_EQ(state->kind, "state_mismatch");
    EXPECT_EQ(state->expected, "completed");
    EXPECT_EQ(state->actual, "started");
}

// What a rank that is not the root of a gather or scatter records: an empty placeholder, and
// for it dtype "Undefined" (PyTorch's own fr_trace test has output_sizes [[]] there).
FlightRecorderEntry non_root(const std::string& type, bool placeholder_output) {
    FlightRecorderEntry entry = op(type, {{4}}, {{4}});
    if (placeholder_output) {
        entry.output_sizes = {{}};
        entry.output_dtypes = {"Undefined"};
    } else {
        entry.input_sizes = {{}};
        entry.input_dtypes = {"Undefined"};
    }
    return entry;
}

TEST(FlightRecorderRules, GatherAndScatterPlaceholdersAreNoDtypeMismatch) {
    auto gather_root = op("gather", {{4}}, {{4}, {4}});
    EXPECT_FALSE(
        compare_collective(gather_root, kDone, non_root("gather", true), kDone, 2).has_value());
    auto scatter_root = op("scatter", {{4}, {4}}, {{4}});
    EXPECT_FALSE(
        compare_collective(scatter_root, kDone, non_root("scatter", false), kDone, 2).has_value());
    // A broadcast's input is only the root's to give; its output must agree.
    auto broadcast = op("broadcast", {{4}}, {{4}});
    auto other = op("broadcast", {{4}}, {{4}});
    other.input_dtypes = {"Half"};
    other.output_dtypes = {"Half", "Float"};
    const auto output = compare_collective(broadcast, kDone, other, kDone, 2);
    ASSERT_TRUE(output.has_value());
    EXPECT_EQ(output->kind, "dtype_mismatch");  // {Half, Float} against {Float}
    other.output_dtypes = {"Float", "Float"};   // the same set: no difference
    EXPECT_FALSE(compare_collective(broadcast, kDone, other, kDone, 2).has_value());
    // Elsewhere a tensor's dtype must agree across ranks.
    auto gather_other = op("gather", {{4}}, {{}});
    gather_other.input_dtypes = {"Half"};
    const auto input = compare_collective(gather_root, kDone, gather_other, kDone, 2);
    ASSERT_TRUE(input.has_value());
    EXPECT_EQ(input->kind, "dtype_mismatch");
}

TEST(FlightRecorderRules, CoalescedCollectivesTakeTheirOwnOpsRules) {
    const auto agreeing = compare_collective(op("allreduce_coalesced", {{4}}, {{4}}), kDone,
                                             op("allreduce_coalesced", {{4}}, {{4}}), kDone, 2);
    EXPECT_FALSE(agreeing.has_value());
    const auto reduce = compare_collective(op("allreduce_coalesced", {{4}}, {{4}}), kDone,
                                           op("allreduce_coalesced", {{4}}, {{8}}), kDone, 2);
    ASSERT_TRUE(reduce.has_value());
    EXPECT_EQ(reduce->what, "output sizes");
    for (const char* gather : {"all_gather_into_tensor_coalesced", "_all_gather_base"}) {
        const auto difference =
            compare_collective(op(gather, {{3}}, {{9}}), kDone, op(gather, {{3}}, {{9}}), kDone, 4);
        ASSERT_TRUE(difference.has_value()) << gather;
        EXPECT_EQ(difference->expected, "12 (3 input elements x 4 ranks)") << gather;
    }
    const auto scatter =
        compare_collective(op("reduce_scatter_tensor_coalesced", {{8}}, {{2}}), kDone,
                           op("reduce_scatter_tensor_coalesced", {{8}}, {{2}}), kDone, 2);
    ASSERT_TRUE(scatter.has_value());
    EXPECT_EQ(scatter->expected, "4 (2 output elements x 2 ranks)");
}

TEST(FlightRecorderRules, AllToAllIsCheckedOverTheWholeGroup) {
    // Pairwise its sizes may differ; over the group what is sent is what is received.
    const auto a = op("all_to_all", {{6}}, {{4}});
    const auto b = op("all_to_all", {{2}}, {{4}});
    EXPECT_FALSE(compare_collective(a, kDone, b, kDone, 2).has_value());
    EXPECT_FALSE(compare_all_to_all_totals({&a, &b}).has_value());
    const auto c = op("all_to_all", {{10}}, {{4}});
    const auto totals = compare_all_to_all_totals({&a, &c});
    ASSERT_TRUE(totals.has_value());
    EXPECT_EQ(totals->kind, "size_mismatch");
    EXPECT_EQ(totals->expected, "16 elements");
    EXPECT_EQ(totals->actual, "8 elements");
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
    EXPECT_EQ(difference->expected, "30 (6 input elements x 5 ranks)");
    EXPECT_EQ(difference->actual, "24");
    EXPECT_EQ(difference->what, "output element count");
}

TEST(FlightRecorderRules, ReduceScatterInputHoldsGroupSizeTimesTheOutput) {
    const auto ref = op("reduce_scatter", {{12}}, {{3}});
    EXPECT_FALSE(
        compare_collective(ref, kDone, op("reduce_scatter", {{12}}, {{3}}), kDone, 4).has_value());
    const auto difference =
        compare_collective(ref, kDone, op("reduce_scatter", {{12}}, {{3}}), kDone, 2);
    ASSERT_TRUE(difference.has_value());
    EXPECT_EQ(difference->expected, "6 (3 output elements x 2 ranks)");
    EXPECT_EQ(difference->actual, "12");
    EXPECT_EQ(difference->what, "input element count");
}

TEST(FlightRecorderRules, ElementCountsSaturateInsteadOfOverflowing) {
    const std::int64_t huge = std::int64_t{1} << 62;
    const auto difference = compare_collective(op("all_gather", {{huge}}, {{huge}}), kDone,
                                               op("all_gather", {{huge}}, {{huge}}), kDone, 4);
    ASSERT_TRUE(difference.has_value());
    EXPECT_EQ(difference->expected, std::to_string(std::numeric_limits<std::int64_t>::max()) +
                                        " (" + std::to_string(huge) + " input elements x 4 ranks)");
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
    EXPECT_TRUE(is_marker(op("ALLGATHER_coalesced", {}, {})));
    EXPECT_TRUE(is_marker(op("REDUCE_SCATTER_coalesced", {}, {})));
    EXPECT_FALSE(is_marker(op("allreduce_coalesced", {}, {})));
    EXPECT_FALSE(is_marker(op("all_gather_into_tensor_coalesced", {}, {})));
    EXPECT_FALSE(is_collective(op("coalesced", {}, {})));
    EXPECT_TRUE(is_collective(op("all_reduce", {}, {})));
    EXPECT_FALSE(is_collective(transfer("send", 0, 1, {})));
}

}  // namespace
}  // namespace pipelens::import
