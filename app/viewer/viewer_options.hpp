// The command line of the viewer, defined once: `pipelens-view` parses it, and `pipelens view`
// registers the same options so that its --help lists them and a mistyped one is a usage error
// before the viewer starts, without linking any GUI code into `pipelens`.
//
// Invariant: GUI-free (CLI11 only); every option the viewer takes is added here and only here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipelens::viewer {

inline constexpr const char* kViewerDescription = "pipelens-view: the pipelens trace viewer";

struct ViewerOptions {
    std::string trace;
    std::optional<std::int64_t> run;
    std::optional<std::int64_t> compare;
    std::string screenshot;
    int frames = 3;
    std::string size = "1600x900";
    std::string select;
    std::string panel;
    std::optional<int> event;  // --event N: the Events panel replayed to event N
    std::optional<int> error;  // --error N: the Errors panel's error N chosen
    std::optional<int> step;   // a run of several steps: show this one (none: every step)
    std::string tensor;
    bool no_critical_path = false;
    // Unset: engine/analysis/stragglers' default, as `pipelens summary --stragglers` uses.
    std::optional<double> straggler_threshold;
    std::vector<std::string> drop;  // files dropped on the window once it is open
    std::string script;  // an input script (viewer_script.hpp) played, then the viewer exits
};

// Adds the viewer's options to `command`; `options` must outlive the parse. The trace is the
// positional option named "trace".
void add_viewer_options(CLI::App& command, ViewerOptions& options);

}  // namespace pipelens::viewer
