// The `pipelens` binary without LibTorch: the dynamic loader resolves no LibTorch library for
// it, `run` and `explain` are still listed, and where `pipelens-runtime` is missing they say so
// in one line with exit code 2 instead of running anything.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::run_pipelens;

TEST(TorchFreeCli, PipelensLoadsNoLibTorch) {
    const std::vector<std::string> names = testing::loaded_libraries(PIPELENS_BINARY);
    // The listing was read: the C++ runtime is there.
    EXPECT_NE(std::find(names.begin(), names.end(), "libstdc++.so.6"), names.end());
    for (const std::string& name : names)
        EXPECT_FALSE(testing::is_libtorch(name)) << name;
}

TEST(TorchFreeCli, HelpStillListsRunAndExplain) {
    const auto result = run_pipelens("--help");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("\n  run                         Run training steps of a schedule "
                              "on real LibTorch ranks and record them\n"),
              std::string::npos)
        << result.out;
    EXPECT_NE(
        result.out.find("\n  explain                     Show a pipeline's stages, split, ops, "
                        "parameters and boundary metadata\n"),
        std::string::npos)
        << result.out;
}

// A directory holding a copy of `pipelens` and nothing else, removed afterwards.
class LonePipelens : public ::testing::Test {
  protected:
    void SetUp() override {
        directory_ = fs::temp_directory_path() / ("pipelens_lone_" + std::to_string(::getpid()));
        fs::remove_all(directory_);
        fs::create_directories(directory_);
        fs::copy_file(PIPELENS_BINARY, directory_ / "pipelens");
    }
    void TearDown() override { fs::remove_all(directory_); }

    // Runs the copy with PATH holding only its own directory: no pipelens-runtime anywhere.
    testing::CommandResult run(const std::string& arguments) const {
        return run_command("PATH=" + directory_.string() + " " +
                           (directory_ / "pipelens").string() + " " + arguments);
    }

    fs::path directory_;
};

TEST_F(LonePipelens, RunWithoutTheRuntimeNamesWhatIsMissing) {
    const auto result = run("run --pp 2 --m 2");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err,
              "pipelens run: the LibTorch runtime (pipelens-runtime) was not built (not found "
              "beside pipelens, in ../libexec/pipelens relative to it, or on PATH); install "
              "libtorch-dev and configure with PIPELENS_TORCH=ON\n");
}

TEST_F(LonePipelens, ExplainWithoutTheRuntimeNamesWhatIsMissing) {
    const auto result = run("explain --pp 2 --m 2 --json");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err,
              "pipelens explain: the LibTorch runtime (pipelens-runtime) was not built (not found "
              "beside pipelens, in ../libexec/pipelens relative to it, or on PATH); install "
              "libtorch-dev and configure with PIPELENS_TORCH=ON\n");
}

TEST_F(LonePipelens, OtherCommandsDoNotNeedTheRuntime) {
    const auto result = run("simulate --schedule 1F1B --pp 2 --m 2 --json");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
}

}  // namespace
}  // namespace pipelens
