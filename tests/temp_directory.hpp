// A test fixture with a fresh directory per test under GoogleTest's temporary directory, removed
// with everything in it afterwards. Its name starts "pipelens_<prefix>_", so a directory left by
// a crashed test says which tests left it.
#pragma once

#include <gtest/gtest.h>

#include "remove_tree.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

namespace pipelens::testing {

class TempDirectoryTest : public ::testing::Test {
  protected:
    explicit TempDirectoryTest(std::string prefix) : prefix_(std::move(prefix)) {}

    void SetUp() override {
        std::string pattern =
            (std::filesystem::path(::testing::TempDir()) / ("pipelens_" + prefix_ + "_XXXXXX"))
                .string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        directory_ = pattern;
    }
    void TearDown() override { remove_tree(directory_.string()); }
    // Writes `content` to `name` (which may contain a subdirectory) and returns its path.
    std::string write(const std::string& name, const std::string& content) const {
        const std::filesystem::path path = directory_ / name;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << content;
        return path.string();
    }

    std::filesystem::path directory_;

  private:
    std::string prefix_;
};

}  // namespace pipelens::testing
