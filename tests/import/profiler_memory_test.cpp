// A rank's memory curve from its `[memory]` samples: cut to the imported step (its samples, after
// one at the step's start carrying the level then), so a step's peak is its own. Checked on
// samples spelled out and on PyTorch 2.11's Interleaved1F1B pp=2 trace profiled for two steps,
// the second allocating a thousand times as much.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/imported_run.hpp"
#include "engine/import/profiler_memory.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/import/derived_traces.hpp"
#include "tests/import/pytorch_written_fixtures.hpp"

namespace pipelens::import {
namespace {

using Points = std::vector<std::pair<std::int64_t, std::int64_t>>;  // (time, bytes)

Points points_of(const std::vector<traces::MemoryRecord>& records) {
    Points points;
    for (const traces::MemoryRecord& record : records)
        points.emplace_back(record.time_ns, record.bytes);
    return points;
}

std::vector<MemorySample> host_samples(const Points& points) {
    std::vector<MemorySample> samples;
    for (const auto& [time, bytes] : points)
        samples.push_back({time, bytes, 0, -1});
    return samples;
}

TEST(ProfilerMemory, AStepKeepsItsSamplesAfterTheLevelInForceWhenItBegins) {
    const std::vector<MemorySample> samples =
        host_samples({{10, 100}, {20, 300}, {35, 500}, {50, 200}, {70, 9000}});
    EXPECT_EQ(points_of(rank_memory(samples, TimeWindow{30, 60})),
              (Points{{30, 300}, {35, 500}, {50, 200}}));
    // A sample at the step's start is the level then; none is added before it.
    EXPECT_EQ(points_of(rank_memory(samples, TimeWindow{20, 50})),
              (Points{{20, 300}, {35, 500}, {50, 200}}));
    // No sample inside: the level stayed what it was.
    EXPECT_EQ(points_of(rank_memory(samples, TimeWindow{51, 60})), (Points{{51, 200}}));
    EXPECT_EQ(points_of(rank_memory(samples, TimeWindow{0, 5})), Points{});
    EXPECT_EQ(points_of(rank_memory(samples, std::nullopt)),
              (Points{{10, 100}, {20, 300}, {35, 500}, {50, 200}, {70, 9000}}));
}

// Two steps of Interleaved1F1B pp=2, the second's totals a thousand times the first's: step 0
// peaks at its own 15,232 bytes on rank 0 (every sample of the file was once kept, so it peaked
// at the second step's 15,232,000), and step 1 starts from the level the first left.
TEST(ProfilerMemory, AnImportedStepsPeakIsItsOwn) {
    const std::vector<std::string> files =
        testing::profiler_rank_files("Interleaved1F1B_pp2_v2_m4_cpu", 2);
    if (!std::filesystem::exists(files.front()))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    std::vector<std::string> twice;
    for (std::size_t rank = 0; rank < files.size(); ++rank) {
        const nlohmann::json trace = testing::repeated_steps(
            testing::read_gzipped_json(files[rank]),
            {2, -1, [](nlohmann::json& event, int copy) {
                 if (copy == 1 && event.value("name", "") == "[memory]")
                     event["args"]["Total Allocated"] =
                         event["args"]["Total Allocated"].get<std::int64_t>() * 1000;
             }});
        twice.push_back(
            testing::process_temp_path("memory_twice_rank" + std::to_string(rank) + ".json")
                .string());
        std::ofstream(twice.back()) << trace.dump();
    }
    const auto peak = [](const std::vector<traces::MemoryRecord>& records) {
        std::int64_t most = 0;
        for (const traces::MemoryRecord& record : records)
            most = std::max(most, record.bytes);
        return most;
    };
    const ImportedRun first = read_pytorch_profiler(twice, {0});
    EXPECT_EQ(peak(first.memory.at(0)), 15'232);
    EXPECT_EQ(peak(first.memory.at(1)), 16'520);
    EXPECT_EQ(first.memory[0].size(), 196u);  // the samples inside its action ranges' span
    EXPECT_EQ(first.memory[1].size(), 244u);
    const ImportedRun second = read_pytorch_profiler(twice);
    EXPECT_EQ(peak(second.memory.at(0)), 15'232'000);
    ASSERT_EQ(second.memory[0].size(), 197u);
    // The level the first step's last sample left, at the second step's first action.
    EXPECT_EQ(second.memory[0].front().bytes, 8'704);
    EXPECT_EQ(second.memory[0].front().time_ns, second.timings.at(0).front().start_ns);
    EXPECT_EQ(second.memory[1].front().bytes, 10'752);
}

}  // namespace
}  // namespace pipelens::import
