// The launcher's notices that a rank ended, as rank 0 reads them while it gathers reports.
#include "engine/run_record/rank_files.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "tests/temp_directory.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::run_record {
namespace {

class RankFilesTest : public testing::TempDirectoryTest {
  protected:
    RankFilesTest() : TempDirectoryTest("rank_files") {}
};

TEST_F(RankFilesTest, ARankEndsOnlyOnceTheLauncherNotesItAndSaysHow) {
    const std::string directory = directory_.string();
    EXPECT_EQ(rank_ended(directory, 1), std::nullopt);
    note_rank_ended(directory, 1, "killed by signal 9 (Killed)");
    note_rank_ended(directory, 2, "exited with code 2");
    EXPECT_EQ(rank_ended(directory, 1), "killed by signal 9 (Killed)");
    EXPECT_EQ(rank_ended(directory, 2), "exited with code 2");
    EXPECT_EQ(rank_ended(directory, 0), std::nullopt);
    // Written aside and renamed: nothing half-written is left beside the notices.
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(directory_))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"rank-1.ended", "rank-2.ended"}));
}

TEST_F(RankFilesTest, ReportsAndNoticesHaveTheirOwnNames) {
    EXPECT_EQ(rank_report_file("/tmp/ranks", 3), "/tmp/ranks/rank-3.json");
    note_rank_ended(directory_.string(), 3, "exited with code 1");
    EXPECT_FALSE(std::filesystem::exists(rank_report_file(directory_.string(), 3)));
}

TEST_F(RankFilesTest, ANoticeThatCannotBeWrittenNamesItsFile) {
    const std::string missing = (directory_ / "gone").string();
    EXPECT_EQ(testing::required_message<std::runtime_error>(
                  [&] { note_rank_ended(missing, 1, "exited with code 2"); }),
              missing + "/rank-1.ended.part: cannot note that rank 1 ended (exited with code 2)");
}

}  // namespace
}  // namespace pipelens::run_record
