// A rank's memory curve from its `[memory]` samples: one device's (the GPU its work ran on, else
// the one with the most samples), cut to the imported step (its samples, after one at the step's
// start carrying the level then), so a step's peak is its own. Checked on samples spelled out,
// on PyTorch 2.11's Interleaved1F1B pp=2 trace profiled for two steps, the second allocating a
// thousand times as much, and on its one-GPU trace with a second GPU's samples beside its own.
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

// The trace of one-GPU Interleaved1F1B with every 10th sample of its GPU repeated as GPU 1's, a
// GiB higher: another device's curve in the same file.
TEST(ProfilerMemory, ASecondGpusSamplesAreLeftOutOfTheRanksCurve) {
    const std::vector<std::string> files =
        testing::profiler_rank_files("Interleaved1F1B_pp1_v2_m4_cuda", 1);
    if (!std::filesystem::exists(files.front()))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    nlohmann::json trace = testing::read_gzipped_json(files.front());
    nlohmann::json& events = trace.at("traceEvents");
    const std::size_t count = events.size();
    int seen = 0;
    for (std::size_t index = 0; index < count; ++index) {
        const nlohmann::json event = events[index];
        if (event.value("name", "") != "[memory]" || event["args"].value("Device Type", 0) != 1 ||
            seen++ % 10 != 0)
            continue;
        nlohmann::json other = event;
        other["args"]["Device Id"] = 1;
        other["args"]["Total Allocated"] =
            event["args"]["Total Allocated"].get<std::int64_t>() + (std::int64_t{1} << 30);
        events.push_back(other);
    }
    const std::string two_gpus = testing::process_temp_path("two_gpus_rank0.json").string();
    std::ofstream(two_gpus) << trace.dump();
    const ImportedRun one = read_pytorch_profiler(files);
    const ImportedRun run = read_pytorch_profiler({two_gpus});
    EXPECT_EQ(points_of(run.memory.at(0)), points_of(one.memory.at(0)));
    EXPECT_NE(
        std::find(run.notes.begin(), run.notes.end(),
                  two_gpus + " (global rank 0): memory is CUDA device 0's (410 samples: the device "
                             "its GPU work ran on); left out: 41 samples of CUDA device 1 (each "
                             "device's totals are a curve of their own)"),
        run.notes.end())
        << testing::first_lines(run.notes);
    std::filesystem::remove(two_gpus);
}

RankMemory whole(const std::vector<MemorySample>& samples,
                 const std::map<std::int64_t, std::int64_t>& operations = {}) {
    return rank_memory(samples, operations, std::nullopt, "r.json (global rank 0)");
}

std::vector<traces::MemoryRecord> cut(const std::vector<MemorySample>& samples,
                                      std::optional<TimeWindow> window) {
    return rank_memory(samples, {}, window, "r.json (global rank 0)").points;
}

// CUDA devices 0 (three samples) and 1 (two), and the host's.
const std::vector<MemorySample> kTwoGpus = {{10, 100, 1, 0}, {12, 7000, 1, 1}, {15, 50, 0, -1},
                                            {20, 300, 1, 0}, {25, 9000, 1, 1}, {30, 200, 1, 0}};

TEST(ProfilerMemory, OneDevicesSamplesAreKeptTheOneTheRanksGpuWorkRanOn) {
    // Kernels on device 1: its curve, though device 0 has more samples.
    const RankMemory on_one = whole(kTwoGpus, {{1, 40}, {0, 2}});
    EXPECT_EQ(points_of(on_one.points), (Points{{12, 7000}, {25, 9000}}));
    EXPECT_EQ(on_one.note,
              "r.json (global rank 0): memory is CUDA device 1's (2 samples: the device its GPU "
              "work ran on); left out: 3 samples of CUDA device 0 (each device's totals are a "
              "curve of their own)");
    // No kernels (or none on a device with samples): the device with the most samples.
    for (const std::map<std::int64_t, std::int64_t>& operations :
         {std::map<std::int64_t, std::int64_t>{}, {{3, 10}}}) {
        const RankMemory most = whole(kTwoGpus, operations);
        EXPECT_EQ(points_of(most.points), (Points{{10, 100}, {20, 300}, {30, 200}}));
        EXPECT_EQ(most.note,
                  "r.json (global rank 0): memory is CUDA device 0's (3 samples: the device with "
                  "the most samples, as its GPU work names none of them); left out: 2 samples of "
                  "CUDA device 1 (each device's totals are a curve of their own)");
    }
    // One GPU beside the host: its samples, and nothing to say.
    const std::vector<MemorySample> one_gpu = {{10, 100, 1, 0}, {15, 50, 0, -1}, {20, 300, 1, 0}};
    EXPECT_EQ(points_of(whole(one_gpu).points), (Points{{10, 100}, {20, 300}}));
    EXPECT_EQ(whole(one_gpu).note, "");
    // The host's only where there is no GPU's.
    EXPECT_EQ(points_of(whole({{15, 50, 0, -1}}).points), (Points{{15, 50}}));
}

TEST(ProfilerMemory, AStepKeepsItsSamplesAfterTheLevelInForceWhenItBegins) {
    const std::vector<MemorySample> samples =
        host_samples({{10, 100}, {20, 300}, {35, 500}, {50, 200}, {70, 9000}});
    EXPECT_EQ(points_of(cut(samples, TimeWindow{30, 60})),
              (Points{{30, 300}, {35, 500}, {50, 200}}));
    // A sample at the step's start is the level then; none is added before it.
    EXPECT_EQ(points_of(cut(samples, TimeWindow{20, 50})),
              (Points{{20, 300}, {35, 500}, {50, 200}}));
    // No sample inside: the level stayed what it was.
    EXPECT_EQ(points_of(cut(samples, TimeWindow{51, 60})), (Points{{51, 200}}));
    EXPECT_EQ(points_of(cut(samples, TimeWindow{0, 5})), Points{});
    EXPECT_EQ(points_of(cut(samples, std::nullopt)),
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
