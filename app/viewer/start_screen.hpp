// The start screen: what the timeline's area shows while nothing is open — the recent traces,
// the bundled examples (a click simulates one in the workbench and shows it), and one line on
// what each panel is for.
#pragma once

namespace pipelens::viewer {

struct ViewerState;

// Draws into the current ImGui window (the timeline's area), left edge at `left`.
void draw_start_screen(ViewerState& state, float left);

}  // namespace pipelens::viewer
