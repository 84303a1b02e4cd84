// Synthetic traces come from the real simulator and TraceWriter, so the benchmark loads what a
// user's trace would hold.
#include "app/viewer/viewer_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"

namespace pipelens::viewer {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Interleaved1F1B pp x v=2 x m: about 4 pp m actions with communication.
std::filesystem::path write_trace(const std::filesystem::path& directory, int pp, int m) {
    const auto path = directory / fmt::format("bench_pp{}_m{}.db", pp, m);
    if (std::filesystem::exists(path))
        return path;
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

struct FrameTimes {
    double median_ms = 0;
    double p99_ms = 0;
};

FrameTimes time_frames(ViewerState& state,
                       const std::function<std::int64_t(ViewerState&)>& render_frame, int frames) {
    std::vector<std::int64_t> times;
    for (int frame = 0; frame < frames; ++frame)
        times.push_back(render_frame(state));
    std::sort(times.begin(), times.end());
    return {times[times.size() / 2] / 1e6,
            times[std::min(times.size() - 1, times.size() * 99 / 100)] / 1e6};
}

}  // namespace

int run_bench(const std::filesystem::path& directory,
              const std::function<std::int64_t(ViewerState&)>& render_frame) {
    std::filesystem::create_directories(directory);
    // About 4 actions per rank and microbatch: 977,920, 10,210,304 and 10,481,664 actions, the
    // last on 1,024 ranks (about 10,000 each).
    for (const auto& [pp, m] : {std::pair{64, 1280}, std::pair{256, 3328}, std::pair{1024, 853}}) {
        auto start = Clock::now();
        const auto path = write_trace(directory, pp, m);
        fmt::print("trace {}: ready in {:.1f} s\n", path.string(), seconds_since(start));
        std::fflush(stdout);
        ViewerState state;
        start = Clock::now();
        open_trace(state, path);
        if (!state.trace.model) {
            fmt::print(stderr, "bench: {}\n", state.trace.error);
            return 1;
        }
        fmt::print("load: {} actions in {:.3f} s", state.trace.model->action_count(),
                   seconds_since(start));
        std::fflush(stdout);
        finish_analysis(state.trace);  // found on a thread while the timeline is up
        fmt::print(", critical path and bubbles' causes {:.3f} s after the start ({} links)\n",
                   seconds_since(start), state.trace.model->critical_path().actions.size());
        render_frame(state);  // fits the view
        const std::int64_t end = state.trace.model->end_ns();
        const struct {
            const char* name;
            std::int64_t span;
        } zooms[] = {{"zoomed out", 0},
                     {"mid (1/100 of the step)", end / 100},
                     {"zoomed in (1/10000 of the step)", end / 10000}};
        // Rows shrunk to fit every rank (the default when they do not fit), then full rows.
        for (bool fit : {true, false}) {
            state.timeline.fit_ranks = fit;
            for (const auto& zoom : zooms) {
                state.timeline.geometry.view_start = zoom.span > 0 ? end / 2 : 0;
                state.timeline.geometry.view_end = zoom.span > 0 ? end / 2 + zoom.span : end;
                // A new view: the fitted rows' image is made once the view has settled, in one
                // of these two frames.
                const std::int64_t first = render_frame(state);
                const double first_ms =
                    static_cast<double>(std::max(first, render_frame(state))) / 1e6;
                const FrameTimes times = time_frames(state, render_frame, 600);
                fmt::print(
                    "  frame CPU time, {} rows, {:<32} median {:.2f} ms  p99 {:.2f} ms  "
                    "(new view: {:.1f} ms)\n",
                    fit ? "fitted" : "full", zoom.name, times.median_ms, times.p99_ms, first_ms);
                std::fflush(stdout);
            }
        }
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace pipelens::viewer
