// Sidebar: file, runs, the step picker and per-step figures, search, selection details, comparison
// summary (with diff's split of the step-time difference), the colour key.
#include "app/viewer/sidebar_panel.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/viewer_layout.hpp"
#include "app/viewer/viewer_state.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

// A small file dialog: the directory's subdirectories and files; a click enters a directory or
// takes a file as a drop does (a trace opens, a schedule is checked, traces or dumps are
// imported, anything else is refused in a dialog naming it). Lists `browse_directory` into
// `browse_entries`: once per directory entered or dialog opened, not every frame it is up.
void list_browse_directory(SidebarState& sidebar) {
    std::error_code error;
    sidebar.browse_entries.clear();
    for (const auto& entry : std::filesystem::directory_iterator(sidebar.browse_directory, error)) {
        const bool directory = entry.is_directory(error);
        if (directory || entry.is_regular_file(error))
            sidebar.browse_entries.push_back(
                {entry.path(), entry.path().filename().string() + (directory ? "/" : ""),
                 directory});
    }
    std::sort(sidebar.browse_entries.begin(), sidebar.browse_entries.end(),
              [](const auto& left, const auto& right) { return left.path < right.path; });
    sidebar.browse_error = error ? error.message() : "";
    sidebar.browse_listed = sidebar.browse_directory;
}

void draw_open_dialog(ViewerState& state) {
    if (ImGui::Button("Browse...")) {
        ImGui::OpenPopup("open file");
        state.sidebar.browse_listed.clear();  // list afresh: files may have come or gone
    }
    if (!ImGui::BeginPopup("open file"))
        return;
    if (state.sidebar.browse_directory.empty()) {
        std::error_code error;
        state.sidebar.browse_directory = std::filesystem::current_path(error).string();
    }
    if (state.sidebar.browse_listed != state.sidebar.browse_directory)
        list_browse_directory(state.sidebar);
    ImGui::TextUnformatted(state.sidebar.browse_directory.c_str());
    ImGui::Separator();
    if (ImGui::Selectable("../", false, ImGuiSelectableFlags_DontClosePopups))
        state.sidebar.browse_directory =
            std::filesystem::path(state.sidebar.browse_directory).parent_path().string();
    for (const BrowseEntry& entry : state.sidebar.browse_entries)
        if (ImGui::Selectable(entry.name.c_str(), false,
                              entry.directory ? ImGuiSelectableFlags_DontClosePopups : 0)) {
            if (entry.directory)
                state.sidebar.browse_directory = entry.path.string();
            else
                drop_files(state, {entry.path});
        }
    if (!state.sidebar.browse_error.empty())
        ImGui::TextDisabled("%s", state.sidebar.browse_error.c_str());
    ImGui::EndPopup();
}

void draw_file_controls(ViewerState& state) {
    char buffer[1024];
    std::snprintf(buffer, sizeof buffer, "%s", state.sidebar.open_path_input.c_str());
    ImGui::SetNextItemWidth(-50);
    // The path box takes what a drop takes: a trace, a schedule to check, files to import.
    if (ImGui::InputTextWithHint("##open", "trace, schedule or import", buffer, sizeof buffer,
                                 ImGuiInputTextFlags_EnterReturnsTrue))
        drop_files(state, {buffer});
    state.sidebar.open_path_input = buffer;
    ImGui::SameLine();
    if (ImGui::Button("Open"))
        drop_files(state, {state.sidebar.open_path_input});
    draw_open_dialog(state);
    if (!state.trace.recent_files.paths().empty() && ImGui::CollapsingHeader("Recent files")) {
        for (const std::string& recent : std::vector<std::string>(state.trace.recent_files.paths()))
            if (ImGui::Selectable(recent.c_str()))
                open_trace(state, recent);
    }
}

// A runs-list line too wide for the sidebar breaks before its ending (the step time, FAILED),
// which a cut would lose first: "  1 real pp=2 m=8  1F1B\n      200.362 ms".
std::string fitted_run_line(const std::string& text) {
    const std::size_t ending = text.rfind("  ");
    if (ending == std::string::npos || ending == 0 ||
        ImGui::CalcTextSize(text.c_str()).x <= ImGui::GetContentRegionAvail().x)
        return text;
    return text.substr(0, ending) + "\n      " + text.substr(ending + 2);
}

void draw_runs(ViewerState& state) {
    // Two lines: the sidebar is narrower than the hint on one.
    ImGui::TextUnformatted("Runs");
    ImGui::SameLine();
    ImGui::TextDisabled("click: show");
    ImGui::TextDisabled("right-click: compare with it");
    // A checked schedule that can hang: its one run is the file's order, which never ends.
    const bool hangs = marks_for(state.drop, state.trace.reader->path()) != nullptr;
    for (const traces::RunRecord& run : state.trace.runs) {
        const std::string text = fmt::format("{}{} {}", run.id == state.trace.run_id ? "> " : "  ",
                                             run.id == state.trace.compared_run_id ? "[vs]" : "",
                                             run_list_text(run, hangs));
        if (ImGui::Selectable(fmt::format("{}##run{}", fitted_run_line(text), run.id).c_str(),
                              run.id == state.trace.run_id))
            show_run(state, run.id);
        if (ImGui::IsItemHovered())  // the whole line, which a narrow sidebar cuts
            ImGui::SetTooltip("%s", text.c_str());
        if (ImGui::IsItemClicked(ImGuiMouseButton_Right))
            compare_with(state.trace, run.id == state.trace.compared_run_id ? 0 : run.id);
    }
}

void draw_details(ViewerState& state) {
    if (!state.trace.model || !state.timeline.selected) {
        ImGui::TextDisabled("click an action to see its details");
        return;
    }
    const TimelineModel& model = *state.trace.model;
    const TimelineAction& action = model.action(*state.timeline.selected);
    ImGui::TextUnformatted(model.label(action).data());
    ImGui::Text("rank %d, %s lane", state.timeline.selected->rank,
                state.timeline.selected->communication ? "communication" : "compute");
    if (!model.has_own_text(action))
        ImGui::Text("stage %d, microbatch %d", action.stage, action.microbatch);
    ImGui::TextWrapped("%s", action_step_text(state.trace, *state.timeline.selected).c_str());
    ImGui::Text("start %s", format_duration(action.start_ns).c_str());
    ImGui::Text("duration %s", format_duration(action.end_ns - action.start_ns).c_str());
    if (action.bytes > 0)
        ImGui::Text("bytes %s", format_bytes(action.bytes).c_str());
    if (const auto ends = model.pair_ends(action.pair_id)) {
        if (ends->send && ends->receive)
            ImGui::Text("pair %d: rank %d -> rank %d", action.pair_id, ends->send->rank,
                        ends->receive->rank);
        else
            ImGui::Text("pair %d: no matching %s (never ran)", action.pair_id,
                        ends->send ? "recv" : "send");
    }
}

bool has_step(const traces::RunRecord& run) {
    return run.status == traces::RunStatus::finished;
}

// `text` wrapped at its spaces only: ImGui's wrapping also breaks after a '.', which split
// figures ("2." / "009 ms"). A word wider than the sidebar stays whole on its own line.
void text_wrapped_at_spaces(const std::string& text) {
    const float width = ImGui::GetContentRegionAvail().x;
    std::string line;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t space = std::min(text.find(' ', at), text.size());
        const std::string word = text.substr(at, space - at);
        const std::string longer = line.empty() ? word : line + " " + word;
        if (!line.empty() && ImGui::CalcTextSize(longer.c_str()).x > width) {
            ImGui::TextUnformatted(line.c_str());
            line = "  " + word;  // a continued line is indented, as the busy lines are
        } else {
            line = longer;
        }
        at = space + 1;
    }
    if (!line.empty())
        ImGui::TextUnformatted(line.c_str());
}

// The step against the compared run, and `pipelens diff`'s split of the difference; each rank's
// busy time; then the actions whose durations differ most (a click selects one): all for the
// picked step against its match, or over every step.
void draw_comparison(ViewerState& state) {
    if (!state.trace.compared || !state.trace.model)
        return;
    const TimelineModel& shown = *state.trace.model;
    const std::optional<int> step = state.timeline.chosen_step;
    ImGui::Separator();
    text_wrapped_at_spaces(comparison_line(state.trace, step));
    // A run without a step (failed, unfinished) has nothing to split or set against the other's:
    // the line above says why, as `pipelens diff` refuses the pair, and nothing below contradicts
    // it with figures.
    if (!has_step(shown.run()) || !has_step(state.trace.compared->run()))
        return;
    for (const std::string& line : split_lines(state.trace, step))
        text_wrapped_at_spaces(line);
    for (const std::string& line :
         rank_busy_lines(shown, *state.trace.compared, state.trace.match, step))
        text_wrapped_at_spaces("  " + line);  // "63 ranks are busy as long in both runs"
    const std::vector<ActionDifference> largest = largest_differences(state.trace.match, step);
    if (largest.empty()) {
        ImGui::TextDisabled("no action's duration differs%s",
                            step ? fmt::format(" in step {}", *step).c_str() : "");
        return;
    }
    ImGui::TextUnformatted(step ? fmt::format("largest in step {} (click: select)", *step).c_str()
                                : "largest differences (click: select)");
    const bool name_step = !step && state.trace.summary.steps.size() > 1;
    for (std::size_t index = 0; index < largest.size(); ++index)
        if (ImGui::Selectable(fmt::format("  {}##difference{}",
                                          difference_text(shown, largest[index], name_step), index)
                                  .c_str()))
            select_location(state, largest[index].at);
}

// The colour key at the sidebar's foot (viewer_layout.hpp places it), drawn whatever the
// sidebar's content above it.
void draw_legend() {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float height = ImGui::GetIO().DisplaySize.y;
    const Point first = legend_swatch(0, height);
    draw->AddRectFilled({0, first.y - 6}, {kSidebarWidth, height},
                        ImGui::GetColorU32(ImGuiCol_WindowBg));
    for (int index = 0; index < kLegendSize; ++index) {
        const Point at = legend_swatch(index, height);
        const Rgb rgb = kLegend[index].colour;
        draw->AddRectFilled({at.x, at.y}, {at.x + kLegendSwatch, at.y + kLegendSwatch},
                            IM_COL32(rgb.r, rgb.g, rgb.b, 255));
        draw->AddText({at.x + kLegendSwatch + 5, at.y - 1}, IM_COL32(210, 210, 210, 255),
                      kLegend[index].name);
    }
}

// The step picker ("all steps" or one, which the timeline then fits) and each step's figures,
// for a run of several steps; and the live marker while the trace is being written.
void draw_steps(ViewerState& state) {
    if (state.trace.live) {
        ImGui::PushStyleColor(ImGuiCol_Text,
                              IM_COL32(kLiveMarker.r, kLiveMarker.g, kLiveMarker.b, 255));
        ImGui::TextWrapped("LIVE: the trace is still being written");
        ImGui::PopStyleColor();
    }
    const std::vector<RunStep>& steps = state.trace.summary.steps;
    if (steps.size() < 2)
        return;
    const std::optional<int> chosen = state.timeline.chosen_step;
    const std::string preview =
        chosen ? fmt::format("step {}", *chosen) : fmt::format("all {} steps", steps.size());
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##step", preview.c_str())) {
        if (ImGui::Selectable("all steps", !chosen))
            choose_step(state, std::nullopt);
        for (const RunStep& step : steps)
            if (ImGui::Selectable(fmt::format("step {}", step.step).c_str(), chosen == step.step))
                choose_step(state, step.step);
        ImGui::EndCombo();
    }
    const int ranks = static_cast<int>(state.trace.model->ranks().size());
    for (const RunStep& step : steps)
        ImGui::TextUnformatted(
            (state.trace.summary.last_step_incomplete && step.step == steps.back().step
                 ? incomplete_step_text(step, steps.front().action_count,
                                        state.trace.summary.writing)
                 : step_figures_text(step, ranks))
                .c_str());
}

void draw_sidebar_content(ViewerState& state) {
    draw_file_controls(state);
    if (!state.export_message.empty())
        ImGui::TextWrapped("%s", state.export_message.c_str());
    ImGui::TextDisabled("? for keys");
    // A damaged file stays said while it is open, whatever later choices put in `error`.
    const std::string damage =
        state.trace.damage.empty() ? "" : state.trace.damage + " (what is shown may lack rows)";
    for (const std::string* line : {&damage, static_cast<const std::string*>(&state.trace.error)})
        if (!line->empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
            ImGui::TextWrapped("%s", line->c_str());
            ImGui::PopStyleColor();
        }
    if (!state.trace.reader) {
        if (state.trace.model)  // the Simulate panel's simulation, kept in memory only
            ImGui::TextWrapped(
                "Showing the Simulate panel's simulation, in no trace yet: its \"Record into\" "
                "button writes it into one. To open a trace, type a path above or drop a file.");
        else
            ImGui::TextWrapped(
                "No trace open. Type a path above, drop a file on the window, or "
                "start with `pipelens-view TRACE.db`.");
        // A change the engine refused leaves the last simulation shown: say so here, whichever
        // bottom panel is in front (the Simulate panel names the field).
        if (state.trace.model && !state.workbench.error().empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
            ImGui::TextWrapped("Not simulated, the timeline shows the last simulation: %s",
                               state.workbench.error().c_str());
            ImGui::PopStyleColor();
        }
        return;
    }
    ImGui::Separator();
    draw_runs(state);
    ImGui::Separator();
    if (state.trace.model) {
        draw_steps(state);
        ImGui::Separator();
    }
    char search[128];
    std::snprintf(search, sizeof search, "%s", state.sidebar.search.c_str());
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputTextWithHint("##search", "find action, e.g. 2F5", search, sizeof search,
                                 ImGuiInputTextFlags_EnterReturnsTrue) &&
        !select_action(state, search))
        state.trace.error = fmt::format("no action '{}' in run {}", search, state.trace.run_id);
    state.sidebar.search = search;
    ImGui::Separator();
    draw_details(state);
    draw_comparison(state);
}

}  // namespace

void draw_sidebar(ViewerState& state) {
    // Above the colour key, in a region of its own that scrolls: a long comparison ran under the
    // key, out of reach.
    const float key_top = legend_swatch(0, ImGui::GetIO().DisplaySize.y).y - 6;
    const float height = std::max(40.0f, key_top - ImGui::GetCursorScreenPos().y - 4);
    if (ImGui::BeginChild("##sidebar_content", ImVec2(0, height), false))
        draw_sidebar_content(state);
    ImGui::EndChild();
    draw_legend();
}

}  // namespace pipelens::viewer
