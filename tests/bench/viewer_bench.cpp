// Benchmark: the viewer on synthetic traces (simulated Interleaved1F1B runs written with the real
// simulator and TraceWriter, so it loads what a user's trace would hold): about 1 M actions on
// 64 ranks, 10 M on 256 ranks and 10 M on 1,024 ranks (about 10,000 each). For each trace,
// `load` opens it as the viewer does (the runs, the model, events, errors, sharding; manual time:
// until the first view can be drawn) and reports when the critical path and bubbles' causes,
// found on a thread meanwhile, were ready. The `frame` cases then time the CPU side of drawing
// 600 frames in a real window (this thread's CPU time from the ImGui frame's start to
// ImGui::Render, the GPU's work not counted), zoomed out, mid (1/100 of the step) and zoomed in
// (1/10000), with the rows fitted to show every rank and at full height: the mean as the time,
// the median and p99 as counters, and the first frame of the new view (the slower of its first
// two: fitted rows remake their image in one of them).
//
// Needs a display (software OpenGL under Xvfb is what the README's figures use). Mesa's
// software rasteriser runs on the measured thread (LP_NUM_THREADS=0 unless set): its worker
// threads would take the cores from the frame being measured, and a GPU has no such threads.
// The traces are written once into PIPELENS_BENCH_VIEWER_DIR (default /tmp/pipelens-view-bench)
// and reused.
//
//   xvfb-run -a -s '-screen 0 1600x900x24' build/tests/pipelens_bench_viewer
//   xvfb-run -a build/tests/pipelens_bench_viewer --benchmark_filter=pp64_   # the 1 M trace only
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "app/viewer/viewer_state.hpp"
#include "app/viewer/viewer_window.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"

namespace {

namespace fs = std::filesystem;
using namespace pipelens;
using namespace pipelens::viewer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Interleaved1F1B pp x v=2 x m: about 4 pp m actions with communication. Written once.
fs::path bench_trace(const fs::path& directory, int pp, int m) {
    const auto path = directory / fmt::format("bench_pp{}_m{}.db", pp, m);
    if (fs::exists(path))
        return path;
    fs::create_directories(directory);
    const Schedule lowered = lower(generate_schedule({ScheduleKind::interleaved_1f1b, pp, 2, m}));
    sim::CostModel costs;
    costs.stages = {sim::StageCost{}};  // 1 us per F, I and W
    costs.activation_bytes = {1 << 20};
    const sim::SimulationResult result = sim::simulate(lowered, costs);
    traces::TraceWriter writer(path);
    traces::RunRecord run;
    run.schedule = lowered.name;
    run.pp = pp;
    run.v = 2;
    run.m = m;
    sim::record_simulation(writer, lowered, costs, result, run);
    return path;
}

// The window every case draws in, and the trace shown in it: one at a time (a 10 M-action
// trace's model takes GBs), loaded by its `load` case and kept for its `frame` cases.
class ViewerBench {
  public:
    ViewerBench(GLFWwindow* window, fs::path directory)
        : window_(window), directory_(std::move(directory)) {}

    // Opens the trace into a fresh state; the seconds until the first view and until the
    // analysis was ready. False, with the reason in `error`, when it cannot be opened.
    bool load(int pp, int m, double& first_view_s, double& analysed_s, std::string& error) {
        const fs::path path = bench_trace(directory_, pp, m);
        shown_.reset();  // the previous trace's memory is given back before the next loads
        auto state = std::make_unique<ViewerState>();
        const auto start = Clock::now();
        open_trace(*state, path);
        first_view_s = seconds_since(start);
        if (!state->trace.model) {
            error = state->trace.error;
            return false;
        }
        finish_analysis(state->trace);
        analysed_s = seconds_since(start);
        frame(*state);  // fits the view
        shown_ = std::move(state);
        shown_path_ = path;
        return true;
    }

    // The state of the trace for (pp, m), loaded if another (or none) is shown.
    ViewerState* shown(int pp, int m, std::string& error) {
        double first_view_s = 0, analysed_s = 0;
        if (shown_ && shown_path_ == bench_trace(directory_, pp, m))
            return shown_.get();
        return load(pp, m, first_view_s, analysed_s, error) ? shown_.get() : nullptr;
    }

    // One frame as the interactive loop draws it: shown frames are finished before the next
    // starts (unshown, a software renderer keeps them queued and the next texture upload pays
    // for rasterising them). Returns the frame's CPU time in ns.
    std::int64_t frame(ViewerState& state) {
        glfwPollEvents();
        const std::int64_t cpu = render_frame(window_, state);
        glfwSwapBuffers(window_);
        return cpu;
    }

  private:
    GLFWwindow* window_;
    fs::path directory_;
    std::unique_ptr<ViewerState> shown_;
    fs::path shown_path_;
};

struct Zoom {
    const char* name;
    std::int64_t divisor;  // the view spans the step / divisor from its middle; 0: all of it
};
constexpr Zoom kZooms[] = {{"zoomed_out", 0}, {"mid", 100}, {"zoomed_in", 10000}};

void load_case(benchmark::State& state, ViewerBench& bench, int pp, int m) {
    double first_view_s = 0, analysed_s = 0;
    for (auto _ : state) {
        std::string error;
        if (!bench.load(pp, m, first_view_s, analysed_s, error)) {
            state.SkipWithError(error.c_str());
            return;
        }
        state.SetIterationTime(first_view_s);
    }
    std::string unused;
    const ViewerState* shown = bench.shown(pp, m, unused);
    state.counters["actions"] = static_cast<double>(shown->trace.model->action_count());
    state.counters["critical_path_actions"] =
        static_cast<double>(shown->trace.model->critical_path().actions.size());
    state.counters["critical_path_ready_s"] = analysed_s;
}

void frame_case(benchmark::State& state, ViewerBench& bench, int pp, int m, bool fit, Zoom zoom) {
    std::string error;
    ViewerState* shown = bench.shown(pp, m, error);
    if (shown == nullptr) {
        state.SkipWithError(error.c_str());
        return;
    }
    const std::int64_t end = shown->trace.model->end_ns();
    const std::int64_t span = zoom.divisor > 0 ? end / zoom.divisor : 0;
    shown->timeline.fit_ranks = fit;
    shown->timeline.geometry.view_start = span > 0 ? end / 2 : 0;
    shown->timeline.geometry.view_end = span > 0 ? end / 2 + span : end;
    // A new view: the fitted rows' image is made once the view has settled, in one of these
    // two frames.
    const std::int64_t first = bench.frame(*shown);
    const std::int64_t new_view_ns = std::max(first, bench.frame(*shown));
    std::vector<std::int64_t> times;
    for (auto _ : state) {
        times.push_back(bench.frame(*shown));
        state.SetIterationTime(static_cast<double>(times.back()) / 1e9);
    }
    std::sort(times.begin(), times.end());
    state.counters["median_ms"] = static_cast<double>(times[times.size() / 2]) / 1e6;
    state.counters["p99_ms"] =
        static_cast<double>(times[std::min(times.size() - 1, times.size() * 99 / 100)]) / 1e6;
    state.counters["new_view_ms"] = static_cast<double>(new_view_ns) / 1e6;
}

// For each trace its load, then its frames: fitted rows at each zoom, then full rows.
void register_cases(ViewerBench& bench) {
    // 977,920, 10,210,304 and 10,481,664 actions.
    for (const auto& [pp, m] : {std::pair{64, 1280}, std::pair{256, 3328}, std::pair{1024, 853}}) {
        const std::string trace = fmt::format("pp{}_m{}", pp, m);
        benchmark::RegisterBenchmark(
            ("load/" + trace).c_str(),
            [&bench, pp = pp, m = m](benchmark::State& state) { load_case(state, bench, pp, m); })
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kSecond);
        for (const bool fit : {true, false})
            for (const Zoom& zoom : kZooms)
                benchmark::RegisterBenchmark(
                    fmt::format("frame/{}/{}/{}", trace, fit ? "fitted" : "full", zoom.name)
                        .c_str(),
                    [&bench, pp = pp, m = m, fit, zoom](benchmark::State& state) {
                        frame_case(state, bench, pp, m, fit, zoom);
                    })
                    ->Iterations(600)
                    ->UseManualTime()
                    ->Unit(benchmark::kMillisecond);
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 2;
    // Mesa's software rasteriser (llvmpipe, what Xvfb and GPU-less CI have) runs worker threads
    // that take the cores from the frame being measured: on two cores they put 10-15 ms of
    // thread CPU time into one frame in a hundred. Rasterising on this thread, after the
    // measured part of the frame, leaves the viewer's own work in the figures. A GPU has no
    // such threads; an explicit LP_NUM_THREADS is kept.
    setenv("LP_NUM_THREADS", "0", 0);
    const char* directory = std::getenv("PIPELENS_BENCH_VIEWER_DIR");
    GLFWwindow* window = open_window(1600, 900, /*offscreen=*/true);
    if (window == nullptr)
        return 1;
    {
        ViewerBench bench(window, directory != nullptr ? directory : "/tmp/pipelens-view-bench");
        register_cases(bench);
        benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
    }
    close_window(window);
    return 0;
}
