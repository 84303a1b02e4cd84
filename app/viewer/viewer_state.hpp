// Everything the viewer shows and the user has chosen, separate from how it is drawn: the open
// trace (through traces/ only), its runs, the run shown and the one compared with it, the
// visible time range, the selected and hovered action, and each panel's rows. A bad file leaves
// an error message here and the app running.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/viewer/recent_files.hpp"
#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

enum class Panel { events, errors, sharding };

// A line of the Events panel's replayed state: "field: value", or a heading.
struct ReplayedLine {
    std::string text;
    bool changed = false;  // drawn in kChangedField: the chosen event changed it
};

// A subdirectory or .db file in the open dialog.
struct BrowseEntry {
    std::filesystem::path path;
    std::string name;  // as shown: "runs/" or "trace.db"
    bool directory = false;
};

struct ViewerState {
    std::unique_ptr<traces::TraceReader> reader;
    std::vector<traces::RunRecord> runs;
    std::optional<TimelineModel> model;
    std::optional<TimelineModel> compared;  // ghost bars
    // Matched once per comparison: for each action of `model` (by its label id) the duration
    // of the compared run's action with the same text, -1 when it has none; and the compute
    // actions whose durations differ most.
    std::vector<std::int64_t> compared_durations;
    struct Difference {
        std::string label;
        std::int64_t delta_ns = 0;
    };
    std::vector<Difference> largest_differences;
    std::int64_t run_id = 0;
    std::int64_t compared_run_id = 0;
    std::string error;  // shown in the window; empty when all is well

    TimelineGeometry geometry;
    float scroll_y = 0;   // ranks scrolled up out of view, in pixels (dragging scrolls)
    bool fitted = false;  // geometry set for the current run
    std::optional<ActionLocation> selected;
    std::optional<ActionLocation> hovered;
    std::string search;
    std::optional<Panel> panel_request;  // a tab to bring to the front (--panel)

    std::vector<traces::EventRecord> events;
    std::vector<traces::ErrorRecord> errors;
    std::vector<traces::ShardingRecord> sharding;
    // Each decision's strategies, parsed once per run rather than every frame (discarded when
    // the JSON is malformed).
    std::vector<nlohmann::json> sharding_strategies;
    int event_scrub = -1;                      // index into events; -1: none replayed
    int replayed_event = -1;                   // the event replayed_lines belong to
    std::vector<ReplayedLine> replayed_lines;  // the state after that event
    int chosen_error = -1;                     // index into errors; its moment is marked
    int event_rank_filter = -2;                // -2: all ranks
    std::string event_name_filter;
    int sharding_selected = 0;
    int sharding_tensor = -1;  // the tensor drawn on the mesh: -1 the output, else an input
    bool sharding_scroll_pending = true;  // scroll the strategy table to the chosen row
    RecentFiles recent_files;  // kept only when a person runs the viewer
    std::string open_path_input;
    std::string browse_directory;  // where the open dialog is
    std::string browse_listed;     // the directory browse_entries were listed from
    std::vector<BrowseEntry> browse_entries;
    std::string browse_error;
};

// Opens `path` (the latest run, or `run_id`); on failure keeps the previous trace and sets
// `error` to the reader's message.
void open_trace(ViewerState& state, const std::filesystem::path& path,
                std::optional<std::int64_t> run_id = std::nullopt);
void show_run(ViewerState& state, std::int64_t run_id);
void compare_with(ViewerState& state, std::int64_t run_id);  // 0: no comparison
// Selects the action with this text (e.g. "2F5") and centres the view on it; false if absent.
bool select_action(ViewerState& state, const std::string& label);
// Chooses errors[index]: its action is selected, its moment marked and brought into view;
// false when there is no such error.
bool choose_error(ViewerState& state, int index);
// Centres the view, at its zoom, on [start_ns, end_ns] unless that is already in view.
void bring_into_view(ViewerState& state, std::int64_t start_ns, std::int64_t end_ns);

}  // namespace pipelens::viewer
