// Registration of the `pipelens` subcommands. Each command's file adds its options to the
// application and runs when chosen; failures surface as exceptions that main() turns into a
// one-line message and an exit code.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipelens::cli {

// Exit codes shared by all commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;  // the input was read but is wrong (check, hang, ...)
inline constexpr int kExitUsage = 2;        // bad arguments, unreadable or malformed input

// A command's outcome that is not success; main() prints `what()` and exits with `code`.
class CommandFailure : public std::runtime_error {
  public:
    CommandFailure(int code, const std::string& message)
        : std::runtime_error(message), code_(code) {}
    int code() const { return code_; }

  private:
    int code_;
};

void add_schedule_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_summary_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_bisect_command(CLI::App& app);
void add_shard_command(CLI::App& app);
void add_view_command(CLI::App& app);
void add_explain_command(CLI::App& app);  // needs LibTorch
// `arguments`: the command line after the program name (rank processes re-run it).
void add_run_command(CLI::App& app, const std::vector<std::string>& arguments);

}  // namespace pipelens::cli
