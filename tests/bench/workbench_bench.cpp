// Benchmark: re-simulation in the viewer, as a person changing a field sees it. In a real window
// (offscreen, 1600x900) the workbench holds a pipeline of 32 ranks and 256 microbatches; each
// repetition, once the app is idle (the last simulation shown and its critical path found),
// changes m (256 <-> 224, both multiples of pp as interleaved kinds need) and draws frames until
// the frame that shows the new simulation: change-to-redraw latency is from the change to the end
// of that frame. It then draws on until the frame that shows the new timeline's critical path
// (change-to-path: the same figure while the worker finds the path with the timeline; a later
// one if it were found after the timeline went on screen, as a loaded trace's is). Every frame
// drawn meanwhile is timed twice: this thread's CPU time building it (render_frame's figure, what
// the viewer benchmark reports) and its wall time including the buffer swap. Prints, per schedule,
// the latencies' median, min and max and the frames' median, p99 and max. Then, per schedule, a
// person dragging m: a change every frame for ten times the repetitions, each new simulation
// replacing the shown one while its critical path may still be being found, with the same frame
// figures and how many simulations were shown.
//
// Needs a display. As in viewer_bench.cpp, Mesa's software rasteriser runs on the drawing
// thread (LP_NUM_THREADS=0 unless set), so its workers do not take the cores from the frame.
//
//   xvfb-run -a -s '-screen 0 1600x900x24' build/tests/pipelens_bench_workbench [REPETITIONS
//   [KIND...]]
#include <stdlib.h>

#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/viewer/allocator_tuning.hpp"
#include "app/viewer/viewer_state.hpp"
#include "app/viewer/viewer_window.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "tests/bench/workbench_pipeline.hpp"

namespace {

using namespace pipelens;
using namespace pipelens::viewer;
using Clock = std::chrono::steady_clock;

double ms(std::int64_t ns) {
    return static_cast<double>(ns) / 1e6;
}

std::int64_t ns_since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// The value at quantile `q` of `values` (sorted here).
double quantile(std::vector<std::int64_t> values, double q) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return ms(values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))]);
}

// Draws frames until the state shows a simulation other than `previous`; appends each frame's
// CPU and wall times.
void draw_until_shown(GLFWwindow* window, ViewerState& state, const TimelineModel* previous,
                      std::vector<std::int64_t>& cpu, std::vector<std::int64_t>& wall) {
    for (;;) {
        state.workbench.hold_for_due_result(kMostFrameHold);  // as pipelens-view's loop does
        const Clock::time_point start = Clock::now();
        glfwPollEvents();
        cpu.push_back(render_frame(window, state));
        glfwSwapBuffers(window);
        wall.push_back(ns_since(start));
        if (state.workbench.busy())
            continue;
        if (!state.workbench.error().empty()) {
            fmt::print(stderr, "{}\n", state.workbench.error());
            std::exit(1);
        }
        if (state.shown_simulation != nullptr && state.shown_simulation != previous)
            return;
    }
}

// Draws frames until the shown timeline's critical path has been found and drawn.
void draw_until_analysed(GLFWwindow* window, ViewerState& state, std::vector<std::int64_t>& cpu,
                         std::vector<std::int64_t>& wall) {
    // A frame applies a finished analysis (poll_analysis) before it draws, so the frame that
    // leaves none pending has drawn the path.
    while (analysis_pending(state.trace)) {
        const Clock::time_point start = Clock::now();
        glfwPollEvents();
        cpu.push_back(render_frame(window, state));
        glfwSwapBuffers(window);
        wall.push_back(ns_since(start));
    }
}

void run_case(GLFWwindow* window, const std::string& kind, int repetitions) {
    ViewerState state;
    state.workbench.load(parse_experiment_toml(bench::workbench_pipeline(kind), "bench"));
    std::vector<std::int64_t> cpu, wall, latency, path_latency, simulate;
    draw_until_shown(window, state, nullptr, cpu, wall);
    draw_until_analysed(window, state, cpu, wall);
    cpu.clear();
    wall.clear();
    for (int repetition = 0; repetition < repetitions; ++repetition) {
        const TimelineModel* previous = state.shown_simulation;
        const Clock::time_point change = Clock::now();
        state.workbench.set("m", repetition % 2 == 0 ? "224" : "256");
        draw_until_shown(window, state, previous, cpu, wall);
        latency.push_back(ns_since(change));
        simulate.push_back(state.workbench.current()->took_ns);
        draw_until_analysed(window, state, cpu, wall);
        path_latency.push_back(ns_since(change));
    }
    const auto& run = *state.workbench.current();
    fmt::print(
        "{:<36} {:>7} actions  change->redraw median {:6.1f} ms (min {:.1f}, max {:.1f})  "
        "simulate+timeline median {:6.1f} ms  change->path median {:6.1f} ms (min {:.1f}, max "
        "{:.1f})\n",
        run.subject, run.model->action_count(), quantile(latency, 0.5), quantile(latency, 0),
        quantile(latency, 1), quantile(simulate, 0.5), quantile(path_latency, 0.5),
        quantile(path_latency, 0), quantile(path_latency, 1));
    fmt::print(
        "{:<36} {:>7} frames   cpu median {:.2f} p99 {:.2f} max {:.2f} ms; wall median "
        "{:.2f} p99 {:.2f} max {:.2f} ms\n",
        "", cpu.size(), quantile(cpu, 0.5), quantile(cpu, 0.99), quantile(cpu, 1),
        quantile(wall, 0.5), quantile(wall, 0.99), quantile(wall, 1));
    std::fflush(stdout);
}

// A person dragging m: a change every frame for `frames` frames, each frame timed as above, so
// that new simulations replace the shown one while its critical path is still being found.
void run_rapid_case(GLFWwindow* window, const std::string& kind, int frames) {
    ViewerState state;
    state.workbench.load(parse_experiment_toml(bench::workbench_pipeline(kind), "bench"));
    std::vector<std::int64_t> cpu, wall;
    draw_until_shown(window, state, nullptr, cpu, wall);
    draw_until_analysed(window, state, cpu, wall);
    cpu.clear();
    wall.clear();
    int shown = 0;
    const TimelineModel* previous = state.shown_simulation;
    for (int frame = 0; frame < frames; ++frame) {
        state.workbench.set("m", std::to_string(256 - 32 * (frame % 4)));
        const Clock::time_point start = Clock::now();
        glfwPollEvents();
        cpu.push_back(render_frame(window, state));
        glfwSwapBuffers(window);
        wall.push_back(ns_since(start));
        if (state.shown_simulation != previous) {
            previous = state.shown_simulation;
            ++shown;
        }
    }
    fmt::print(
        "{:<36} a change every frame: {} frames, {} simulations shown; cpu median {:.2f} p99 "
        "{:.2f} max {:.2f} ms; wall median {:.2f} p99 {:.2f} max {:.2f} ms\n",
        kind, cpu.size(), shown, quantile(cpu, 0.5), quantile(cpu, 0.99), quantile(cpu, 1),
        quantile(wall, 0.5), quantile(wall, 0.99), quantile(wall, 1));
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    keep_freed_memory_for_reuse();  // as pipelens-view's main does
    const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
    setenv("LP_NUM_THREADS", "0", 0);
    GLFWwindow* window = open_window(1600, 900, /*offscreen=*/true);
    if (window == nullptr)
        return 1;
    fmt::print("{} changes of m per schedule, pp=32\n", repetitions);
    const std::vector<std::string> kinds =
        argc > 2 ? std::vector<std::string>(argv + 2, argv + argc)
                 : std::vector<std::string>{"1F1B", "Interleaved1F1B", "ZBVZeroBubble"};
    for (const std::string& kind : kinds)
        run_case(window, kind, repetitions);
    for (const std::string& kind : kinds)
        run_rapid_case(window, kind, 10 * repetitions);
    close_window(window);
    return 0;
}
