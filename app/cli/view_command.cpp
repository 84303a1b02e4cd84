// `pipelens view TRACE.db [VIEWER OPTIONS...]`: starts the desktop viewer on a trace. The viewer
// is looked for next to this binary (an installed pair, or the build tree's app/viewer), then
// on PATH; this process becomes it (exec), so its exit status is the viewer's.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "app/cli/commands.hpp"

namespace pipelens::cli {
namespace {

std::string viewer_path() {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error)
        for (const auto& candidate :
             {self.parent_path() / "pipelens-view",
              self.parent_path().parent_path() / "viewer" / "pipelens-view"})
            if (std::filesystem::exists(candidate))
                return candidate.string();
    return "pipelens-view";
}

}  // namespace

void add_view_command(CLI::App& app) {
    CLI::App* command = app.add_subcommand(
        "view",
        "Open a trace in the desktop viewer: pipelens view TRACE.db [pipelens-view options]");
    command->prefix_command();  // everything after `view` goes to the viewer as it is
    command->callback([command] {
        std::vector<std::string> all = command->remaining();
        const std::string viewer = viewer_path();
        std::vector<char*> argv{const_cast<char*>(viewer.c_str())};
        for (std::string& argument : all)
            argv.push_back(argument.data());
        argv.push_back(nullptr);
        execvp(viewer.c_str(), argv.data());
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens view: cannot start {} ({}); build it with "
                                         "PIPELENS_GUI=ON (needs libimgui-dev, libglfw3-dev)",
                                         viewer, std::strerror(errno)));
    });
}

}  // namespace pipelens::cli
