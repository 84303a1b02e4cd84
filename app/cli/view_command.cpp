// `pipelens view TRACE.db [VIEWER OPTIONS...]`: starts the desktop viewer on a trace. The viewer
// is looked for next to this binary (an installed pair, or the build tree's app/viewer), then
// on PATH; this process becomes it (exec), so its exit status is the viewer's.
#include <cstring>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/program_exec.hpp"

namespace pipelens::cli {

void add_view_command(CLI::App& app) {
    CLI::App* command = app.add_subcommand(
        "view",
        "Open a trace in the desktop viewer: pipelens view TRACE.db [pipelens-view options]");
    command->prefix_command();  // everything after `view` goes to the viewer as it is
    command->callback([command] {
        const std::string viewer = companion_program("pipelens-view", {".", "../viewer"});
        const int error = exec_program(viewer, viewer, command->remaining());
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens view: cannot start {} ({}); build it with "
                                         "PIPELENS_GUI=ON (needs libimgui-dev, libglfw3-dev)",
                                         viewer, std::strerror(error)));
    });
}

}  // namespace pipelens::cli
