// Registration of the `pipelens` subcommands. Each command's file adds its options to the
// application and runs when chosen; failures surface as exceptions that parse_and_run() turns
// into a one-line message and an exit code. `pipelens` holds every command but `run` and
// `explain`, which need LibTorch and live in `pipelens-runtime`.
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
inline constexpr int kExitTooLarge = 3;     // the work cannot fit this machine's memory

inline constexpr const char* kVersion = "pipelens 0.1.0";
// Both binaries list `run` and `explain` with these words.
inline constexpr const char* kRunDescription =
    "Run training steps of a schedule on real LibTorch ranks and record them";
inline constexpr const char* kExplainDescription =
    "Show a pipeline's stages, split, ops, parameters and boundary metadata";

// A command's outcome that is not success; parse_and_run() prints `what()` and returns `code`.
class CommandFailure : public std::runtime_error {
  public:
    CommandFailure(int code, const std::string& message)
        : std::runtime_error(message), code_(code) {}
    int code() const { return code_; }

  private:
    int code_;
};

// `parse(text)` for the flag --`flag`; a std::invalid_argument from it (a bad unit, number or
// name) becomes a usage error "<command>: --<flag>: <why>", exit 2.
template <typename Parse>
auto parse_flag_text(const std::string& command, const std::string& flag, const std::string& text,
                     Parse parse) {
    try {
        return parse(text);
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, command + ": --" + flag + ": " + error.what());
    }
}

void add_schedule_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_summary_command(CLI::App& app);
void add_diff_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_bisect_command(CLI::App& app);
void add_shard_command(CLI::App& app);
// `arguments`: the command line after the program name (the viewer gets what follows `view`).
void add_view_command(CLI::App& app, const std::vector<std::string>& arguments);
void add_import_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_partition_command(CLI::App& app);
void add_merge_command(CLI::App& app);

// `pipelens`'s `run` and `explain`: exec `pipelens-runtime` as `argv0 arguments...` (the command
// line after the program name, unchanged).
void add_runtime_commands(CLI::App& app, const std::string& argv0,
                          const std::vector<std::string>& arguments);

// `pipelens-runtime` only (they need LibTorch).
void add_explain_command(CLI::App& app);
// `arguments`: the command line after the program name (rank processes re-run it).
void add_run_command(CLI::App& app, const std::vector<std::string>& arguments);

// Parses the command line and runs the chosen command; returns the process's exit code.
int parse_and_run(CLI::App& app, int argc, char** argv);

}  // namespace pipelens::cli
