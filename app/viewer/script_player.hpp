// Plays the viewer's input script (viewer_script.hpp) in the window: the workbench commands go
// through run_workbench_command, the rest (example, panel, frames, screenshot) through what the
// start screen's buttons and the tab bar do, a frame drawn after each so the state is on screen
// as a person would see it.
#pragma once

#include <filesystem>

#include "app/viewer/viewer_state.hpp"

struct GLFWwindow;

namespace pipelens::viewer {

// 0 when every command ran, 2 (with the reason on stderr) for a script that does not parse or a
// command that failed, 1 when a screenshot could not be written.
int play_script(const std::filesystem::path& script, GLFWwindow* window, ViewerState& state);

}  // namespace pipelens::viewer
