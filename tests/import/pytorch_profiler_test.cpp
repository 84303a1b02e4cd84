// PyTorch profiler traces -> Action IR with times: the fixtures (tests/data/pytorch_profiler/,
// made by make_traces.py there) are a 1F1B pp=2 m=2 step whose every action time is known, so
// each imported start and end is asserted exactly, in microseconds from the step's start.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/imported_run.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "engine/import/rank_file_name.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/import/pytorch_written_fixtures.hpp"
#include "tests/thrown_message.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::import {
namespace {

std::string fixture(const std::string& name) {
    return std::string(PIPELENS_SOURCE_DIR) + "/tests/data/pytorch_profiler/" + name;
}

struct Expected {
    std::string action;
    double start_us;
    double end_us;
};

std::int64_t earliest(const ImportedRun& run) {
    std::int64_t first = run.timings.at(0).at(0).start_ns;
    for (const auto& rank : run.timings)
        for (const ImportedTiming& timing : rank)
            first = std::min(first, timing.start_ns);
    return first;
}

void expect_rank(const ImportedRun& run, int rank, const std::vector<Expected>& expected) {
    const std::int64_t zero = earliest(run);
    const auto& actions = run.schedule.ranks.at(rank);
    ASSERT_EQ(actions.size(), expected.size()) << "rank " << rank;
    for (std::size_t step = 0; step < expected.size(); ++step) {
        SCOPED_TRACE("rank " + std::to_string(rank) + " step " + std::to_string(step));
        EXPECT_EQ(run.schedule.text(actions[step]), expected[step].action);
        EXPECT_EQ(run.timings[rank][step].start_ns - zero,
                  std::llround(expected[step].start_us * 1000));
        EXPECT_EQ(run.timings[rank][step].end_ns - zero,
                  std::llround(expected[step].end_us * 1000));
    }
}

ImportedRun runtime_run() {
    return read_pytorch_profiler(
        {fixture("runtime_1f1b_rank0.json"), fixture("runtime_1f1b_rank1.json.gz")});
}

TEST(PytorchProfilerImport, RuntimeRangesBecomeActionsWithWaitsSeparatedOut) {
    const ImportedRun run = runtime_run();
    EXPECT_EQ(run.schedule.name, "1F1B");
    EXPECT_EQ(run.schedule.rank_count, 2);
    EXPECT_EQ(run.schedule.stages_per_rank, 1);
    EXPECT_EQ(run.schedule.microbatch_count, 2);
    EXPECT_EQ(run.schedule.stage_to_rank, (std::vector<int>{0, 1}));
    // Compute starts when its wait for inputs ended; a RECV ends when its consumer stopped
    // waiting (its own range only posts it).
    expect_rank(run, 0,
                {{"0F0", 0, 10},
                 {"0SEND_F0", 10, 11},
                 {"0F1", 11, 21},
                 {"0SEND_F1", 21, 22},
                 {"0RECV_B0", 22, 45},
                 {"0B0", 45, 65},
                 {"0RECV_B1", 65, 77},
                 {"0B1", 77, 97}});
    expect_rank(run, 1,
                {{"1RECV_F0", 0, 12},
                 {"1F0", 12, 22},
                 {"1B0", 22, 42},
                 {"1SEND_B0", 42, 43},
                 {"1RECV_F1", 43, 44.2},
                 {"1F1", 44.2, 54},
                 {"1B1", 54, 74},
                 {"1SEND_B1", 74, 75}});
    EXPECT_EQ(run.timings[0][1].bytes, 1024 * 4);  // 1024 Float elements
    ASSERT_EQ(run.memory.at(0).size(), 4u);
    EXPECT_EQ(run.memory[0][1].bytes, 8192);
    EXPECT_TRUE(run.memory.at(1).empty());
    // One clock already: every RECV ended after its SEND started, so nothing was shifted.
    for (const auto& clock : run.clocks)
        EXPECT_FALSE(clock.has_value());
    ASSERT_GE(run.notes.size(), 2u);
    EXPECT_NE(run.notes[1].find("CPU ranges"), std::string::npos) << run.notes[1];
}

TEST(PytorchProfilerImport, RecordedRunHasPairsBubblesAndMemory) {
    const auto path = testing::fresh_trace("profiler_import");
    std::int64_t run_id = 0;
    {
        traces::TraceWriter writer(path);
        run_id = record_imported_run(writer, runtime_run());
    }
    const traces::TraceReader reader(path);
    const traces::RunRecord run = reader.run(run_id);
    EXPECT_EQ(run.kind, traces::RunKind::real);
    EXPECT_EQ(run.status, traces::RunStatus::finished);
    EXPECT_EQ(run.schedule, "1F1B");
    EXPECT_EQ(run.step_time_ns, 97'000);
    const auto ranks = reader.ranks(run_id);
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[0].busy_ns, 60'000);
    EXPECT_EQ(ranks[0].bubble_ns, 37'000);
    EXPECT_EQ(ranks[1].busy_ns, 59'800);
    EXPECT_EQ(ranks[0].peak_memory_bytes, 8192);
    const auto pairs = reader.pairs(run_id);
    ASSERT_EQ(pairs.size(), 4u);
    for (const traces::PairRecord& pair : pairs) {
        EXPECT_NE(pair.send_rank, pair.recv_rank);
        EXPECT_EQ(pair.bytes, 4096);
    }
    EXPECT_NE(run.config.find("pytorch-profiler"), std::string::npos);
}

TEST(PytorchProfilerImport, SkewedClocksAreAlignedByTheirTransfers) {
    // Rank 1's timestamps are 20 us early: its RECV_F0 would end 18 us before rank 0's SEND
    // started. The least shift that orders every pair is 18 us (the data cannot tell more).
    const ImportedRun run = read_pytorch_profiler(
        {fixture("skewed_1f1b_rank0.json"), fixture("skewed_1f1b_rank1.json")});
    ASSERT_EQ(run.clocks.size(), 2u);
    ASSERT_TRUE(run.clocks[1].has_value());
    EXPECT_EQ(run.clocks[0]->offset_ns, 0);
    EXPECT_EQ(run.clocks[1]->offset_ns, 18'000);
    EXPECT_EQ(run.clocks[1]->uncertainty_ns, 18'000);
    // 1RECV_F0 now ends exactly when 0SEND_F0 started.
    EXPECT_EQ(run.timings[1][0].end_ns, run.timings[0][1].start_ns);
    bool noted = false;
    for (const std::string& note : run.notes)
        noted |=
            note.find("clocks:") != std::string::npos && note.find("18.0 us") != std::string::npos;
    EXPECT_TRUE(noted);
}

// An action on the GPU runs from its first kernel to its last among those launched while its CPU
// range ran, on any thread: a backward's kernels come from the autograd engine's thread, so its
// gpu_user_annotation twin (the kernels of the range's own thread) holds 1 us of 20.
TEST(PytorchProfilerImport, GpuActionsSpanTheKernelsLaunchedInTheirRangeOnAnyThread) {
    const ImportedRun run =
        read_pytorch_profiler({fixture("gpu_1f1b_rank0.json"), fixture("gpu_1f1b_rank1.json")});
    const std::int64_t zero = earliest(run);
    auto timed = [&](int rank, const std::string& text) {
        for (std::size_t index = 0; index < run.schedule.ranks[rank].size(); ++index)
            if (run.schedule.text(run.schedule.ranks[rank][index]) == text)
                return std::pair{run.timings[rank][index].start_ns - zero,
                                 run.timings[rank][index].end_ns - zero};
        return std::pair<std::int64_t, std::int64_t>{-1, -1};
    };
    // 0F0 launched two kernels 3 us after its CPU range began; 0F1 one CUDA graph of two.
    EXPECT_EQ(timed(0, "0F0"), (std::pair<std::int64_t, std::int64_t>{3'000, 13'000}));
    EXPECT_EQ(timed(0, "0F1"), (std::pair<std::int64_t, std::int64_t>{14'000, 24'000}));
    EXPECT_EQ(timed(1, "1B0"), (std::pair<std::int64_t, std::int64_t>{25'000, 45'000}));
    // Actions that launched nothing keep their CPU ranges; the optimizer's kernel and a kernel
    // without its launch time none.
    EXPECT_EQ(timed(1, "1B1"), (std::pair<std::int64_t, std::int64_t>{54'000, 74'000}));
    bool noted = false;
    for (const std::string& note : run.notes)
        noted |=
            note.find(
                "3 actions timed on the GPU (the kernels and copies launched while "
                "their CPU range ran, on any thread), 13 by their CPU range") != std::string::npos;
    EXPECT_TRUE(noted) << testing::first_lines(run.notes);
}

TEST(PytorchProfilerImport, GpipeLoopSplitsReceiveComputeAndSend) {
    const ImportedRun run =
        read_pytorch_profiler({fixture("gpipe_rank0.json"), fixture("gpipe_rank1.json")});
    EXPECT_EQ(run.schedule.name, "GPipe");
    expect_rank(run, 0,
                {{"0F0", 0, 10},
                 {"0SEND_F0", 10, 11},
                 {"0F1", 11, 21},
                 {"0SEND_F1", 21, 22},
                 {"0RECV_B0", 22, 56},
                 {"0B0", 56, 76},
                 {"0RECV_B1", 76, 77.5},
                 {"0B1", 77.5, 97.5}});
    expect_rank(run, 1,
                {{"1RECV_F0", 0, 12},
                 {"1F0", 12, 22},
                 {"1RECV_F1", 22, 23},
                 {"1F1", 23, 33},
                 {"1B0", 33, 53},
                 {"1SEND_B0", 53, 54},
                 {"1B1", 54, 74},
                 {"1SEND_B1", 74, 75}});
}

// GPipe's loop by the same rule: its compute and its transfers are each timed by the GPU work
// launched while they ran on the CPU (the backward's from the autograd thread), the rest by
// their CPU spans. Rank 0's 0F0 runs on the GPU until 12 us, after its CPU span ended at 10 us.
TEST(PytorchProfilerImport, GpipeLoopIsTimedByTheWorkEachPartLaunched) {
    const ImportedRun run =
        read_pytorch_profiler({fixture("gpipe_gpu_rank0.json"), fixture("gpipe_gpu_rank1.json")});
    expect_rank(run, 0,
                {{"0F0", 4, 12},
                 {"0F1", 11, 21},
                 {"0SEND_F0", 12, 13},
                 {"0SEND_F1", 21, 22},
                 {"0RECV_B0", 22, 56},
                 {"0B0", 61, 70},
                 {"0RECV_B1", 76, 77.5},
                 {"0B1", 77.5, 97.5}});
}

TEST(PytorchProfilerImport, StepChoiceOutOfRangeIsRefused) {
    try {
        read_pytorch_profiler(
            {fixture("runtime_1f1b_rank0.json"), fixture("runtime_1f1b_rank1.json.gz")}, {3});
        FAIL() << "no error";
    } catch (const ImportError& error) {
        EXPECT_NE(std::string(error.what()).find("step 3"), std::string::npos) << error.what();
        EXPECT_NE(std::string(error.what()).find("0..0"), std::string::npos) << error.what();
    }
}

std::string error_of(const std::vector<std::string>& files) {
    return testing::thrown_message<ImportError>([&] { read_pytorch_profiler(files); }, "no error");
}

std::string write_temp(const std::string& name, const std::string& text) {
    const auto path = testing::process_temp_path(name);
    std::ofstream(path) << text;
    return path.string();
}

std::string read_text(const std::string& path) {
    std::ifstream file(path);
    return {std::istreambuf_iterator<char>(file), {}};
}

// Files that cover different numbers of steps: a step only some hold is refused naming each
// file's count (it once said "every rank's trace holds only steps 0..0" of a file holding two),
// and the default, the last step all hold, is imported with a note saying the counts differ.
TEST(PytorchProfilerImport, RanksHoldingDifferentStepCountsAreNamed) {
    nlohmann::json twice = nlohmann::json::parse(read_text(fixture("runtime_1f1b_rank0.json")));
    nlohmann::json& events = twice["traceEvents"];
    const std::size_t count = events.size();
    for (std::size_t index = 0; index < count; ++index)
        if (events[index].value("name", "").rfind("PP:", 0) == 0) {
            nlohmann::json later = events[index];
            later["ts"] = later["ts"].get<double>() + 1e6;
            events.push_back(later);
        }
    const std::string two_steps = write_temp("two_steps_rank0.json", twice.dump());
    const std::string one_step = fixture("runtime_1f1b_rank1.json.gz");
    EXPECT_EQ(testing::thrown_message<ImportError>(
                  [&] {
                      read_pytorch_profiler({two_steps, one_step}, {1});
                  },
                  "no error"),
              "step 1 asked for, but not every rank's trace holds it (steps per file: " +
                  two_steps + " 2, " + one_step + " 1); give a step from 0 to 0");
    const ImportedRun run = read_pytorch_profiler({two_steps, one_step});
    EXPECT_NE(
        std::find(run.notes.begin(), run.notes.end(),
                  "the traces hold different numbers of steps (" + two_steps + " 2, " + one_step +
                      " 1): step 0 of each was imported as one step; if their profiles "
                      "did not start at the same step, import traces of the same window"),
        run.notes.end());
    std::filesystem::remove(two_steps);
}

TEST(PytorchProfilerImport, ARankPastItsJobsSizeIsRefused) {
    nlohmann::json trace = nlohmann::json::parse(read_text(fixture("runtime_1f1b_rank0.json")));
    trace["distributedInfo"]["rank"] = 7;
    trace["distributedInfo"]["world_size"] = 2;
    const std::string seventh = write_temp("rank7_of_2.json", trace.dump());
    EXPECT_EQ(error_of({seventh}),
              seventh +
                  ": rank 7 cannot be in a job of 2 ranks (distributedInfo.world_size: ranks 0 to "
                  "1); the file is damaged, or its rank was read from its name");
    std::filesystem::remove(seventh);
}

TEST(PytorchProfilerImport, BadInputNamesTheFile) {
    const std::string plain = fixture("no_pp_ranges.json");
    EXPECT_NE(error_of({plain}).find(plain + ": no pipeline action ranges"), std::string::npos)
        << error_of({plain});
    const std::string twice =
        error_of({fixture("runtime_1f1b_rank0.json"), fixture("gpu_1f1b_rank0.json")});
    EXPECT_NE(twice.find("both hold global rank 0"), std::string::npos) << twice;

    // Ranks 0 and 2 of a larger job are a pipeline of two: pipeline rank 1 is global rank 2.
    std::string rank2 = read_input_file(fixture("runtime_1f1b_rank1.json.gz"));
    rank2.insert(rank2.find('{') + 1, "\"distributedInfo\": {\"rank\": 2}, ");
    const ImportedRun gap = read_pytorch_profiler(
        {fixture("runtime_1f1b_rank0.json"), write_temp("rank_two.json", rank2)});
    EXPECT_EQ(gap.global_ranks, (std::vector<int>{0, 2}));
    EXPECT_EQ(gap.schedule.rank_count, 2);

    // Traces of two jobs (2 ranks and 4) are not one run's ranks.
    std::string of_two = read_input_file(fixture("runtime_1f1b_rank0.json"));
    of_two.insert(of_two.find('{') + 1, "\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, ");
    std::string of_four = read_input_file(fixture("runtime_1f1b_rank1.json.gz"));
    of_four.insert(of_four.find('{') + 1,
                   "\"distributedInfo\": {\"rank\": 1, \"world_size\": 4}, ");
    const std::string two = write_temp("job_of_two.json", of_two);
    const std::string four = write_temp("job_of_four.json", of_four);
    EXPECT_EQ(error_of({two, four}),
              two + " was written by a job of 2 ranks and " + four +
                  " by one of 4 (distributedInfo.world_size): give the traces of one run");

    const std::string whole = read_text(fixture("runtime_1f1b_rank0.json"));
    const std::string cut = write_temp("cut_rank0.json", whole.substr(0, whole.size() / 2));
    const std::string truncated = error_of({cut});
    EXPECT_EQ(truncated.rfind(cut, 0), 0u) << truncated;

    // A "Forward i" whose i does not fit an int is no GPipe range (it once threw a bare "stoi").
    std::string gpipe = read_text(fixture("gpipe_rank0.json"));
    for (const std::string name : {"\"Forward ", "\"Backward "})
        for (std::size_t at = gpipe.find(name); at != std::string::npos;
             at = gpipe.find(name, at + 1)) {
            const std::size_t end = gpipe.find('"', at + 1);
            gpipe.replace(at + name.size(), end - at - name.size(), "2147483648");
        }
    const std::string huge = write_temp("huge_microbatch_rank0.json", gpipe);
    EXPECT_NE(error_of({huge}).find(huge + ": no pipeline action ranges"), std::string::npos)
        << error_of({huge});

    // A negative allocator total was stored, and the trace then refused as damaged by every
    // reader: it is refused here, where the file and the event can be named.
    std::string negative = read_text(fixture("runtime_1f1b_rank0.json"));
    const std::size_t total = negative.find("\"Total Allocated\": 4096");
    ASSERT_NE(total, std::string::npos);
    negative.replace(total, 23, "\"Total Allocated\": -4096");
    const std::string negative_file = write_temp("negative_memory_rank0.json", negative);
    const std::string refused = error_of({negative_file});
    EXPECT_EQ(refused.rfind(negative_file + ": byte ", 0), 0u) << refused;
    EXPECT_NE(refused.find(": a [memory] event's \"Total Allocated\" is -4096 bytes; an "
                           "allocator's total is zero or more"),
              std::string::npos)
        << refused;
}

TEST(PytorchProfilerImport, RankFromFileName) {
    EXPECT_EQ(rank_from_file_name("/tmp/x/trace_rank3.json.gz"), 3);
    EXPECT_EQ(rank_from_file_name("rank_12.pt.trace.json"), 12);
    EXPECT_EQ(rank_from_file_name("Rank-4.json"), 4);
    EXPECT_EQ(rank_from_file_name("rank7/trace.json"), std::nullopt);  // the file's own name only
    EXPECT_EQ(rank_from_file_name("frankly1.json"), std::nullopt);
    EXPECT_EQ(rank_from_file_name("trace.1700000000.json"), std::nullopt);  // no trailing digits
}

}  // namespace
}  // namespace pipelens::import
