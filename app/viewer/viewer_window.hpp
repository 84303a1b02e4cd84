// The viewer's window: GLFW with an OpenGL 3 context and Dear ImGui on it, and one frame of the
// viewer drawn in it. pipelens-view and the viewer benchmark (tests/bench/viewer_bench.cpp) open
// and draw through these, so the benchmark times the frames a person sees.
//
// Invariant: one window at a time (ImGui's context and GLFW are process-wide); close_window
// undoes everything open_window set up.
#pragma once

#include <cstdint>

#include "app/viewer/viewer_state.hpp"

struct GLFWwindow;

namespace pipelens::viewer {

// A window of `width` x `height` with ImGui set up on it; an offscreen one (screenshots,
// benchmarks) is hidden and does not wait for the display's refresh. nullptr, with the reason
// printed, when there is no display or no OpenGL 3.
GLFWwindow* open_window(int width, int height, bool offscreen);
void close_window(GLFWwindow* window);

// Draws one frame of `state` into the back buffer and returns the CPU time this thread spent
// building it (from the ImGui frame's start to ImGui::Render; the GL calls after are not
// counted).
std::int64_t render_frame(GLFWwindow* window, ViewerState& state);

}  // namespace pipelens::viewer
