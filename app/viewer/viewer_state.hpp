// Everything the viewer shows and the user has chosen, separate from how it is drawn: the data
// model (TraceSession, GUI-free, in pipelens_viewer_model) and each panel's own UI state, which
// its file declares (timeline_view.hpp, sidebar_panel.hpp, events_panel.hpp, errors_panel.hpp,
// ranks_panel.hpp, sharding_panel.hpp). The functions here are the few that cross panels: opening a
// trace or a run resets every panel's choices, and choosing an error or an action moves the
// timeline.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "app/viewer/compare_panel.hpp"
#include "app/viewer/drop_panel.hpp"
#include "app/viewer/errors_panel.hpp"
#include "app/viewer/events_panel.hpp"
#include "app/viewer/file_drop.hpp"
#include "app/viewer/ranks_panel.hpp"
#include "app/viewer/sharding_panel.hpp"
#include "app/viewer/sidebar_panel.hpp"
#include "app/viewer/simulate_panel.hpp"
#include "app/viewer/timeline_view.hpp"
#include "app/viewer/trace_session.hpp"
#include "app/viewer/workbench.hpp"

namespace pipelens::viewer {

enum class Panel { events, errors, ranks, sharding, simulate, compare };

struct ViewerState {
    TraceSession trace;
    TimelineViewState timeline;
    SidebarState sidebar;
    EventsPanelState events_panel;
    ErrorsPanelState errors_panel;
    RanksPanelState ranks_panel;
    ShardingPanelState sharding_panel;
    FileDrop drop;  // a dropped schedule or import being worked on, a checked schedule's hang
    DropPanelState drop_panel;
    // The experiment simulated in the app (workbench.hpp) and its two panels; the timeline shows
    // a simulation once it arrives (`shown_simulation`, until a trace is opened), and Record
    // writes into `workbench_trace`, the trace that was open when simulating began.
    Workbench workbench;
    SimulatePanelState simulate_panel;
    ComparePanelState compare_panel;
    std::uint64_t shown_generation = 0;
    const TimelineModel* shown_simulation = nullptr;
    std::filesystem::path workbench_trace;
    std::optional<Panel> panel_request;  // a tab to bring to the front (--panel)
    bool show_help = false;              // ? toggles the keyboard help
    // P asks for a PNG of the window, written once the frame is rendered (main.cpp); S writes
    // the view as SVG at once. What was written, or why not, is shown in the sidebar.
    std::optional<std::filesystem::path> png_request;
    std::string export_message;
};

// Writes the timeline's current view as SVG (the run's path and id name the file, in the
// working directory); sets export_message.
void export_view_svg(ViewerState& state);

// Opens `path` (the latest run, or `run_id`); on failure keeps the previous trace and sets
// `trace.error` to the reader's message.
void open_trace(ViewerState& state, const std::filesystem::path& path,
                std::optional<std::int64_t> run_id = std::nullopt);
void show_run(ViewerState& state, std::int64_t run_id);
// Shows a simulation of the workbench in the timeline, fitted, as a new run.
void show_simulated_run(ViewerState& state, const SimulatedRun& run);
// The step picker: shows every step (nullopt) or step k, fitted to it at the next frame, with
// the critical path and bubble causes of that step alone (analyse_step).
void choose_step(ViewerState& state, std::optional<int> step);
// Polls the open trace (poll_trace, at most every kTracePollSeconds of `now_s`) and, when the
// shown run grew, keeps the view on what it showed: a view of every step widens to the new end;
// a selection the reload no longer has is dropped. True when it reloaded.
bool refresh_live(ViewerState& state, double now_s);
// Selects the action with this text (e.g. "2F5") and centres the view on it; false if absent.
bool select_action(ViewerState& state, const std::string& label);
// Selects the action at `at` and centres the view on it when it is out of view.
void select_location(ViewerState& state, const ActionLocation& at);
// Chooses errors[index]: its action is selected, its moment marked and brought into view;
// false when there is no such error.
bool choose_error(ViewerState& state, int index);

}  // namespace pipelens::viewer
