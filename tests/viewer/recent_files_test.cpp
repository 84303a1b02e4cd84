// Where the viewer keeps its configuration and how the recent-files list behaves, on real
// files in a temporary directory (never the user's ~/.config).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/viewer/recent_files.hpp"

namespace pipelens::viewer {
namespace {

namespace fs = std::filesystem;

fs::path temp_directory(const std::string& name) {
    const fs::path path =
        fs::temp_directory_path() / ("pipelens_recent_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(path);
    return path;
}

std::string contents(const fs::path& path) {
    std::ifstream file(path);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

TEST(ConfigDirectory, TheOverrideComesFirstThenXdgThenHome) {
    EXPECT_EQ(config_directory("/tmp/cfg", "/xdg", "/home/u"), fs::path("/tmp/cfg"));
    EXPECT_EQ(config_directory(nullptr, "/xdg", "/home/u"), fs::path("/xdg/pipelens"));
    EXPECT_EQ(config_directory("", "/xdg", "/home/u"), fs::path("/xdg/pipelens"));
    EXPECT_EQ(config_directory(nullptr, "", "/home/u"), fs::path("/home/u/.config/pipelens"));
    EXPECT_EQ(config_directory(nullptr, nullptr, nullptr), fs::path("./.config/pipelens"));
}

TEST(RecentFiles, AKeptListIsWrittenMostRecentFirstAndReadBack) {
    const fs::path directory = temp_directory("kept");
    const fs::path file = directory / "sub" / "recent_files";
    RecentFiles recent = RecentFiles::kept_in(file);
    EXPECT_TRUE(recent.paths().empty());
    recent.remember("/data/a.db");
    recent.remember("/data/b.db");
    recent.remember("/data/a.db");  // moves to the front, once
    EXPECT_EQ(contents(file), "/data/a.db\n/data/b.db\n");
    EXPECT_EQ(RecentFiles::kept_in(file).paths(),
              (std::vector<std::string>{"/data/a.db", "/data/b.db"}));
    fs::remove_all(directory);
}

TEST(RecentFiles, TheListKeepsTheTenLatestAsAbsolutePaths) {
    const fs::path directory = temp_directory("limit");
    RecentFiles recent = RecentFiles::kept_in(directory / "recent_files");
    for (int index = 0; index < 12; ++index)
        recent.remember("/t/" + std::to_string(index) + ".db");
    recent.remember("relative.db");
    ASSERT_EQ(recent.paths().size(), RecentFiles::kLimit);
    EXPECT_EQ(recent.paths().front(), (fs::current_path() / "relative.db").string());
    EXPECT_EQ(recent.paths()[1], "/t/11.db");
    EXPECT_EQ(recent.paths().back(), "/t/3.db");
    fs::remove_all(directory);
}

// A file opened as "../t/a.db" from two folders is one file, listed once, by its plain path.
TEST(RecentFiles, OneFileReachedByTwoPathsIsListedOnce) {
    const fs::path directory = temp_directory("two_paths");
    fs::create_directories(directory / "one");
    fs::create_directories(directory / "two");
    std::ofstream(directory / "a.db") << "";
    RecentFiles recent;
    recent.remember(directory / "one" / ".." / "a.db");
    recent.remember(directory / "two" / ".." / "a.db");
    EXPECT_EQ(recent.paths(), std::vector<std::string>{fs::canonical(directory / "a.db").string()});
    fs::remove_all(directory);
}

TEST(RecentFiles, AListThatIsNotKeptStaysInMemory) {
    RecentFiles recent;
    recent.remember("/data/a.db");
    EXPECT_FALSE(recent.kept());
    EXPECT_EQ(recent.paths(), std::vector<std::string>{"/data/a.db"});
}

}  // namespace
}  // namespace pipelens::viewer
