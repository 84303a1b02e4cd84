// Training steps in a profile of several: torch.profiler run with a schedule wraps each step in a
// "ProfilerStep#N" range, and each such range that holds actions is one step, for a single-stage
// schedule (whose operators carry no step) and a multi-stage one alike. PyTorch 2.11's own
// traces (tests/data/pytorch/profiler/) repeated at test time (derived_traces.hpp) stand for a
// profile of several steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/imported_run.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/import/derived_traces.hpp"
#include "tests/import/imported_steps.hpp"
#include "tests/import/pytorch_written_fixtures.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::import {
namespace {

bool have(const std::vector<std::string>& files) {
    return std::all_of(files.begin(), files.end(),
                       [](const std::string& file) { return std::filesystem::exists(file); });
}

// Each of `files` repeated as `how` says, written as <name>_rank<R>.json.
std::vector<std::string> derived(const std::vector<std::string>& files, const std::string& name,
                                 const testing::RepeatedSteps& how,
                                 const std::function<void(nlohmann::json&)>& edit = {}) {
    std::vector<std::string> out;
    for (std::size_t rank = 0; rank < files.size(); ++rank) {
        nlohmann::json trace =
            testing::repeated_steps(testing::read_gzipped_json(files[rank]), how);
        if (edit)
            edit(trace);
        out.push_back(
            testing::process_temp_path(name + "_rank" + std::to_string(rank) + ".json").string());
        std::ofstream(out.back()) << trace.dump();
    }
    return out;
}

bool has_note(const ImportedRun& run, const std::string& note) {
    return std::find(run.notes.begin(), run.notes.end(), note) != run.notes.end();
}

// The rank's actions with their lengths, which a copy keeps wherever it lies.
std::vector<std::pair<std::string, std::int64_t>> lengths(const ImportedRun& run, int rank) {
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const auto& [action, start, end] : testing::steps_of(run, rank))
        out.emplace_back(action, end - start);
    return out;
}

// Schedule1F1B pp=2 m=4 profiled for two steps: two steps of m=4 (the whole profile once read
// as one step of m=8), each imported as PyTorch's own trace of one step is.
TEST(ProfilerSteps, EachProfilerStepOfASingleStageScheduleIsOneStep) {
    const std::vector<std::string> files = testing::profiler_rank_files("1F1B_pp2_v1_m4_cpu", 2);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun one = read_pytorch_profiler(files);
    const std::vector<std::string> twice = derived(files, "single_stage_twice", {2, 1, {}});
    const ImportedRun last = read_pytorch_profiler(twice);
    const ImportedRun first = read_pytorch_profiler(twice, {0});
    for (const ImportedRun* run : {&last, &first}) {
        EXPECT_EQ(run->schedule.name, "1F1B");
        EXPECT_EQ(run->schedule.microbatch_count, 4);
        for (int rank = 0; rank < 2; ++rank)
            EXPECT_EQ(lengths(*run, rank), lengths(one, rank)) << "rank " << rank;
    }
    EXPECT_EQ(testing::steps_of(first, 0), testing::steps_of(one, 0));
    EXPECT_GT(std::get<1>(testing::steps_of(last, 0).front()),
              std::get<2>(testing::steps_of(first, 0).back()));
    EXPECT_TRUE(has_note(last, "step 1 of 2 in the traces imported"))
        << testing::first_lines(last.notes);
    EXPECT_TRUE(has_note(first,
                         "steps are torch.profiler's steps (each ProfilerStep#N range that "
                         "holds actions is one): step 0 is ProfilerStep#1 (" +
                             twice[0] + "), ProfilerStep#1 (" + twice[1] + ")"))
        << testing::first_lines(first.notes);
    EXPECT_EQ(testing::thrown_message<ImportError>([&] { read_pytorch_profiler(twice, {2}); },
                                                   "no error"),
              "step 2 asked for, but every rank's trace holds only steps 0..1");
}

// Interleaved1F1B pp=2 profiled for three steps, the first outside any ProfilerStep range (the
// schedule's warm-up step): the two ProfilerStep ranges are the steps, and the first step's
// ranges are left out and said to be, where counting each action's occurrences made three.
TEST(ProfilerSteps, AMultiStageScheduleTakesItsStepsFromTheProfilerStepRanges) {
    const std::vector<std::string> files =
        testing::profiler_rank_files("Interleaved1F1B_pp2_v2_m4_cpu", 2);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun one = read_pytorch_profiler(files);
    const std::vector<std::string> thrice =
        derived(files, "multi_stage_thrice", {3, 4, {}}, [](nlohmann::json& trace) {
            nlohmann::json& events = trace.at("traceEvents");
            events.erase(std::remove_if(events.begin(), events.end(),
                                        [](const nlohmann::json& event) {
                                            return event.value("name", "") == "ProfilerStep#4";
                                        }),
                         events.end());
        });
    const ImportedRun run = read_pytorch_profiler(thrice, {0});
    EXPECT_EQ(run.schedule.name, "Interleaved1F1B");
    EXPECT_EQ(run.schedule.microbatch_count, 4);
    for (int rank = 0; rank < 2; ++rank)
        EXPECT_EQ(lengths(run, rank), lengths(one, rank)) << "rank " << rank;
    EXPECT_TRUE(has_note(run, "step 0 of 2 in the traces imported"))
        << testing::first_lines(run.notes);
    EXPECT_TRUE(has_note(run,
                         "steps are torch.profiler's steps (each ProfilerStep#N range that "
                         "holds actions is one): step 0 is ProfilerStep#5 (" +
                             thrice[0] + "), ProfilerStep#5 (" + thrice[1] + ")"))
        << testing::first_lines(run.notes);
    EXPECT_TRUE(has_note(run, thrice[0] + " (global rank 0): 46 action ranges outside every "
                                          "ProfilerStep# range are left out"))
        << testing::first_lines(run.notes);
}

// One ProfilerStep range around two runs of the schedule: a step runs each action once, so the
// range cannot be one step, and the import says where the second run began.
TEST(ProfilerSteps, AnActionTwiceInOneProfilerStepIsRefused) {
    const std::vector<std::string> files =
        testing::profiler_rank_files("Interleaved1F1B_pp2_v2_m4_cpu", 2);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const std::vector<std::string> merged =
        derived(files, "two_runs_one_step", {2, 0, {}}, [](nlohmann::json& trace) {
            nlohmann::json& events = trace.at("traceEvents");
            nlohmann::json* first = nullptr;
            for (nlohmann::json& event : events)
                if (event.value("name", "") == "ProfilerStep#0")
                    first = &event;
            for (const nlohmann::json& event : events)
                if (event.value("name", "") == "ProfilerStep#1")
                    (*first)["dur"] = event.at("ts").get<double>() + event.at("dur").get<double>() -
                                      first->at("ts").get<double>();
            events.erase(std::remove_if(events.begin(), events.end(),
                                        [](const nlohmann::json& event) {
                                            return event.value("name", "") == "ProfilerStep#1";
                                        }),
                         events.end());
        });
    const std::string message =
        testing::thrown_message<ImportError>([&] { read_pytorch_profiler(merged); }, "no error");
    EXPECT_TRUE(message.starts_with(merged[0] + " (global rank 0): ProfilerStep#0 holds \"PP:"))
        << message;
    EXPECT_NE(message.find("twice (bytes "), std::string::npos) << message;
    EXPECT_NE(message.find("did the profiled loop run the schedule's step() more than once between "
                           "two calls of the profiler's step()?"),
              std::string::npos)
        << message;
}

// Ranks whose profiles began a step apart (rank 0 profiled steps 1-3, rank 1 steps 2-4): step k
// is the same ProfilerStep#N on both, and the steps only one rank holds are left out and said
// to be. Numbered by time alone, rank 0's #1 was once paired with rank 1's #2.
TEST(ProfilerSteps, RanksProfiledAStepApartArePairedByTheirStepNumbers) {
    const std::vector<std::string> files = testing::profiler_rank_files("1F1B_pp2_v1_m4_cpu", 2);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    std::vector<std::string> apart;
    for (std::size_t rank = 0; rank < files.size(); ++rank) {
        const nlohmann::json trace = testing::repeated_steps(
            testing::read_gzipped_json(files[rank]), {3, 1 + static_cast<int>(rank), {}});
        apart.push_back(
            testing::process_temp_path("steps_apart_rank" + std::to_string(rank) + ".json")
                .string());
        std::ofstream(apart.back()) << trace.dump();
    }
    const ImportedRun run = read_pytorch_profiler(apart, {0});
    EXPECT_EQ(run.schedule.microbatch_count, 4);
    EXPECT_TRUE(has_note(run, "step 0 of 2 in the traces imported"))
        << testing::first_lines(run.notes);
    EXPECT_TRUE(has_note(run,
                         "steps are torch.profiler's steps (each ProfilerStep#N range that "
                         "holds actions is one): step 0 is ProfilerStep#2 (" +
                             apart[0] + "), ProfilerStep#2 (" + apart[1] + ")"))
        << testing::first_lines(run.notes);
    EXPECT_TRUE(has_note(run, apart[0] + " (global rank 0): ProfilerStep#1 left out: not "
                                         "profiled on every rank"))
        << testing::first_lines(run.notes);
    EXPECT_TRUE(has_note(run, apart[1] + " (global rank 1): ProfilerStep#4 left out: not "
                                         "profiled on every rank"))
        << testing::first_lines(run.notes);
}

// A ProfilerStep range inside another (torch.profiler's follow one another) cannot say which
// step an action is in: refused, naming both ranges. It once took the inner range for a step
// and left most of the outer one's actions out.
TEST(ProfilerSteps, AProfilerStepInsideAnotherIsRefused) {
    const std::vector<std::string> files = testing::profiler_rank_files("1F1B_pp2_v1_m4_cpu", 2);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const std::vector<std::string> nested =
        derived(files, "nested_step", {2, 1, {}}, [](nlohmann::json& trace) {
            nlohmann::json& events = trace.at("traceEvents");
            nlohmann::json inner;
            for (const nlohmann::json& event : events)
                if (event.value("name", "") == "ProfilerStep#1") {
                    inner = event;
                    inner["name"] = "ProfilerStep#7";
                    inner["ts"] = event.at("ts").get<double>() + 10.0;
                    inner["dur"] = 5.0;
                }
            events.push_back(inner);
        });
    const std::string message =
        testing::thrown_message<ImportError>([&] { read_pytorch_profiler(nested); }, "no error");
    EXPECT_TRUE(message.starts_with(nested[0] + " (global rank 0): ProfilerStep#7 (byte "))
        << message;
    EXPECT_NE(message.find(") begins inside ProfilerStep#1 (byte "), std::string::npos) << message;
}

// A ProfilerStep range that holds no action (stop() closes the one it was in) is no step.
TEST(ProfilerSteps, AProfilerStepWithoutActionsIsNoStep) {
    const std::vector<std::string> files = testing::profiler_rank_files("1F1B_pp2_v1_m4_cpu", 2);
    if (!have(files))
        GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const std::vector<std::string> trailing =
        derived(files, "trailing_empty_step", {1, 3, {}}, [](nlohmann::json& trace) {
            nlohmann::json& events = trace.at("traceEvents");
            nlohmann::json empty;
            for (const nlohmann::json& event : events)
                if (event.value("name", "") == "ProfilerStep#3") {
                    empty = event;
                    empty["name"] = "ProfilerStep#4";
                    empty["ts"] = event.at("ts").get<double>() + event.at("dur").get<double>();
                    empty["dur"] = 5.0;
                }
            events.push_back(empty);
        });
    const ImportedRun run = read_pytorch_profiler(trailing);
    EXPECT_EQ(run.schedule.microbatch_count, 4);
    EXPECT_TRUE(has_note(run, "step 0 of 1 in the traces imported"))
        << testing::first_lines(run.notes);
}

}  // namespace
}  // namespace pipelens::import
