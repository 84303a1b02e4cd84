// The prefix and exit code parse_and_run() gives each error the engine raises: every kind it
// names, and an error it does not name.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <new>
#include <stdexcept>
#include <string>

#include "app/cli/commands.hpp"
#include "app/cli/error_policy.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/schedule/static_check.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::cli {
namespace {

void expect_policy(const std::exception& error, const std::string& prefix, int exit_code) {
    const ErrorPolicy policy = error_policy(error);
    EXPECT_EQ(std::string(policy.prefix), prefix) << error.what();
    EXPECT_EQ(policy.exit_code, exit_code) << error.what();
}

TEST(ErrorPolicy, BadInputIsAUsageError) {
    expect_policy(ScheduleConfigError("m < pp"), "invalid schedule configuration: ", 2);
    expect_policy(ExperimentError("bad toml"), "", 2);
    expect_policy(traces::TraceError("not a trace"), "", 2);
    expect_policy(ScheduleFileError("bad csv"), "", 2);
}

TEST(ErrorPolicy, TooLargeHasItsOwnCodeAndWrongSchedulesFailTheCheck) {
    expect_policy(ScheduleTooLargeError("too many actions"), "", 3);
    expect_policy(ScheduleCheckError(CheckReport{{"rank 0: no F"}, false}), "", 1);
    expect_policy(ScheduleHangError(HangReport{}), "", 1);
}

TEST(ErrorPolicy, LibTorchsBacktraceIsCutFromTheMessage) {
    EXPECT_EQ(without_backtrace("from is out of bounds for float\nException raised from operator() "
                                "at ./aten/src/ATen/native/DistributionTemplates.h:265 (most "
                                "recent call first):\nframe #0: c10::Error::Error(...)\n"),
              "from is out of bounds for float");
    EXPECT_EQ(without_backtrace("[enforce fail at alloc_cpu.cpp:75] err == 0. can't allocate "
                                "memory\nframe #0: <unknown function> + 0x4c062\nframe #1: ..."),
              "[enforce fail at alloc_cpu.cpp:75] err == 0. can't allocate memory");
    EXPECT_EQ(without_backtrace("two lines\nof a message\n"), "two lines\nof a message");
    EXPECT_EQ(without_backtrace("plain"), "plain");
}

TEST(ErrorPolicy, AnyOtherErrorFailsMarkedAsAnError) {
    expect_policy(std::runtime_error("disk full"), "error: ", 1);
    // The bases of the errors named above are not mistaken for them.
    expect_policy(std::invalid_argument("odd"), "error: ", 1);
}

// Memory that ran out is said with the command and the files it was given (it once read
// "pipelens: not enough memory for this input: std::bad_alloc"), exit 3.
TEST(ErrorPolicy, RunningOutOfMemoryNamesTheCommandAndItsInput) {
    CLI::App app{"pipelens"};
    std::string trace;
    CLI::App* command = app.add_subcommand("export", "");
    command->add_option("trace", trace);
    command->callback([] { throw std::bad_alloc(); });
    std::string arguments[] = {"pipelens", "export", "run.db"};
    char* argv[] = {arguments[0].data(), arguments[1].data(), arguments[2].data()};
    ::testing::internal::CaptureStderr();
    const int code = parse_and_run(app, 3, argv);
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, kExitTooLarge);
    EXPECT_EQ(said,
              "pipelens export: not enough memory for run.db: the machine could not give what it "
              "needs (std::bad_alloc); give a smaller input, or run it where there is more "
              "memory\n");
}

}  // namespace
}  // namespace pipelens::cli
