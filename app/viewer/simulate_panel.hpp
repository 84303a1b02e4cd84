// The Simulate panel: the workbench's experiment as fields (schedule, stage costs or a
// transformer, links and memory); a change goes to Workbench::set, which re-simulates off the
// UI thread, and the timeline shows each simulation as it arrives. A value the engine refuses,
// or a combination it cannot simulate, shows the engine's message beside the field it names.
// Save writes the experiment as TOML; Record simulates it into the open trace (or a new file).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace pipelens::viewer {

struct ViewerState;

struct SimulatePanelState {
    // Text being typed into a field, by key, until it is entered; the rest show the experiment.
    std::map<std::string, std::string> editing;
    std::string save_path = "experiment.toml";
    std::string record_path = "workbench.db";
    std::string message;  // what Save or Record did, or why not
};

void draw_simulate_panel(ViewerState& state);

// Takes what the workbench finished (Workbench::poll) and shows a new simulation in the
// timeline, fitted, with the panels' choices of the run before cleared. Every frame.
void follow_workbench(ViewerState& state);

// Loads `experiment` into the workbench, brings the Simulate panel forward; the timeline shows
// it once simulated (the start screen's examples, the script's `example`).
struct Example;
void open_example(ViewerState& state, const Example& example);

}  // namespace pipelens::viewer
