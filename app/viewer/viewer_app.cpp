// Frame layout: fixed rectangles, no window decorations, so every pixel is where
// viewer_layout.hpp says it is.
#include "app/viewer/viewer_app.hpp"

#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/drop_panel.hpp"
#include "app/viewer/memory_plot.hpp"
#include "app/viewer/start_screen.hpp"
#include "app/viewer/timeline_view.hpp"
#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {
namespace {

constexpr ImGuiWindowFlags kFixed = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                    ImGuiWindowFlags_NoSavedSettings |
                                    ImGuiWindowFlags_NoBringToFrontOnFocus;

// How an area is drawn. `scrollbar`: its content may be taller than the area (the panels' tabs),
// and a scrollbar shows that there is more below, where the wheel alone would leave it unseen.
// `background`: the area fills its own ground; otherwise the window was cleared to it beneath
// (plain_areas), which is what every area does while the window is as large as the layout.
struct AreaStyle {
    bool padded = true;
    bool scrollbar = false;
    bool background = false;
};

bool begin_area(const char* name, ImVec2 position, ImVec2 size, AreaStyle style) {
    ImGui::SetNextWindowPos(position);
    ImGui::SetNextWindowSize(size);
    if (!style.padded)
        ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {0, 0});
    ImGuiWindowFlags flags = kFixed | (style.padded ? 0 : ImGuiWindowFlags_NoScrollWithMouse) |
                             (style.background ? 0 : ImGuiWindowFlags_NoBackground);
    if (style.scrollbar)
        flags &= ~ImGuiWindowFlags_NoScrollbar;
    const bool open = ImGui::Begin(name, nullptr, flags);
    if (!style.padded)
        ImGui::PopStyleVar();
    return open;
}

// Where the sidebar and the panels are: drawn there by draw_frame, cleared there by plain_areas.
PlainArea sidebar_area(float height) {
    return {0, 0, kSidebarWidth, height, kAreaBackground};
}
// A run of sharding decisions alone has no timeline and no memory: the panels take their room,
// below the line that says so, and the Sharding panel shows its mesh and whole strategy table.
bool sharding_only(const ViewerState& state) {
    return state.trace.model && state.trace.model->action_count() == 0 &&
           !state.trace.sharding.empty() && !showing_comparison(state);
}

float panels_height(const ViewerState& state, float height) {
    return sharding_only(state) ? std::max(kPanelHeight, height - kShardingOnlyPanelsTop)
                                : kPanelHeight;
}

PlainArea panels_area(const ViewerState& state, float width, float height) {
    const float panels = panels_height(state, height);
    return {kSidebarWidth, height - panels, width - kSidebarWidth, panels, kAreaBackground};
}

// Keys that act on the whole window; none while a text box has the keyboard.
void handle_window_keys(ViewerState& state) {
    const ImGuiIO& io = ImGui::GetIO();
    if (io.WantTextInput)
        return;
    for (ImWchar typed : io.InputQueueCharacters) {
        if (typed == '?')
            state.show_help = !state.show_help;
        else if ((typed == 'p' || typed == 'P') && state.trace.reader)
            state.png_request = fmt::format(
                "{}-run{}.png", state.trace.reader->path().stem().string(), state.trace.run_id);
        else if (typed == 's' || typed == 'S')
            export_view_svg(state);
    }
}

void draw_help(ViewerState& state, float width, float height) {
    if (!state.show_help)
        return;
    ImGui::SetNextWindowPos({width / 2, height / 2}, ImGuiCond_Always, {0.5f, 0.5f});
    ImGui::Begin("Keyboard and mouse (? closes)", &state.show_help,
                 ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings);
    for (const char* line :
         {"wheel            zoom around the cursor",
          "Shift + wheel    scroll the ranks (or drag the scrollbar)",
          "Ctrl + wheel     pan in time (or drag)", "double-click, F  fit the whole run",
          "click            select an action; on a bubble: go to what it waited for",
          "C                show or hide the critical path",
          "R                fit every rank, or back to full rows",
          "P                save the window as PNG (working directory)",
          "S                save the current view as SVG", "?                this help"})
        ImGui::TextUnformatted(line);
    ImGui::End();
}

}  // namespace

void draw_frame(ViewerState& state, float width, float height) {
    apply_finished_drop(state);
    poll_analysis(state.trace);
    follow_workbench(state);
    refresh_live(state, ImGui::GetTime());
    handle_window_keys(state);
    const bool no_timeline = sharding_only(state);
    const float timeline_bottom =
        height - panels_height(state, height) - (no_timeline ? 0 : kMemoryHeight);
    // In a window shorter than the layout ImGui keeps the timeline at its minimum window height
    // (32 px by default), below kLanesTop, and it reaches under the areas below it: there each
    // area fills its own ground again, so that the one drawn later hides what it covers.
    const bool overlapping = timeline_bottom < kLanesTop;
    const PlainArea sidebar = sidebar_area(height);
    if (begin_area("sidebar", {sidebar.left, sidebar.top}, {sidebar.width, sidebar.height},
                   {.background = overlapping}))
        draw_sidebar(state);
    ImGui::End();

    ImGui::PushStyleColor(ImGuiCol_WindowBg,
                          IM_COL32(kBackground.r, kBackground.g, kBackground.b, 255));
    const AreaStyle plot{.padded = false, .background = overlapping};
    if (begin_area("timeline", {kSidebarWidth, 0}, {width - kSidebarWidth, timeline_bottom},
                   plot)) {
        if (showing_comparison(state))
            draw_comparison_view(state, width, timeline_bottom);
        else if (state.trace.model && state.trace.model->action_count() == 0 &&
                 !state.trace.sharding.empty())
            ImGui::GetWindowDrawList()->AddText(
                {kSidebarWidth + 20, 40}, IM_COL32(200, 200, 200, 255),
                "a sharding-only run: no pipeline timeline; its decisions are in the Sharding "
                "panel below");
        else if (state.trace.model)
            draw_timeline(state, width, timeline_bottom);
        else
            draw_start_screen(state, kSidebarWidth);
    }
    ImGui::End();
    if (!no_timeline) {
        if (begin_area("memory", {kSidebarWidth, timeline_bottom},
                       {width - kSidebarWidth, kMemoryHeight}, plot))
            draw_memory(state,
                        showing_comparison(state) ? comparison_axis(state, width, timeline_bottom)
                                                  : state.timeline.geometry,
                        timeline_bottom, timeline_bottom + kMemoryHeight);
        ImGui::End();
    }
    ImGui::PopStyleColor();

    const PlainArea panels = panels_area(state, width, height);
    if (begin_area("panels", {panels.left, panels.top}, {panels.width, panels.height},
                   {.scrollbar = true, .background = overlapping})) {
        if (ImGui::BeginTabBar("panels")) {
            const struct {
                const char* name;
                Panel panel;
            } tabs[] = {{"Events", Panel::events},     {"Errors", Panel::errors},
                        {"Ranks", Panel::ranks},       {"Sharding", Panel::sharding},
                        {"Simulate", Panel::simulate}, {"Compare", Panel::compare}};
            for (const auto& tab : tabs) {
                ImGuiTabItemFlags flags = 0;
                if (state.panel_request == tab.panel)
                    flags |= ImGuiTabItemFlags_SetSelected;
                if (ImGui::BeginTabItem(tab.name, nullptr, flags)) {
                    if (state.panel_request == tab.panel)
                        state.panel_request.reset();
                    if (tab.panel == Panel::events)
                        draw_events_panel(state);
                    else if (tab.panel == Panel::errors)
                        draw_errors_panel(state);
                    else if (tab.panel == Panel::ranks)
                        draw_ranks_panel(state);
                    else if (tab.panel == Panel::sharding)
                        draw_sharding_panel(state);
                    else if (tab.panel == Panel::simulate)
                        draw_simulate_panel(state);
                    else
                        draw_compare_panel(state);
                    ImGui::EndTabItem();
                }
            }
            ImGui::EndTabBar();
        }
    }
    ImGui::End();
    draw_help(state, width, height);
    draw_drop_panel(state, width, height);
}

std::vector<PlainArea> plain_areas(const ViewerState& state, float width, float height) {
    return {sidebar_area(height), panels_area(state, width, height)};
}

}  // namespace pipelens::viewer
