// `pipelens-view [TRACE.db]`: the desktop viewer (Dear ImGui on GLFW + OpenGL 3). Files open
// from the command line, the path box, recent files or by dropping them on the window.
//   --compare RUN  ghost bars of another run of the same trace, with step and per-rank deltas
//   --no-critical-path  start with the critical path hidden
//   --screenshot OUT.png [--frames N] [--size WxH] [--select 2F5]
//     [--panel events|errors|ranks|sharding] [--event N] [--error N] [--tensor output|inputN]
//     renders N frames and writes the last as a PNG, then exits (tests run it under Xvfb)
//   --bench [--bench-dir DIR]  load and frame-time figures on synthetic traces
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include <GLFW/glfw3.h>
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <CLI/CLI.hpp>

#include "app/viewer/screenshot.hpp"
#include "app/viewer/viewer_app.hpp"
#include "app/viewer/viewer_bench.hpp"
#include "app/viewer/viewer_options.hpp"

namespace {

using namespace pipelens::viewer;

using Options = ViewerOptions;

void on_drop(GLFWwindow* window, int count, const char** paths) {
    auto* state = static_cast<ViewerState*>(glfwGetWindowUserPointer(window));
    if (state != nullptr && count > 0)
        open_trace(*state, paths[0]);
}

// CPU time of this thread: what the frame's own work costs, whatever else the machine runs
// (on a software-rendered X server the rasteriser's threads share the cores).
std::int64_t thread_cpu_ns() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// --select and --error, once the first frame has fitted the view to the run.
void apply_choices(const Options& options, ViewerState& state) {
    if (!options.select.empty() && !select_action(state, options.select))
        state.trace.error = fmt::format("--select {}: no such action", options.select);
    if (options.error >= 0) {
        if (!choose_error(state, options.error))
            state.trace.error = fmt::format("--error {}: the run has {} errors", options.error,
                                            state.trace.errors.size());
        state.panel_request = Panel::errors;
    }
}

std::int64_t render(GLFWwindow* window, ViewerState& state) {
    const std::int64_t start = thread_cpu_ns();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    draw_frame(state, static_cast<float>(width), static_cast<float>(height));
    ImGui::Render();
    const std::int64_t cpu = thread_cpu_ns() - start;
    glViewport(0, 0, width, height);
    glClearColor(kBackground.r / 255.f, kBackground.g / 255.f, kBackground.b / 255.f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    return cpu;
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

// A window with an OpenGL 3 context and ImGui set up on it; nullptr (with the reason printed)
// when there is no display or no OpenGL 3.
GLFWwindow* open_window(const Options& options, const Checked& checked) {
    glfwSetErrorCallback([](int code, const char* text) {
        fmt::print(stderr, "pipelens-view: GLFW error {}: {}\n", code, text);
    });
    if (!glfwInit()) {
        fmt::print(stderr,
                   "pipelens-view: cannot open a window (no display? run under xvfb-run "
                   "or set DISPLAY)\n");
        return nullptr;
    }
    const bool offscreen = !options.screenshot.empty() || options.bench;
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
    if (offscreen)
        glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow* window =
        glfwCreateWindow(checked.width, checked.height, "pipelens-view", nullptr, nullptr);
    if (window == nullptr) {
        fmt::print(stderr, "pipelens-view: cannot create an OpenGL 3 window\n");
        glfwTerminate();
        return nullptr;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(offscreen ? 0 : 1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    ImGui::StyleColorsDark();
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 130");
    return window;
}

void close_window(GLFWwindow* window) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
}

// The recent files and the trace the command line names. Done before any window: a screenshot
// of a trace that did not open would be a picture of an error message, so that is an error (the
// interactive viewer shows it instead).
void open_start_trace(const Options& options, ViewerState& state) {
    // A screenshot or a benchmark is not a person opening a file: it reads and writes no
    // recent files (and so draws the same whatever the user opened before).
    if (options.screenshot.empty() && !options.bench)
        state.trace.recent_files =
            RecentFiles::kept_in(config_directory_from_environment() / "recent_files");
    if (!options.trace.empty())
        open_trace(state, options.trace, options.run);
    if (options.compare && state.trace.model) {
        if (std::none_of(state.trace.runs.begin(), state.trace.runs.end(),
                         [&](const auto& run) { return run.id == *options.compare; }))
            state.trace.error =
                fmt::format("--compare {}: {} has no such run", *options.compare, options.trace);
        else
            compare_with(state.trace, *options.compare);
    }
}

// The choices the command line asks for before the first frame: --event, --tensor and --panel
// (--select and --error wait for the first frame: apply_choices).
void apply_start_options(const Options& options, const Checked& checked, ViewerState& state) {
    state.timeline.show_critical_path = !options.no_critical_path;
    if (options.event >= 0) {
        if (options.event >= static_cast<int>(state.trace.events.size()))
            state.trace.error = fmt::format("--event {}: the run has {} events", options.event,
                                            state.trace.events.size());
        else
            state.events_panel.scrub = options.event;
        state.panel_request = Panel::events;
    }
    if (!options.tensor.empty()) {
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

// Renders --frames frames and writes the last as a PNG; 1 when it cannot be written.
int take_screenshot(const Options& options, const Checked& checked, GLFWwindow* window,
                    ViewerState& state) {
    finish_analysis(state.trace);  // a picture shows the critical path, not "finding it..."
    for (int frame = 0; frame < std::max(1, options.frames); ++frame) {
        glfwPollEvents();
        if (frame == 1)
            apply_choices(options, state);
        render(window, state);
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
    return status;
}

void run_interactive(const Options& options, GLFWwindow* window, ViewerState& state) {
    for (int frame = 0; !glfwWindowShouldClose(window); ++frame) {
        glfwPollEvents();
        if (frame == 1)
            apply_choices(options, state);
        render(window, state);
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
    // Mesa's software rasteriser (llvmpipe, what Xvfb and GPU-less CI have) runs worker threads
    // that take the cores from the frame being measured: on two cores they put 10-15 ms of
    // thread CPU time into one frame in a hundred. Rasterising on this thread, after the
    // measured part of the frame, leaves the viewer's own work in the figures. A GPU has no
    // such threads; an explicit LP_NUM_THREADS is kept.
    if (options.bench)
        setenv("LP_NUM_THREADS", "0", 0);
    ViewerState state;
    open_start_trace(options, state);
    if (!options.screenshot.empty() && !state.trace.error.empty()) {
        fmt::print(stderr, "pipelens-view: {}\n", state.trace.error);
        return 2;
    }
    GLFWwindow* window = open_window(options, *checked);
    if (window == nullptr)
        return 1;
    glfwSetWindowUserPointer(window, &state);
    glfwSetDropCallback(window, on_drop);
    apply_start_options(options, *checked, state);
    int status = 0;
    if (options.bench)
        status = run_bench(options.bench_dir, [&](ViewerState& bench_state) {
            glfwPollEvents();
            const std::int64_t cpu = render(window, bench_state);
            // As the interactive loop does: shown frames are finished before the next starts
            // (unshown, a software renderer keeps them queued and the next texture upload
            // pays for rasterising them).
            glfwSwapBuffers(window);
            return cpu;
        });
    else if (!options.screenshot.empty())
        status = take_screenshot(options, *checked, window, state);
    else
        run_interactive(options, window, state);
    close_window(window);
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    CLI::App app{kViewerDescription};
    add_viewer_options(app, options);
    CLI11_PARSE(app, argc, argv);
    return run(options);
}
