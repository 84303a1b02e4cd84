// The `--nproc` launcher and its rank processes: no rank outlives the launcher. A signal that
// stops the launcher (Ctrl-C, a job scheduler's SIGTERM) is passed on to every rank, and a
// launcher killed outright takes its ranks with it; either way nothing keeps training unseen. The
// report directory a killed launcher leaves behind, the next launcher removes.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/blocked_signals.hpp"
#include "tests/child_process.hpp"
#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using Clock = std::chrono::steady_clock;

// The processes whose parent is `parent`, from /proc.
std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> children;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string text;
        std::getline(stat, text);
        const std::size_t close = text.rfind(')');
        if (close == std::string::npos)
            continue;
        char state = 0;
        long ppid = 0;
        if (std::sscanf(text.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 && ppid == parent)
            children.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return children;
}

// Running: exists and is not a zombie waiting to be reaped.
bool running(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text))
        return false;
    const std::size_t close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// Starts a long gloo run of two rank processes and waits until both are running.
std::vector<pid_t> start_ranks(testing::ChildProcess& launcher) {
    std::vector<pid_t> ranks;
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (ranks.size() < 2 && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ranks = children_of(launcher.pid());
    }
    return ranks;
}

std::vector<std::string> long_run() {
    return {PIPELENS_RUNTIME_BINARY, "run",       "--pp",    "2", "--m",     "4",
            "--transport",           "gloo",      "--nproc", "2", "--steps", "100000",
            "--no-reference",        "--timeout", "60s"};
}

bool all_gone(const std::vector<pid_t>& ranks, std::chrono::seconds within) {
    const auto deadline = Clock::now() + within;
    while (Clock::now() < deadline) {
        bool any = false;
        for (const pid_t rank : ranks)
            any |= running(rank);
        if (!any)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

TEST(RankLauncher, AStopSignalIsPassedOnToEveryRank) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    testing::ChildProcess launcher(long_run());
    ASSERT_TRUE(launcher.started());
    const std::vector<pid_t> ranks = start_ranks(launcher);
    ASSERT_EQ(ranks.size(), 2u);
    launcher.send(SIGTERM);
    EXPECT_EQ(launcher.wait(Clock::now() + std::chrono::seconds(30)), 128 + SIGTERM);
    EXPECT_TRUE(all_gone(ranks, std::chrono::seconds(10)));
}

// The report directories a launcher made, named by its process id.
std::vector<std::filesystem::path> report_directories_of(pid_t launcher) {
    std::vector<std::filesystem::path> found;
    const std::string prefix = "pipelens-ranks-" + std::to_string(launcher) + "-";
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
        if (entry.path().filename().string().rfind(prefix, 0) == 0)
            found.push_back(entry.path());
    return found;
}

// ...and the directory it could not remove is removed by the next launcher.
TEST(RankLauncher, RanksEndWithALauncherThatIsKilled) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    testing::ChildProcess launcher(long_run());
    ASSERT_TRUE(launcher.started());
    const std::vector<pid_t> ranks = start_ranks(launcher);
    ASSERT_EQ(ranks.size(), 2u);
    const pid_t killed = launcher.pid();
    // Made while it runs (after it is killed, another test's launcher running beside this one
    // may already have removed it, so it is counted here).
    EXPECT_EQ(report_directories_of(killed).size(), 1u);
    EXPECT_TRUE(launcher.kill_and_wait());
    EXPECT_TRUE(all_gone(ranks, std::chrono::seconds(10)));

    const auto next = testing::run_command(std::string(PIPELENS_RUNTIME_BINARY) +
                                           " run --pp 2 --m 2 --transport gloo --nproc 2");
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_TRUE(report_directories_of(killed).empty());
}

// Ranks that are threads of one process stop on Ctrl-C as a launcher's do, exit 128 + the
// signal with a word on stderr; they once ended by the signal's default, without one.
TEST(RankLauncher, ALocalRunStopsOnASignalAsALaunchersRanksDo) {
    testing::ChildProcess run({PIPELENS_RUNTIME_BINARY, "run", "--pp", "2", "--m", "4",
                               "--transport", "local", "--no-reference", "--fault",
                               "stage1=sleep:30s", "--timeout", "60s"});
    ASSERT_TRUE(run.started());
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (!testing::blocks_signal(run.pid(), SIGINT) && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(testing::blocks_signal(run.pid(), SIGINT));
    run.send(SIGINT);
    EXPECT_EQ(run.wait(Clock::now() + std::chrono::seconds(10)), 128 + SIGINT);
}

}  // namespace
}  // namespace pipelens
