// `pipelens-view --bench`: builds synthetic traces (a 1 M-action and a 10 M-action simulated
// Interleaved1F1B run written with TraceWriter), times loading them into a TimelineModel, and
// times the CPU side of drawing frames (ImGui frame + draw lists, not the GPU) zoomed out,
// mid and zoomed in: median and p99 over many frames. Needs a window (it draws real frames).
#pragma once

#include <filesystem>
#include <functional>

#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {

// `render_frame` draws one frame of `state` and returns its CPU time in ns.
int run_bench(const std::filesystem::path& directory,
              const std::function<std::int64_t(ViewerState&)>& render_frame);

}  // namespace pipelens::viewer
