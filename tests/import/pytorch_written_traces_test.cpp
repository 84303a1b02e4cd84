// Profiler traces and flight-recorder dumps PyTorch itself wrote (tests/data/pytorch/profiler/
// and flight_recorder/, from scripts/device/pytorch_fixtures.py) through pipelens' importers.
// Until those files exist the tests over them skip, saying why; the self-tests lay the
// hand-written fixtures out the way the script does, so the folder walk is known to find, read
// and report them.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/import/pytorch_written_fixtures.hpp"
#include "tests/temp_directory.hpp"

namespace pipelens::testing {
namespace {
namespace fs = std::filesystem;

TEST(PyTorchWrittenTraces, EveryProfilerRunImports) {
    const ImportFolderReport report = import_profiler_folder(pytorch_fixture_root() / "profiler");
    if (report.imported == 0)
        GTEST_SKIP() << kNoPyTorchFixturesYet;
    EXPECT_TRUE(report.problems.empty()) << first_lines(report.problems);
    std::cout << "imported:" << first_lines(report.summaries) << "\n";
}

TEST(PyTorchWrittenTraces, EveryFlightRecorderDumpSetImports) {
    const ImportFolderReport report =
        import_flight_recorder_folder(pytorch_fixture_root() / "flight_recorder");
    if (report.imported == 0)
        GTEST_SKIP() << kNoPyTorchFixturesYet;
    EXPECT_TRUE(report.problems.empty()) << first_lines(report.problems);
    std::cout << "imported:" << first_lines(report.summaries) << "\n";
}

class ScriptLayoutFolder : public TempDirectoryTest {
  protected:
    ScriptLayoutFolder() : TempDirectoryTest("pytorch_fixture_layout") {}

    void copy(const std::string& from, const std::string& to) const {
        const fs::path target = directory_ / to;
        fs::create_directories(target.parent_path());
        fs::copy_file(fs::path(PIPELENS_SOURCE_DIR) / "tests" / "data" / from, target);
    }
    void copy_dump_case(const std::string& name, int ranks) const {
        for (int rank = 0; rank < ranks; ++rank) {
            const std::string r = std::to_string(rank);
            copy("flight_recorder/" + name + "/pickle/nccl_trace_rank_" + r,
                 "flight_recorder/" + name + "/rank_" + r);
            copy("flight_recorder/" + name + "/json/nccl_trace_rank_" + r + ".json",
                 "flight_recorder/" + name + "_json/rank_" + r + ".json");
        }
        write("flight_recorder/notes/p2p_clean_note_0.json", "{}");   // not a dump: skipped
        write("flight_recorder/" + name + "_auto/auto_rank_0", "x");  // PyTorch's own: skipped
    }
};

TEST_F(ScriptLayoutFolder, ProfilerRunsAreFoundAndImported) {
    copy("pytorch_profiler/runtime_1f1b_rank0.json", "profiler/1F1B_pp2/rank0.pt.trace.json");
    copy("pytorch_profiler/runtime_1f1b_rank1.json.gz", "profiler/1F1B_pp2/rank1.pt.trace.json.gz");
    write("profiler/empty_run/readme.txt", "no traces here");
    const ImportFolderReport report = import_profiler_folder(directory_ / "profiler");
    EXPECT_EQ(report.imported, 1);
    EXPECT_TRUE(report.problems.empty()) << first_lines(report.problems);
    ASSERT_EQ(report.summaries.size(), 1u);
    EXPECT_EQ(report.summaries[0].substr(0, report.summaries[0].find(';')),
              "1F1B_pp2: actions per rank 8 8");
}

TEST_F(ScriptLayoutFolder, AProfilerRunWithoutPipelineRangesIsAProblem) {
    copy("pytorch_profiler/no_pp_ranges.json", "profiler/no_ranges/rank0.pt.trace.json");
    const ImportFolderReport report = import_profiler_folder(directory_ / "profiler");
    EXPECT_EQ(report.imported, 1);
    ASSERT_EQ(report.problems.size(), 1u);
    EXPECT_EQ(report.problems[0].rfind("no_ranges: ", 0), 0u) << report.problems[0];
}

TEST_F(ScriptLayoutFolder, FlightRecorderCasesAreFoundReadAndAnalysed) {
    copy_dump_case("p2p_clean", 2);
    copy_dump_case("recv_recv_cycle", 2);
    const ImportFolderReport report = import_flight_recorder_folder(directory_ / "flight_recorder");
    EXPECT_EQ(report.imported, 4);
    EXPECT_TRUE(report.problems.empty()) << first_lines(report.problems);
    ASSERT_EQ(report.summaries.size(), 4u);
    EXPECT_EQ(report.summaries[0], "p2p_clean: 2 ranks, 8 entries, hang=no, mismatch=no");
    EXPECT_EQ(report.summaries[1], "p2p_clean_json: 2 ranks, 8 entries, hang=no, mismatch=no");
    EXPECT_EQ(report.summaries[2].substr(0, report.summaries[2].find(',')),
              "recv_recv_cycle: 2 ranks");
    EXPECT_NE(report.summaries[2].find("hang=yes"), std::string::npos) << report.summaries[2];
}

}  // namespace
}  // namespace pipelens::testing
