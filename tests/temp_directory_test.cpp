// TempDirectoryTest: a fresh, named directory after SetUp, files written into it (subdirectories
// made), and nothing left after TearDown.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/temp_directory.hpp"

namespace pipelens {
namespace {

namespace fs = std::filesystem;

// The fixture driven by hand, so one test can look at it before and after.
class Scratch : public testing::TempDirectoryTest {
  public:
    Scratch() : TempDirectoryTest("helper") {}
    using TempDirectoryTest::directory_;
    using TempDirectoryTest::SetUp;
    using TempDirectoryTest::TearDown;
    using TempDirectoryTest::write;
    void TestBody() override {}
};

TEST(TempDirectoryTest, AFreshDirectoryHoldsWhatIsWrittenUntilTearDown) {
    Scratch scratch;
    scratch.SetUp();
    ASSERT_TRUE(fs::is_directory(scratch.directory_));
    EXPECT_TRUE(fs::is_empty(scratch.directory_));
    EXPECT_EQ(scratch.directory_.filename().string().rfind("pipelens_helper_", 0), 0u);
    const std::string path = scratch.write("sub/a.txt", "line\nbytes");
    EXPECT_EQ(path, (scratch.directory_ / "sub" / "a.txt").string());
    std::ostringstream read;
    read << std::ifstream(path, std::ios::binary).rdbuf();
    EXPECT_EQ(read.str(), "line\nbytes");
    const fs::path directory = scratch.directory_;
    scratch.TearDown();
    EXPECT_FALSE(fs::exists(directory));
}

}  // namespace
}  // namespace pipelens
