// A profiled window that begins or ends inside a training step: the leading tail of a step is
// dropped only when it is, name for name, the end of the whole step that follows (so a window
// that starts at a step keeps everything), the step starting at the lowest stage's forward of
// microbatch 0 with its UNSHARDs and RECV_F; ranges past the last whole step are counted. On
// PyTorch 2.11's own Interleaved1F1B pp=2 trace, two steps of it with the window opened 12 ms
// into the first import as the step itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/profiler_step_edges.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/import/derived_traces.hpp"
#include "tests/import/imported_steps.hpp"
#include "tests/import/pytorch_written_fixtures.hpp"

namespace pipelens::import {
namespace {

// One "PP:" range per name, 10 ns apart, in order.
std::vector<Range> ranges_of(const std::vector<std::string>& names) {
    std::vector<Range> ranges;
    std::int64_t at = 0;
    for (const std::string& name : names) {
        ranges.push_back({"PP:" + name, at, at + 5, "1/1", 0});
        at += 10;
    }
    return ranges;
}

std::vector<std::string> names_of(const std::vector<Range>& ranges) {
    std::vector<std::string> names;
    for (const Range& range : ranges)
        names.push_back(range.name.substr(3));
    return names;
}

std::vector<std::string> joined(std::vector<std::vector<std::string>> parts) {
    std::vector<std::string> all;
    for (auto& part : parts)
        all.insert(all.end(), part.begin(), part.end());
    return all;
}

const std::vector<std::string> kLastRank = {"1RECV_F0", "1F0", "1SEND_B0", "1RECV_F1",
                                            "1F1",      "1B0", "1B1",      "1SEND_B1"};

TEST(ProfilerStepEdges, TheTailOfAStepTheWindowOpenedInIsDropped) {
    std::vector<Range> ranges =
        ranges_of(joined({{"1F1", "1B0", "1B1", "1SEND_B1"}, kLastRank, kLastRank}));
    EXPECT_EQ(drop_leading_partial_step(ranges), 4u);
    EXPECT_EQ(names_of(ranges), joined({kLastRank, kLastRank}));
    EXPECT_EQ(ranges.front().start_ns, 40);
}

TEST(ProfilerStepEdges, AWindowThatOpensAtAStepKeepsEveryRange) {
    std::vector<Range> ranges = ranges_of(joined({kLastRank, kLastRank}));
    EXPECT_EQ(drop_leading_partial_step(ranges), 0u);
    EXPECT_EQ(ranges.size(), 16u);
    // Leading ranges that are not the following step's end are no step's tail: kept.
    ranges = ranges_of(joined({{"1B0"}, kLastRank}));
    EXPECT_EQ(drop_leading_partial_step(ranges), 0u);
    EXPECT_EQ(ranges.size(), 9u);
}

TEST(ProfilerStepEdges, AStepStartsAtItsUnshardsAndTheLowestStagesFirstForward) {
    // Rank 0 of an interleaved pipeline holds stages 0 and 2: stage 0's F0 starts its step,
    // after the FSDP UNSHARDs; stage 2's F0 does not.
    const std::vector<std::string> program = {"0UNSHARD", "2UNSHARD", "0F0", "0F1", "2F0",
                                              "2F1",      "2B0",      "2B1", "0B0", "0B1"};
    std::vector<Range> ranges = ranges_of(joined({{"2B1", "0B0", "0B1"}, program, program}));
    EXPECT_EQ(drop_leading_partial_step(ranges), 3u);
    EXPECT_EQ(names_of(ranges), joined({program, program}));
}

TEST(ProfilerStepEdges, RangesPastTheLastWholeStepAreCounted) {
    const std::vector<Range> ranges = ranges_of(joined({kLastRank, {"1RECV_F0", "1F0"}}));
    EXPECT_EQ(ranges_past_last_step(ranges, 1), 2u);
    EXPECT_EQ(ranges_past_last_step(ranges_of(kLastRank), 1), 0u);
}

// The trace twice, the copy 40 ms later, with the window opened 12 ms after its first action.
std::string opened_late(const std::string& path, const std::string& name) {
    nlohmann::json trace = testing::read_gzipped_json(path);
    nlohmann::json& events = trace.at("traceEvents");
    double first_action = 1e300;
    for (const nlohmann::json& event : events)
        if (event.value("name", "").starts_with("PP:"))
            first_action = std::min(first_action, event.at("ts").get<double>());
    nlohmann::json kept = nlohmann::json::array();
    for (const double shift : {0.0, 40'000.0})
        for (nlohmann::json event : events) {
            if (!event.contains("ts")) {
                if (shift == 0)
                    kept.push_back(std::move(event));
                continue;
            }
            event["ts"] = event["ts"].get<double>() + shift;
            if (event["ts"].get<double>() >= first_action + 12'000)
                kept.push_back(std::move(event));
        }
    events = std::move(kept);
    const std::string out = testing::process_temp_path(name).string();
    std::ofstream(out) << trace.dump();
    return out;
}

TEST(ProfilerStepEdges, PyTorchsTraceOpenedDuringAStepImportsTheWholeStepAfterIt) {
    const std::vector<std::string> files =
        testing::profiler_rank_files("Interleaved1F1B_pp2_v2_m4_cpu", 2);
    if (!std::filesystem::exists(files.front()))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun whole = read_pytorch_profiler(files);
    const ImportedRun late = read_pytorch_profiler(
        {opened_late(files[0], "late_rank0.json"), opened_late(files[1], "late_rank1.json")});
    EXPECT_EQ(late.schedule.name, "Interleaved1F1B");
    EXPECT_EQ(late.schedule.microbatch_count, 4);
    for (int rank = 0; rank < 2; ++rank) {
        // Every action once, in the same order and each as long: the step after the cut.
        const auto expected = testing::steps_of(whole, rank);
        const auto found = testing::steps_of(late, rank);
        ASSERT_EQ(found.size(), expected.size()) << "rank " << rank;
        for (std::size_t index = 0; index < found.size(); ++index) {
            EXPECT_EQ(std::get<0>(found[index]), std::get<0>(expected[index]));
            EXPECT_EQ(std::get<2>(found[index]) - std::get<1>(found[index]),
                      std::get<2>(expected[index]) - std::get<1>(expected[index]))
                << std::get<0>(found[index]);
        }
    }
    int said = 0;
    for (const std::string& note : late.notes)
        said += note.find("the profile began during a step") != std::string::npos ? 1 : 0;
    EXPECT_EQ(said, 2);
}

}  // namespace
}  // namespace pipelens::import
