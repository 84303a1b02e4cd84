// What crosses panels: a new run clears every panel's choices; a chosen error or action moves
// the timeline to it.
#include "app/viewer/viewer_state.hpp"

#include <fstream>

#include <fmt/format.h>

#include "traces/svg_timeline.hpp"

namespace pipelens::viewer {
namespace {

// The choices made in the previous run mean nothing in this one; filters and the zoom stay. A
// failed run opens on its root cause: the Errors tab in front, its first error chosen; a
// sharding-only run on its decisions.
void reset_for_run(ViewerState& state) {
    state.timeline.selected.reset();
    state.timeline.hovered.reset();
    state.timeline.fitted = false;
    state.timeline.chosen_step.reset();
    analyse_step(state.trace, std::nullopt);
    state.events_panel.scrub = -1;
    state.events_panel.replayed_event = -1;
    state.errors_panel = {};
    state.sharding_panel = {};
    if (state.trace.model && state.trace.model->run().status == traces::RunStatus::failed &&
        !state.trace.errors.empty()) {
        state.panel_request = Panel::errors;
        choose_error(state, 0);
    } else if (state.trace.model && state.trace.model->action_count() == 0 &&
               !state.trace.sharding.empty()) {
        state.panel_request = Panel::sharding;  // a sharding-only run has no timeline
    }
}

}  // namespace

void open_trace(ViewerState& state, const std::filesystem::path& path,
                std::optional<std::int64_t> run_id) {
    if (open_trace(state.trace, path, run_id)) {
        state.shown_simulation = nullptr;
        reset_for_run(state);
    }
}

void show_simulated_run(ViewerState& state, const SimulatedRun& run) {
    if (state.trace.reader)
        state.workbench_trace = state.trace.reader->path();
    show_simulation(state.trace, run, state.workbench.take_model_copy(run));
    state.shown_simulation = run.model.get();
    // The cached images are keyed by the model's address, which a new simulation reuses.
    state.timeline.raster_key = {};
    state.timeline.overview_model = nullptr;
    reset_for_run(state);
}

void show_run(ViewerState& state, std::int64_t run_id) {
    if (show_run(state.trace, run_id))
        reset_for_run(state);
}

void choose_step(ViewerState& state, std::optional<int> step) {
    state.timeline.chosen_step = step;
    state.timeline.fitted = false;
    analyse_step(state.trace, step);  // the critical path and bubble causes follow the step
}

namespace {

bool still_there(const TimelineModel& model, const std::optional<ActionLocation>& at) {
    if (!at || at->rank < 0 || at->rank >= static_cast<int>(model.ranks().size()))
        return false;
    const RankTimeline& rank = model.ranks()[static_cast<std::size_t>(at->rank)];
    return at->index < (at->communication ? rank.communication : rank.compute).actions.size();
}

}  // namespace

bool refresh_live(ViewerState& state, double now_s) {
    // A view showing the whole run (as fitted) follows it as it grows; a zoomed one stays put.
    const TimeSpan old_span = fitted_span(state.trace);
    const TimelineGeometry& view = state.timeline.geometry;
    const bool whole_run = !state.timeline.chosen_step && view.view_start <= old_span.start_ns &&
                           view.view_end >= old_span.end_ns + old_span.length() / 50;
    if (!poll_trace(state.trace, now_s))
        return false;
    if (whole_run)
        state.timeline.fitted = false;
    state.timeline.hovered.reset();
    state.timeline.hovered_bubble_target.reset();
    if (!still_there(*state.trace.model, state.timeline.selected))
        state.timeline.selected.reset();
    return true;
}

bool select_action(ViewerState& state, const std::string& label) {
    if (!state.trace.model)
        return false;
    const auto found = find_action(state.trace, label, state.timeline.chosen_step);
    if (!found)
        return false;
    select_location(state, *found);
    return true;
}

void select_location(ViewerState& state, const ActionLocation& at) {
    state.timeline.selected = at;
    const TimelineAction& action = state.trace.model->action(at);
    bring_into_view(state.timeline, action.start_ns, action.end_ns);
}

bool choose_error(ViewerState& state, int index) {
    if (index < 0 || index >= static_cast<int>(state.trace.errors.size()))
        return false;
    state.errors_panel.chosen = index;
    const traces::ErrorRecord& error = state.trace.errors[index];
    if ((error.action.empty() || !select_action(state, error.action)) && error.time_ns)
        bring_into_view(state.timeline, *error.time_ns, *error.time_ns);
    return true;
}

void export_view_svg(ViewerState& state) {
    if (!state.trace.reader || !state.trace.model)
        return;
    const std::filesystem::path path =
        fmt::format("{}-run{}.svg", state.trace.reader->path().stem().string(), state.trace.run_id);
    try {
        traces::SvgTimelineOptions options;
        options.from_ns = std::max<std::int64_t>(0, state.timeline.geometry.view_start);
        options.to_ns = state.timeline.geometry.view_end;
        const std::string svg =
            traces::svg_timeline(*state.trace.reader, state.trace.run_id, options);
        std::ofstream out(path, std::ios::binary);
        out << svg;
        state.export_message = out ? fmt::format("wrote {}", path.string())
                                   : fmt::format("{}: cannot write the file", path.string());
    } catch (const std::exception& error) {
        state.export_message = fmt::format("{}: {}", path.string(), error.what());
    }
}

}  // namespace pipelens::viewer
