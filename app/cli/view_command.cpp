// `pipelens view TRACE.db [VIEWER OPTIONS...]`: starts the desktop viewer on a trace. The
// viewer's options are registered here from their one definition (app/viewer/viewer_options),
// so `pipelens view --help` lists them and a mistyped option or a file that is not a trace is a
// usage error before any window opens, without linking the GUI into `pipelens`. The viewer is
// looked for next to this binary (an installed pair, or the build tree's app/viewer), then on
// PATH; this process becomes it (exec) with the arguments unchanged, so its exit status is the
// viewer's.
#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/program_exec.hpp"
#include "app/viewer/viewer_options.hpp"

namespace pipelens::cli {

void add_view_command(CLI::App& app, const std::vector<std::string>& arguments) {
    auto options = std::make_shared<viewer::ViewerOptions>();
    CLI::App* command = app.add_subcommand(
        "view", "Open a trace in the desktop viewer: pipelens view TRACE.db [OPTIONS]");
    viewer::add_viewer_options(*command, *options);
    command->get_option("trace")->check(trace_file("view"));
    // The viewer gets what followed `view`, as typed.
    const auto view = std::find(arguments.begin(), arguments.end(), "view");
    const std::vector<std::string> viewer_arguments(
        view == arguments.end() ? arguments.end() : view + 1, arguments.end());
    command->callback([options, viewer_arguments] {
        const std::string viewer = companion_program("pipelens-view", {".", "../viewer"});
        const int error = exec_program(viewer, viewer, viewer_arguments);
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens view: cannot start {} ({}); build it with "
                                         "PIPELENS_GUI=ON (needs libimgui-dev, libglfw3-dev)",
                                         viewer, std::strerror(error)));
    });
}

}  // namespace pipelens::cli
