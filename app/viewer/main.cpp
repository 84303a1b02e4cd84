// `pipelens-view [TRACE.db]`: the desktop viewer (Dear ImGui on GLFW + OpenGL 3). Files open
// from the command line, the path box, recent files or by dropping them on the window.
//   --compare RUN  ghost bars of another run of the same trace, with step and per-rank deltas
//   --no-critical-path  start with the critical path hidden
//   --straggler-threshold X  mark ranks whose compute ran above X times its reference (1.2)
//   --drop FILE...  drop files on the window once it is open (a trace, a schedule, an import)
//   --screenshot OUT.png [--frames N] [--size WxH] [--select 2F5] [--step N]
//     [--panel events|errors|ranks|sharding] [--event N] [--error N] [--tensor output|inputN]
//     renders N frames and writes the last as a PNG, then exits (tests run it under Xvfb); a
//     choice the run cannot take (--step, --select, --error, --event) exits 2 without a PNG
//   --script FILE  plays an input script (script_player.hpp: set pp 8, wait-idle, screenshot
//     OUT.png...) in an offscreen window, then exits
// Its load and frame-time benchmark is tests/bench/viewer_bench.cpp (pipelens_bench_viewer).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <GLFW/glfw3.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/viewer/allocator_tuning.hpp"
#include "app/viewer/decimal_integers.hpp"
#include "app/viewer/screenshot.hpp"
#include "app/viewer/script_player.hpp"
#include "app/viewer/viewer_options.hpp"
#include "app/viewer/viewer_window.hpp"
#include "traces/file_kind.hpp"

namespace {

using namespace pipelens::viewer;

using Options = ViewerOptions;

void on_drop(GLFWwindow* window, int count, const char** paths) {
    auto* state = static_cast<ViewerState*>(glfwGetWindowUserPointer(window));
    if (state != nullptr && count > 0)
        drop_files(*state, std::vector<std::filesystem::path>(paths, paths + count));
}

// "1 step", "3 steps".
std::string count_text(std::size_t count, const char* one, const char* many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

// --step, --select and --error, once the first frame has fitted the view to the run. What cannot
// be done is returned (and shown in the sidebar): "" when all could.
std::string apply_choices(const Options& options, ViewerState& state) {
    std::string refused;
    if (options.step) {
        const std::size_t steps = state.trace.summary.steps.size();
        if (*options.step >= 0 && *options.step < static_cast<int>(steps))
            choose_step(state, *options.step);
        else  // -1 once showed every step, as if no step had been asked for
            refused = fmt::format("--step {}: the run has {} (0 is the first)", *options.step,
                                  count_text(steps, "step", "steps"));
    }
    if (refused.empty() && !options.select.empty() && !select_action(state, options.select))
        refused = fmt::format("--select {}: no such action", options.select);
    if (options.error) {
        if (!choose_error(state, *options.error) && refused.empty())
            refused = fmt::format("--error {}: the run has {}", *options.error,
                                  count_text(state.trace.errors.size(), "error", "errors"));
        state.panel_request = Panel::errors;
    }
    if (!refused.empty())
        state.trace.error = refused;
    return refused;
}

// The window's size and --tensor's input, once the options are known to be usable.
struct Checked {
    int width = 1600, height = 900;
    int tensor_input = -1;  // --tensor inputN, or -1 for the output
};

// Refuses options that cannot work, with exit code 2 and a message naming the option.
std::optional<Checked> check_options(const Options& options) {
    Checked checked;
    if (std::sscanf(options.size.c_str(), "%dx%d", &checked.width, &checked.height) != 2 ||
        checked.width < 400 || checked.height < 300) {
        fmt::print(stderr, "pipelens-view: --size {}: expected WIDTHxHEIGHT, at least 400x300\n",
                   options.size);
        return std::nullopt;
    }
    if (!options.panel.empty() && options.panel != "events" && options.panel != "errors" &&
        options.panel != "ranks" && options.panel != "sharding") {
        fmt::print(stderr, "pipelens-view: --panel {}: use events, errors, ranks or sharding\n",
                   options.panel);
        return std::nullopt;
    }
    if (!options.tensor.empty() && options.tensor != "output" &&
        (std::sscanf(options.tensor.c_str(), "input%d", &checked.tensor_input) != 1 ||
         checked.tensor_input < 0)) {
        fmt::print(stderr, "pipelens-view: --tensor {}: use output or inputN, e.g. input0\n",
                   options.tensor);
        return std::nullopt;
    }
    return checked;
}

// The recent files and the trace the command line names. Done before any window: a screenshot
// of a trace that did not open would be a picture of an error message, so that is an error (the
// interactive viewer shows it instead).
void open_start_trace(const Options& options, ViewerState& state) {
    // A screenshot is not a person opening a file: it reads and writes no recent files (and so
    // draws the same whatever the user opened before).
    if (options.screenshot.empty() && options.script.empty())
        state.trace.recent_files =
            RecentFiles::kept_in(config_directory_from_environment() / "recent_files");
    if (options.straggler_threshold)
        state.trace.straggler_threshold = *options.straggler_threshold;
    if (!options.trace.empty()) {
        // A file of a kind the viewer does not open (an experiment's TOML, a results JSON) is
        // refused as a drop of it is, not read as a broken trace.
        std::error_code error;
        const auto kind = pipelens::traces::file_kind_of(options.trace);
        if (std::filesystem::is_regular_file(options.trace, error) &&
            route_of(kind) == DropRoute::refuse)
            state.trace.error = refusal_text(options.trace, kind);
        else
            open_trace(state, options.trace, options.run);
    }
    if (options.compare && state.trace.model) {
        if (std::none_of(state.trace.runs.begin(), state.trace.runs.end(),
                         [&](const auto& run) { return run.id == *options.compare; }))
            state.trace.error =
                fmt::format("--compare {}: {} has no such run", *options.compare, options.trace);
        else if (*options.compare == state.trace.model->run().id)  // once drew nothing, exit 0
            state.trace.error = fmt::format(
                "--compare {}: that is the run shown; compare it with another (--run picks the "
                "one shown)",
                *options.compare);
        else
            compare_with(state.trace, *options.compare);
    }
}

// The choices the command line asks for before the first frame: --event, --tensor and --panel
// (--select and --error wait for the first frame: apply_choices). A --tensor the first decision
// does not have is refused as a --event beyond the run is: a picture of the output would pass for
// the input asked for.
void apply_start_options(const Options& options, const Checked& checked, ViewerState& state) {
    state.timeline.show_critical_path = !options.no_critical_path;
    if (options.event) {
        if (*options.event >= static_cast<int>(state.trace.events.size()))
            state.trace.error =
                fmt::format("--event {}: the run has {}", *options.event,
                            count_text(state.trace.events.size(), "event", "events"));
        else
            state.events_panel.scrub = *options.event;
        state.panel_request = Panel::events;
    }
    if (!options.tensor.empty()) {
        if (const auto refused = tensor_choice_refused(state, checked.tensor_input))
            state.trace.error = fmt::format("--tensor {}: {}", options.tensor, *refused);
        else
            state.sharding_panel.tensor = checked.tensor_input;
        state.panel_request = Panel::sharding;
    }
    if (options.panel == "errors")
        state.panel_request = Panel::errors;
    else if (options.panel == "ranks")
        state.panel_request = Panel::ranks;
    else if (options.panel == "sharding")
        state.panel_request = Panel::sharding;
    else if (options.panel == "events")
        state.panel_request = Panel::events;
}

// Renders --frames frames and writes the last as a PNG; 1 when it cannot be written. A choice
// the run cannot take (--step, --select, --error) is an error, as a bad --run is: one line, exit
// 2, no PNG (a picture of something else than was asked for would pass for it).
int take_screenshot(const Options& options, const Checked& checked, GLFWwindow* window,
                    ViewerState& state) {
    apply_finished_drop(state, true);   // a picture shows what a --drop opened, not its progress
    finish_analysis(state.trace);       // a picture shows the critical path, not "finding it..."
    if (!state.trace.damage.empty()) {  // a picture of a damaged file would pass for the run
        fmt::print(stderr, "pipelens-view: {}\n", state.trace.damage);
        return 2;
    }
    std::string refused;
    for (int frame = 0; frame < std::max(1, options.frames); ++frame) {
        glfwPollEvents();
        if (frame == 1)
            refused = apply_choices(options, state);
        if (!refused.empty()) {
            fmt::print(stderr, "pipelens-view: {}\n", refused);
            return 2;
        }
        render_frame(window, state);
        if (frame + 1 < options.frames)
            glfwSwapBuffers(window);
    }
    int status = 0;
    try {
        write_screenshot(options.screenshot, checked.width, checked.height);
    } catch (const std::exception& error) {
        fmt::print(stderr, "pipelens-view: {}\n", error.what());
        status = 1;
    }
    if (!state.trace.error.empty())
        fmt::print(stderr, "pipelens-view: {}\n", state.trace.error);
    if (!state.drop.dialog.empty())
        fmt::print(stderr, "pipelens-view: {}\n", state.drop.dialog);
    return status;
}

void run_interactive(const Options& options, GLFWwindow* window, ViewerState& state) {
    for (int frame = 0; !glfwWindowShouldClose(window); ++frame) {
        state.workbench.hold_for_due_result(kMostFrameHold);
        glfwPollEvents();
        if (frame == 1)
            (void)apply_choices(options, state);  // shown in the sidebar
        render_frame(window, state);
        if (state.png_request) {  // P: the frame just rendered, before it is shown
            int width = 0, height = 0;
            glfwGetFramebufferSize(window, &width, &height);
            try {
                write_screenshot(*state.png_request, width, height);
                state.export_message = fmt::format("wrote {}", state.png_request->string());
            } catch (const std::exception& error) {
                state.export_message = error.what();
            }
            state.png_request.reset();
        }
        glfwSwapBuffers(window);
    }
}

int run(const Options& options) {
    const std::optional<Checked> checked = check_options(options);
    if (!checked)
        return 2;
    ViewerState state;
    open_start_trace(options, state);
    // A file named on the command line that did not open as a trace is refused in every mode:
    // the interactive viewer would have shown a window with nothing but the error in it (and
    // exit 0 from a --script journey). A trace that opened but cannot take a choice (--run,
    // --compare) shows the line in the sidebar, unless a screenshot would picture it.
    const bool not_opened = !options.trace.empty() && !state.trace.reader;
    if ((not_opened || !options.screenshot.empty()) && !state.trace.error.empty()) {
        fmt::print(stderr, "pipelens-view: {}\n", state.trace.error);
        return 2;
    }
    const bool offscreen = !options.screenshot.empty() || !options.script.empty();
    GLFWwindow* window = open_window(checked->width, checked->height, offscreen);
    if (window == nullptr)
        return 1;
    glfwSetWindowUserPointer(window, &state);
    glfwSetDropCallback(window, on_drop);
    apply_start_options(options, *checked, state);
    if (!options.screenshot.empty() && !state.trace.error.empty()) {  // --event beyond the run
        fmt::print(stderr, "pipelens-view: {}\n", state.trace.error);
        close_window(window);
        return 2;
    }
    // Through the drop callback's own function: a test drives a drop the way a person makes one.
    if (!options.drop.empty())
        drop_files(state,
                   std::vector<std::filesystem::path>(options.drop.begin(), options.drop.end()));
    int status = 0;
    if (!options.script.empty())
        status = play_script(options.script, window, state);
    else if (!options.screenshot.empty())
        status = take_screenshot(options, *checked, window, state);
    else
        run_interactive(options, window, state);
    close_window(window);
    return status;
}

// A schedule, profiler traces or a dump named on the command line open as if dropped on the
// window (checked and simulated, or imported), so `pipelens-view FILE` takes what a drop takes.
// Anything else (a trace, a path that is no file, a file of no kind pipelens reads) opens as a
// trace, whose reader's error names what is wrong.
void route_start_file(Options& options) {
    namespace traces = pipelens::traces;
    std::error_code error;
    if (options.trace.empty() || !std::filesystem::is_regular_file(options.trace, error))
        return;
    switch (traces::file_kind_of(options.trace)) {
        case traces::FileKind::schedule_csv:
        case traces::FileKind::pytorch_profiler:
        case traces::FileKind::pipelining_chrometrace:
        case traces::FileKind::flight_recorder:
        case traces::FileKind::megatron_timers:
            break;
        default:
            return;
    }
    options.drop.insert(options.drop.begin(), options.trace);
    options.trace.clear();
}

}  // namespace

int main(int argc, char** argv) {
    pipelens::viewer::keep_freed_memory_for_reuse();
    Options options;
    CLI::App app{kViewerDescription};
    add_viewer_options(app, options);
    pipelens::viewer::read_integers_as_decimal(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
            return app.exit(error);  // --help: printed as asked, exit 0
        // One line and exit 2, as `pipelens` says it, not the library's own exit codes (105...).
        fmt::print(stderr, "pipelens-view: {}; see pipelens-view --help\n", error.what());
        return 2;
    }
    route_start_file(options);
    return run(options);
}
