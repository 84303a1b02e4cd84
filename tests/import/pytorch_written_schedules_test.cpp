// Schedules PyTorch itself wrote (tests/data/pytorch/schedules/, from
// scripts/device/pytorch_fixtures.py) against pipelens' generated and lowered orders and its
// refusals. Until those files exist the tests over them skip, saying why; the self-tests below
// run the same comparison on folders pipelens writes under the same names, so the comparison
// is known to pass on equal orders and to fail on different ones.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "tests/import/pytorch_written_fixtures.hpp"
#include "tests/temp_directory.hpp"

namespace pipelens::testing {
namespace {

const ScheduleFolderReport& pytorch_report() {
    static const ScheduleFolderReport report =
        compare_schedule_folder(pytorch_fixture_root() / "schedules");
    return report;
}

TEST(PyTorchWrittenSchedules, EveryOrderMatchesPipelens) {
    const ScheduleFolderReport& report = pytorch_report();
    if (report.compared == 0)
        GTEST_SKIP() << kNoPyTorchFixturesYet;
    EXPECT_TRUE(report.differences.empty())
        << report.differences.size() << " of " << report.compared
        << " files differ:" << first_lines(report.differences);
}

TEST(PyTorchWrittenSchedules, PyTorchsRefusalsArePipelensRefusals) {
    const ScheduleFolderReport& report = pytorch_report();
    if (report.compared == 0)
        GTEST_SKIP() << kNoPyTorchFixturesYet;
    EXPECT_GT(report.refusals_checked, 0) << "refusals.json is missing or lists no refusal";
    EXPECT_TRUE(report.refusal_differences.empty()) << first_lines(report.refusal_differences);
}

TEST(PyTorchWrittenSchedules, EveryPyTorchScheduleClassHasAPipelensKind) {
    const ScheduleFolderReport& report = pytorch_report();
    if (report.compared == 0 && report.unknown_kinds.empty())
        GTEST_SKIP() << kNoPyTorchFixturesYet;
    EXPECT_TRUE(report.unknown_kinds.empty())
        << "PyTorch has schedule classes pipelens does not generate:"
        << first_lines(report.unknown_kinds);
}

TEST(FixtureNames, CarryTheParametersBothWays) {
    const FixtureName name{"Interleaved1F1B", 4, 2, 6, "comms_defer"};
    EXPECT_EQ(fixture_file_name(name), "Interleaved1F1B_pp4_v2_m6_comms_defer.csv");
    EXPECT_EQ(parse_fixture_name("Interleaved1F1B_pp4_v2_m6_comms_defer.csv"), name);
    EXPECT_EQ(parse_fixture_name("1F1B_pp8_v1_m16_compute.csv"),
              (FixtureName{"1F1B", 8, 1, 16, "compute"}));
    EXPECT_EQ(parse_fixture_name("refusals.json"), std::nullopt);
    EXPECT_EQ(parse_fixture_name("1F1B_pp8_v1_m16_lowered.csv"), std::nullopt);
}

TEST(FixtureComparison, ReshardRunsAreSortedAndNothingElseMoves) {
    RankTexts texts{{"0F0", "1RESHARD", "0RESHARD", "0B0", "3RESHARD", "2RESHARD"}, {"1F0"}};
    sort_reshard_runs(texts);
    EXPECT_EQ(texts,
              (RankTexts{{"0F0", "0RESHARD", "1RESHARD", "0B0", "2RESHARD", "3RESHARD"}, {"1F0"}}));
}

TEST(FixtureComparison, DroppingMicrobatchesKeepsStageAndKind) {
    RankTexts texts{{"3F12", "0SEND_B2", "0UNSHARD", "1REDUCE_GRAD", "2W0"}};
    drop_microbatches(texts);
    EXPECT_EQ(texts, (RankTexts{{"3F", "0SEND_B", "0UNSHARD", "1REDUCE_GRAD", "2W"}}));
}

TEST(FixtureComparison, FirstDifferenceNamesRankStepAndBothActions) {
    EXPECT_EQ(first_difference({{"0F0", "0B0"}}, {{"0F0", "0B0"}}), "");
    EXPECT_EQ(first_difference({{"0F0"}, {"1F0", "1B0"}}, {{"0F0"}, {"1F0", "1F1"}}),
              "rank 1 step 1: PyTorch 1B0, pipelens 1F1");
    EXPECT_EQ(first_difference({{"0F0"}}, {{"0F0", "0B0"}}),
              "rank 0 step 1: PyTorch (end), pipelens 0B0");
    EXPECT_EQ(first_difference({{"0F0"}}, {{"0F0"}, {"1F0"}}), "PyTorch has 1 ranks, pipelens 2");
}

class PipelensWrittenScheduleFolder : public TempDirectoryTest {
  protected:
    PipelensWrittenScheduleFolder() : TempDirectoryTest("pytorch_fixture_names") {}

    // The grid the script writes, in small: every PyTorch kind, each lowering.
    std::vector<FixtureName> grid() const {
        std::vector<FixtureName> names;
        for (ScheduleKind kind : all_schedule_kinds()) {
            if (kind == ScheduleKind::zero_bubble_h2 || kind == ScheduleKind::zero_bubble_auto)
                continue;  // not PyTorch's
            const int v = is_multi_stage(kind) ? 2 : 1;
            for (int pp : {2, 4})
                for (const char* lowering : {"compute", "comms", "comms_defer"})
                    names.push_back(
                        {std::string(schedule_kind_name(kind)), pp, v, 2 * pp, lowering});
        }
        return names;
    }
    void write_grid(const std::vector<FixtureName>& names) const {
        for (const FixtureName& name : names)
            write("schedules/" + fixture_file_name(name),
                  format_schedule_csv(pipelens_order(name)));
    }
};

TEST_F(PipelensWrittenScheduleFolder, EqualOrdersCompareEqual) {
    const auto names = grid();
    write_grid(names);
    write("schedules/refusals.json",
          R"([{"kind": "1F1B", "pp": 4, "v": 1, "m": 2, "defer": false, "stage": "construct",
               "type": "ValueError", "message": "m < stages"},
              {"kind": "ZBVZeroBubble", "pp": 2, "v": 3, "m": 4, "defer": false,
               "stage": "construct", "type": "ValueError", "message": "exactly 2"},
              {"kind": "ZBVZeroBubble", "pp": 2, "v": 2, "m": 4, "defer": true,
               "stage": "construct", "type": "TypeError", "message": "not checked"}])");
    const ScheduleFolderReport report = compare_schedule_folder(directory_ / "schedules");
    EXPECT_EQ(report.compared, static_cast<int>(names.size()));
    EXPECT_EQ(report.compared, 42);
    EXPECT_EQ(report.refusals_checked, 2);
    EXPECT_TRUE(report.differences.empty()) << first_lines(report.differences);
    EXPECT_TRUE(report.refusal_differences.empty()) << first_lines(report.refusal_differences);
    EXPECT_TRUE(report.unknown_kinds.empty());
}

TEST_F(PipelensWrittenScheduleFolder, PyTorchsOwnArtifactMatchesUnderTheScriptsName) {
    // PyTorch's ZB1P test artifact (idle cells and all) is InterleavedZeroBubble pp=2 v=2 m=8.
    const std::filesystem::path artifact = std::filesystem::path(PIPELENS_SOURCE_DIR) /
                                           "tests/data/pytorch_artifacts/current/"
                                           "zb1p_2rank_2stagep_compute.csv";
    std::filesystem::create_directories(directory_ / "schedules");
    std::filesystem::copy_file(
        artifact, directory_ / "schedules/InterleavedZeroBubble_pp2_v2_m8_compute.csv");
    write("schedules/InterleavedZeroBubble_pp2_v2_m8_comms.csv",
          format_schedule_csv(pipelens_order({"InterleavedZeroBubble", 2, 2, 8, "comms"})));
    const ScheduleFolderReport report = compare_schedule_folder(directory_ / "schedules");
    EXPECT_EQ(report.compared, 2);
    EXPECT_TRUE(report.differences.empty()) << first_lines(report.differences);
}

TEST_F(PipelensWrittenScheduleFolder, ADifferentOrderAnAcceptedRefusalAndANewClassAreReported) {
    // 1F1B pp=2 m=2 with rank 1's two forwards swapped.
    write("schedules/1F1B_pp2_v1_m2_compute.csv", "0F0,0F1,0B0,0B1\r\n1F1,1B1,1F0,1B0\r\n");
    write("schedules/1F1B_pp2_v1_m2_comms.csv",
          format_schedule_csv(pipelens_order({"1F1B", 2, 1, 2, "comms"})));
    write("schedules/FutureSchedule_pp2_v1_m4_compute.csv", "0F0\r\n");
    write("schedules/refusals.json",
          R"([{"kind": "GPipe", "pp": 2, "v": 1, "m": 4, "defer": false, "stage": "construct",
               "type": "ValueError", "message": "made up"}])");
    const ScheduleFolderReport report = compare_schedule_folder(directory_ / "schedules");
    EXPECT_EQ(report.compared, 2);
    EXPECT_EQ(report.differences,
              std::vector<std::string>{
                  "1F1B_pp2_v1_m2_compute.csv: rank 1 step 0: PyTorch 1F1, pipelens 1F0"});
    EXPECT_EQ(report.refusal_differences,
              std::vector<std::string>{"refusals.json: PyTorch refuses GPipe pp=2 v=1 m=4 "
                                       "(ValueError: made up) but pipelens accepts it"});
    EXPECT_EQ(report.unknown_kinds, std::vector<std::string>{"FutureSchedule"});
}

TEST_F(PipelensWrittenScheduleFolder, APrintedSingleStageTableIsReadAsItsRuntimesOrder) {
    // A single-stage class's printed table numbering its last rank's forwards from 1, with idle
    // cells and REDUCE_GRAD: read as the order its runtime runs, it is 1F1B exactly.
    write("schedules/1F1B_pp2_v1_m2_compute.csv",
          "0F0,,,0F1,0B0,,0B1,0REDUCE_GRAD\r\n,1F1,1B0,1F2,1B1,1REDUCE_GRAD\r\n");
    ScheduleFolderReport report = compare_schedule_folder(directory_ / "schedules");
    EXPECT_EQ(report.compared, 1);
    EXPECT_TRUE(report.differences.empty()) << first_lines(report.differences);

    // A last rank that runs its forwards ahead of its backwards is no such table, whatever its
    // numbers: it is read as written.
    write("schedules/1F1B_pp2_v1_m2_compute.csv", "0F0,0F1,0B0,0B1\r\n1F1,1F2,1B0,1B1\r\n");
    report = compare_schedule_folder(directory_ / "schedules");
    EXPECT_EQ(report.differences,
              std::vector<std::string>{
                  "1F1B_pp2_v1_m2_compute.csv: rank 1 step 0: PyTorch 1F1, pipelens 1F0"});
}

}  // namespace
}  // namespace pipelens::testing
