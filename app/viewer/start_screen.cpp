// The start screen (start_screen.hpp). The examples are listed once per viewer (they are files
// of the build), the recent traces from the session's recent files.
#include "app/viewer/start_screen.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/simulate_panel.hpp"
#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {
namespace {

void heading(const char* text) {
    ImGui::Spacing();
    ImGui::TextUnformatted(text);
    ImGui::Separator();
}

constexpr const char* kPanelPurposes[] = {
    "Timeline: each rank's computations and transfers, bubbles by cause, the critical path",
    "Memory: activations held per rank over the same time axis",
    "Simulate: change the schedule, pp, v, m, costs or links; it re-simulates as you type",
    "Compare: pin a simulation, vary another, see both and their differences; kinds x m grid",
    "Events, Errors, Ranks, Sharding: what a recorded run did, failed on, waited for, chose",
};

void draw_examples(ViewerState& state) {
    static const std::vector<Example> examples = bundled_examples(examples_directory());
    heading("Examples (a click simulates it)");
    for (const Example& example : examples) {
        if (ImGui::Button(fmt::format("{}##example", example.name).c_str()))
            open_example(state, example);
        ImGui::SameLine();
        ImGui::TextDisabled("%s", example.title.c_str());
    }
}

void draw_recent(ViewerState& state) {
    heading("Recent traces");
    const std::vector<std::string> paths = state.trace.recent_files.paths();
    if (paths.empty())
        ImGui::TextDisabled("none yet: open one with the path box, or drop a file here");
    for (const std::string& path : paths)
        if (ImGui::Selectable(path.c_str()))
            open_trace(state, path);
}

}  // namespace

void draw_start_screen(ViewerState& state, float left) {
    ImGui::SetCursorScreenPos({left + 20, 20});
    ImGui::BeginGroup();
    ImGui::TextUnformatted("pipelens: open a trace, or simulate a schedule to start");
    if (state.workbench.busy())
        ImGui::TextDisabled("simulating...");
    draw_examples(state);
    draw_recent(state);
    heading("What each part is for");
    for (const char* line : kPanelPurposes)
        ImGui::BulletText("%s", line);
    ImGui::EndGroup();
}

}  // namespace pipelens::viewer
