// add_trace_argument in process: required, named "trace", and checked under the command's name.
#include <gtest/gtest.h>

#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/input_files.hpp"

namespace pipelens::cli {
namespace {

const std::string kToml = std::string(PIPELENS_SOURCE_DIR) + "/assets/examples/default.toml";

TEST(TraceArgument, IsRequiredAndNamedTrace) {
    CLI::App app;
    std::string path;
    CLI::App* command = app.add_subcommand("replay");
    add_trace_argument(*command, path, "Trace file (SQLite)");
    EXPECT_THROW(app.parse(std::vector<std::string>{"replay"}), CLI::RequiredError);
    EXPECT_NE(command->help().find("trace TEXT REQUIRED"), std::string::npos) << command->help();
}

TEST(TraceArgument, AFileOfUnknownKindReachesTheCommand) {
    CLI::App app;
    std::string path;
    add_trace_argument(*app.add_subcommand("summary"), path, "Trace file");
    app.parse(std::vector<std::string>{"/no/such/trace.db",
                                       "summary"});  // CLI11 reads a vector last first
    EXPECT_EQ(path, "/no/such/trace.db");
}

TEST(TraceArgument, AnotherKindIsRefusedInTheCommandsName) {
    CLI::App app;
    std::string path;
    add_trace_argument(*app.add_subcommand("bisect"), path, "Trace file (SQLite)");
    try {
        app.parse(std::vector<std::string>{kToml, "bisect"});
        FAIL() << "no error";
    } catch (const CommandFailure& failure) {
        EXPECT_EQ(failure.code(), kExitUsage);
        EXPECT_EQ(std::string(failure.what()),
                  wrong_file_message("bisect", kToml, traces::FileKind::experiment_toml,
                                     "a trace (SQLite)"));
        EXPECT_EQ(std::string(failure.what()).rfind("pipelens bisect: ", 0), 0u) << failure.what();
    }
}

}  // namespace
}  // namespace pipelens::cli
