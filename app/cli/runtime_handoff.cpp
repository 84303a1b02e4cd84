// `pipelens run` and `pipelens explain` in the torch-free `pipelens`. Only these two commands
// execute models, so LibTorch lives in the `pipelens-runtime` executable and no other command
// pays for loading it. Here they are listed (help) and hand the whole command line, untouched,
// to the runtime by exec: its options, help, output, exit codes and signals are the runtime's
// own, and rank processes that `--nproc` starts re-run the runtime directly. The runtime is an
// internal program: installed, it lives in libexec/pipelens/, not on PATH.
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/program_exec.hpp"

namespace pipelens::cli {
namespace {

constexpr const char* kRuntimeProgram = "pipelens-runtime";

[[noreturn]] void hand_off(const std::string& command, const std::string& argv0,
                           const std::vector<std::string>& arguments) {
    // Beside `pipelens` in the build tree; in an installed set, where cmake/PipelensInstall.cmake
    // puts it (libexec/pipelens/ relative to bin/, given here by the build).
    const std::string runtime =
        companion_program(kRuntimeProgram, {".", PIPELENS_INSTALLED_RUNTIME_DIRECTORY});
    const int error = exec_program(runtime, argv0, arguments);
    if (error == ENOENT)
        throw CommandFailure(
            kExitUsage,
            fmt::format("pipelens {}: the LibTorch runtime ({}) was not built (not "
                        "found beside pipelens, in {} relative to it, or on PATH); "
                        "install libtorch-dev and configure with PIPELENS_TORCH=ON",
                        command, kRuntimeProgram, PIPELENS_INSTALLED_RUNTIME_DIRECTORY));
    throw CommandFailure(kExitUsage, fmt::format("pipelens {}: cannot start the LibTorch runtime "
                                                 "{} ({})",
                                                 command, runtime, std::strerror(error)));
}

void add_handoff(CLI::App& app, const std::string& name, const std::string& description,
                 const std::string& argv0, const std::vector<std::string>& arguments) {
    CLI::App* command = app.add_subcommand(name, description);
    // Nothing is parsed here, not even --help: the runtime answers it.
    command->set_help_flag();
    command->prefix_command();
    command->callback([name, argv0, arguments] { hand_off(name, argv0, arguments); });
}

}  // namespace

void add_runtime_commands(CLI::App& app, const std::string& argv0,
                          const std::vector<std::string>& arguments) {
    add_handoff(app, "run", kRunDescription, argv0, arguments);
    add_handoff(app, "explain", kExplainDescription, argv0, arguments);
}

}  // namespace pipelens::cli
