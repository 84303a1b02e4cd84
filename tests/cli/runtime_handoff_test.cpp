// `pipelens run` and `pipelens explain` are executed by `pipelens-runtime`, which `pipelens`
// becomes (exec) with the user's command line: output, exit codes and signals are the
// runtime's own, help still names `pipelens`, and a runtime on PATH is found when none is
// beside `pipelens`.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/blocked_signals.hpp"
#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::run_command;
using testing::run_pipelens;

// The runtime started directly, with the argv[0] that `pipelens` hands it.
CommandResult run_runtime_directly(const std::string& arguments) {
    return run_command("bash -c 'exec -a " + std::string(PIPELENS_BINARY) + " " +
                       PIPELENS_RUNTIME_BINARY + " " + arguments + "'");
}

void expect_same(const CommandResult& handed_off, const CommandResult& direct) {
    EXPECT_EQ(handed_off.exit_code, direct.exit_code);
    EXPECT_EQ(handed_off.out, direct.out);
    EXPECT_EQ(handed_off.err, direct.err);
}

TEST(RuntimeHandOff, TheRuntimeIsWhereLibTorchIsLoaded) {
    // The other half of TorchFreeCli.PipelensLoadsNoLibTorch: the same listing does show it.
    const std::vector<std::string> names = testing::loaded_libraries(PIPELENS_RUNTIME_BINARY);
    EXPECT_NE(std::find_if(names.begin(), names.end(), testing::is_libtorch), names.end());
}

TEST(RuntimeHandOff, ExplainPrintsWhatTheRuntimePrints) {
    const auto json = run_pipelens("explain --schedule 1F1B --pp 2 --m 2 --json");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto explanation = nlohmann::json::parse(json.out);
    EXPECT_EQ(explanation["model"], "mlp");
    EXPECT_EQ(explanation["stage_count"], 2);
    EXPECT_EQ(explanation["stages"].size(), 2u);
    expect_same(json, run_runtime_directly("explain --schedule 1F1B --pp 2 --m 2 --json"));

    const auto text = run_pipelens("explain --schedule 1F1B --pp 2 --m 2");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    expect_same(text, run_runtime_directly("explain --schedule 1F1B --pp 2 --m 2"));
}

TEST(RuntimeHandOff, ErrorsAndTheirExitCodesAreTheRuntimes) {
    const auto model = run_pipelens("explain --pp 2 --m 2 --model resnet");
    EXPECT_EQ(model.exit_code, 2);
    EXPECT_EQ(model.err,
              "pipelens: explain: unknown model 'resnet' (built-in: mlp, example, kwargs, "
              "transformer, tied, empty; or a TorchScript .pt file)\n");
    expect_same(model, run_runtime_directly("explain --pp 2 --m 2 --model resnet"));

    const auto option = run_pipelens("run --pp 2 --m 2 --no-such-option");
    EXPECT_EQ(option.exit_code, 2);  // a usage error, as in every command (not CLI11's 109)
    EXPECT_EQ(option.err,
              "pipelens run: unknown option --no-such-option; see pipelens run --help\n");
    expect_same(option, run_runtime_directly("run --pp 2 --m 2 --no-such-option"));
}

TEST(RuntimeHandOff, HelpIsTheRuntimesAndNamesPipelens) {
    const auto help = run_pipelens("run --help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_EQ(help.out.rfind("Run training steps of a schedule on real LibTorch ranks and "
                             "record them\nUsage: " +
                                 std::string(PIPELENS_BINARY) + " run [OPTIONS]",
                             0),
              0u)
        << help.out;
    EXPECT_NE(help.out.find("  --nproc INT"), std::string::npos) << help.out;
    expect_same(help, run_runtime_directly("run --help"));
}

TEST(RuntimeHandOff, ARuntimeOnPathIsFound) {
    const fs::path directory =
        fs::temp_directory_path() / ("pipelens_path_" + std::to_string(::getpid()));
    fs::remove_all(directory);
    fs::create_directories(directory);
    fs::copy_file(PIPELENS_BINARY, directory / "pipelens");
    const fs::path runtime_directory = fs::path(PIPELENS_RUNTIME_BINARY).parent_path();
    const auto result = run_command("PATH=" + runtime_directory.string() + ":/usr/bin:/bin " +
                                    (directory / "pipelens").string() +
                                    " explain --schedule 1F1B --pp 2 --m 2 --json");
    fs::remove_all(directory);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, run_pipelens("explain --schedule 1F1B --pp 2 --m 2 --json").out);
}

// exec keeps the process: the pid the caller started becomes the runtime, so a signal sent to it
// reaches the runtime, which stops as a run stopped by a signal does (exit 128 + the signal, once
// its watch of the stop signals is in place, which the test waits for).
TEST(RuntimeHandOff, ASignalReachesTheRuntime) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        execl(PIPELENS_BINARY, PIPELENS_BINARY, "run", "--pp", "2", "--m", "2", "--fault",
              "stage1=sleep:60s", "--timeout", "120s", "--no-reference",
              static_cast<char*>(nullptr));
        _exit(127);
    }
    const fs::path runtime = fs::canonical(PIPELENS_RUNTIME_BINARY);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::error_code error;
    while (!(fs::read_symlink("/proc/" + std::to_string(child) + "/exe", error) == runtime &&
             testing::blocks_signal(child, SIGTERM)) &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(child) + "/exe", error), runtime);
    EXPECT_TRUE(testing::blocks_signal(child, SIGTERM));
    kill(child, SIGTERM);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
}

}  // namespace
}  // namespace pipelens
