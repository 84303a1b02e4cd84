// The viewer's options (viewer_options.hpp).
#include "app/viewer/viewer_options.hpp"

namespace pipelens::viewer {
namespace {

// An index into a panel's list: CLI11's NonNegativeNumber says "not in range 0.000000 to" a
// 309-digit number.
const CLI::Validator kIndex(
    [](const std::string& text) -> std::string {
        try {
            std::size_t used = 0;
            const long long value = std::stoll(text, &used);
            if (used == text.size() && value >= 0)
                return "";
        } catch (const std::exception&) {
        }
        return "'" + text + "' is not an index (give 0 or more)";
    },
    "INDEX");

}  // namespace

void add_viewer_options(CLI::App& app, ViewerOptions& options) {
    app.add_option("trace", options.trace,
                   "Trace file (SQLite) to open; a schedule CSV, a profiler trace or a dump opens "
                   "as a drop does (checked and simulated, or imported)");
    app.add_option("--run", options.run, "Run to show (default: the latest)");
    app.add_option("--screenshot", options.screenshot, "Render and write a PNG, then exit");
    app.add_option("--frames", options.frames, "Frames to render before the screenshot (3)")
        ->check(CLI::Range(1, 1000000));
    app.add_option("--size", options.size, "Window size WIDTHxHEIGHT (1600x900)");
    app.add_option("--select", options.select, "Select an action by its text, e.g. 2F5");
    app.add_option("--compare", options.compare,
                   "Compare with this run of the same trace (ghost bars and deltas)");
    app.add_option("--panel", options.panel,
                   "Bottom panel to show: events, errors, ranks, sharding");
    app.add_option("--event", options.event,
                   "Replay the state up to this event (its index in the Events panel)")
        ->check(kIndex);
    app.add_option("--error", options.error,
                   "Choose this error (its index in the Errors panel): select its action, mark "
                   "its moment")
        ->check(kIndex);
    app.add_option("--step", options.step,
                   "A run of several steps: show step N (0 = the first), fitted to it");
    app.add_option("--tensor", options.tensor,
                   "Sharding panel: the tensor drawn on the mesh, output or inputN");
    app.add_option("--drop", options.drop,
                   "Drop these files on the window once it is open, as if dragged onto it: a "
                   "trace, a schedule CSV to check, or files to import");
    app.add_option("--script", options.script,
                   "Play an input script (set pp 8, simulate, wait-idle, screenshot OUT.png, "
                   "...; docs/viewer.md), then exit");
    app.add_flag("--no-critical-path", options.no_critical_path,
                 "Start with the critical path hidden (C shows it)");
    app.add_option("--straggler-threshold", options.straggler_threshold,
                   "Mark a rank whose compute ran more than this many times its reference (1.2)")
        ->check(CLI::PositiveNumber);
}

}  // namespace pipelens::viewer
