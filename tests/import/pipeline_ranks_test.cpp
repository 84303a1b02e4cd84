// Files to pipeline ranks (engine/import/pipeline_ranks.hpp): any set of global ranks, ordered
// by the pipeline group the traces name, else by global rank; each pipeline rank keeps its
// global rank, and a duplicate or unknown rank is an error naming the files.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "engine/import/imported_run.hpp"
#include "engine/import/pipeline_ranks.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::import {
namespace {

const ProcessGroupInfo kWorld{
    "0", "default_pg", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}};

std::string error_of(const std::vector<RankSource>& sources) {
    return testing::thrown_message<ImportError>([&] { pipeline_ranks(sources); }, "no error");
}

TEST(PipelineRanks, GlobalRanksAscendingWhenNoGroupIsExactlyThem) {
    const PipelineRanks ranks = pipeline_ranks({{"b.json", 12, {kWorld}}, {"a.json", 4, {kWorld}}});
    EXPECT_EQ(ranks.order, (std::vector<std::size_t>{1, 0}));
    EXPECT_EQ(ranks.global_ranks, (std::vector<int>{4, 12}));
    EXPECT_FALSE(ranks.group.has_value());
    EXPECT_EQ(pipeline_ranks_note(ranks),
              "pipeline ranks 0..1 are global ranks 4, 12 (by global rank: no process group of "
              "exactly these ranks)");
}

TEST(PipelineRanks, APipelineGroupOrdersByItsOwnRankList) {
    // DeviceMesh describes its pp dimension's group "mesh_pp"; its list is the pipeline order.
    const ProcessGroupInfo pp{"3", "mesh_pp", {20, 4, 12, 28}};
    const PipelineRanks ranks = pipeline_ranks(
        {{"r4.json", 4, {kWorld, pp}}, {"r12.json", 12, {kWorld, pp}}, {"r20.json", 20, {kWorld}}});
    EXPECT_EQ(ranks.order, (std::vector<std::size_t>{2, 0, 1}));
    EXPECT_EQ(ranks.global_ranks, (std::vector<int>{20, 4, 12}));
    ASSERT_TRUE(ranks.group.has_value());
    EXPECT_EQ(ranks.group->name, "3");
    EXPECT_EQ(pipeline_ranks_note(ranks),
              "pipeline ranks 0..2 are global ranks 20, 4, 12 (in the order of process group "
              "'3' (mesh_pp) of ranks 20, 4, 12, 28)");
}

TEST(PipelineRanks, AGroupOfExactlyTheRanksGivenOrdersThemWhateverItsName) {
    const ProcessGroupInfo group{"5", "undefined", {12, 4}};
    const PipelineRanks ranks = pipeline_ranks({{"a", 4, {group}}, {"b", 12, {group}}});
    EXPECT_EQ(ranks.global_ranks, (std::vector<int>{12, 4}));
    ASSERT_TRUE(ranks.group.has_value());
    EXPECT_EQ(ranks.group->name, "5");
}

TEST(PipelineRanks, OneRankOfALargeJobIsPipelineRankZero) {
    ProcessGroupInfo world{"0", "default_pg", std::vector<int>(300)};
    std::iota(world.ranks.begin(), world.ranks.end(), 0);
    const PipelineRanks ranks = pipeline_ranks({{"rank-34.json", 34, {world}}});
    EXPECT_EQ(ranks.global_ranks, (std::vector<int>{34}));
    EXPECT_FALSE(ranks.group.has_value());
    EXPECT_EQ(pipeline_ranks_note(ranks),
              "pipeline ranks 0..0 are global ranks 34 (by global rank: no process group of "
              "exactly these ranks)");
}

TEST(PipelineRanks, RanksZeroToNMinusOneWithoutAGroupNeedNoNote) {
    const PipelineRanks ranks = pipeline_ranks({{"b", 1, {}}, {"a", 0, {}}});
    EXPECT_EQ(ranks.global_ranks, (std::vector<int>{0, 1}));
    EXPECT_EQ(pipeline_ranks_note(ranks), "");
    // Nor with one: the note is for a mapping that is not the identity (import.md).
    const ProcessGroupInfo world{"0", "default_pg", {0, 1}};
    EXPECT_EQ(pipeline_ranks_note(pipeline_ranks({{"b", 1, {world}}, {"a", 0, {world}}})), "");
    EXPECT_EQ(pipeline_ranks({{"only.json", std::nullopt, {}}}).global_ranks,
              (std::vector<int>{0}));
}

TEST(PipelineRanks, DuplicateAndUnknownRanksNameTheFiles) {
    EXPECT_EQ(error_of({{"x.json", 4, {}}, {"y.json", 4, {}}}),
              "x.json and y.json both hold global rank 4");
    EXPECT_EQ(error_of({{"x.json", 4, {}}, {"y.json", std::nullopt, {}}}),
              "y.json: cannot tell which rank it is: the trace has no distributedInfo.rank and "
              "the file name no \"rank<N>\"");
}

}  // namespace
}  // namespace pipelens::import
