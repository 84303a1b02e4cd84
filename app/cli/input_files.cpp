// Input-file kinds per command (input_files.hpp): what each kind of file is for, so a file given
// to the wrong command points to the right one.
#include "app/cli/input_files.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "app/cli/commands.hpp"

namespace pipelens::cli {
namespace {

using traces::FileKind;

// Where a file of `kind` goes: the commands that take it, as the user would type them.
std::string where_it_goes(FileKind kind, const std::string& command, const std::string& path) {
    switch (kind) {
        case FileKind::sqlite:
            return fmt::format("open it with `pipelens summary {0}` or `pipelens view {0}`", path);
        case FileKind::experiment_toml:
            return fmt::format("simulate it with `pipelens simulate {}`", path);
        case FileKind::plan_toml:
            return fmt::format("plan with it: `pipelens plan {}`", path);
        case FileKind::schedule_csv:
            if (command == "simulate" || command == "sweep" || command == "run" ||
                command == "explain")
                return fmt::format("give it as the schedule: `pipelens {} --schedule-file {}`",
                                   command, path);
            return fmt::format(
                "check it with `pipelens check {0}` or simulate it with `pipelens simulate "
                "--schedule-file {0}`",
                path);
        case FileKind::pytorch_profiler:
        case FileKind::pipelining_chrometrace:
        case FileKind::flight_recorder:
        case FileKind::megatron_timers:
            return fmt::format("read it into a trace with `pipelens import {} --out TRACE.db`",
                               path);
        case FileKind::unknown:
            break;
    }
    return "";
}

}  // namespace

std::string wrong_file_message(const std::string& command, const std::string& path, FileKind actual,
                               const std::string& expected) {
    return fmt::format("pipelens {}: {} is {}, not {}; {}", command, path,
                       traces::file_kind_description(actual), expected,
                       where_it_goes(actual, command, path));
}

CLI::Validator input_file(const std::string& command, std::initializer_list<FileKind> accepted,
                          const std::string& expected) {
    const std::vector<FileKind> kinds(accepted);
    return CLI::Validator(
        [command, kinds, expected](std::string& path) -> std::string {
            // Telling the kind reads the file: a FIFO would block it until a writer came.
            std::error_code error;
            const auto status = std::filesystem::status(path, error);
            if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
                !std::filesystem::is_directory(status))
                throw CommandFailure(
                    kExitUsage, fmt::format("pipelens {}: {} is not a regular file (a FIFO, device "
                                            "or socket); give the file itself",
                                            command, path));
            const FileKind actual = traces::file_kind_of(path);
            if (actual == FileKind::unknown ||
                std::find(kinds.begin(), kinds.end(), actual) != kinds.end())
                return "";
            // Not a ValidationError: CLI11 would prefix the option's name to the message.
            throw CommandFailure(kExitUsage, wrong_file_message(command, path, actual, expected));
        },
        "");
}

CLI::Validator trace_file(const std::string& command) {
    return input_file(command, {FileKind::sqlite}, "a trace (SQLite)");
}

CLI::Option* add_trace_argument(CLI::App& command, std::string& path,
                                const std::string& description) {
    return command.add_option("trace", path, description)
        ->required()
        ->check(trace_file(command.get_name()));
}

}  // namespace pipelens::cli
