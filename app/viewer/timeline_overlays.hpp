// What the timeline draws over the ranks' lanes about the run as a whole: its status badge, the
// root-cause failure on the failing rank, and the critical path. Split from timeline_view.cpp
// (the lanes, arrows and interaction) so each file keeps one job.
#pragma once

#include <imgui.h>

#include "app/viewer/run_steps.hpp"
#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

struct ViewerState;
struct TraceSession;

inline ImU32 colour(Rgb rgb, int alpha = 255) {
    return IM_COL32(rgb.r, rgb.g, rgb.b, alpha);
}

// "finished", "failed" or "unfinished" in the header row above the rank labels.
// `hangs`: the run shown is a checked schedule whose check found a hang.
// `check_failed`: a finished run whose results failed a check (an accuracy or reference
// mismatch) reads "MISMATCH", not "finished", as `summary` says "check failed".
void draw_status_badge(ImDrawList* draw, const traces::RunRecord& run, bool hangs,
                       bool check_failed);

// The run's summary figures and where its critical path's time goes, right of the badge, on
// up to kHeaderLines lines (a failure's message cut short so that every figure shows); `hangs`:
// a checked schedule that can hang, which has no step, bubble or path figures.
void draw_header_figures(ImDrawList* draw, const TraceSession& session, float window_width,
                         bool hangs);

// A line where each step after the first starts, from the ruler through every rank, and the
// step's number in the ruler; nothing for a run of one step.
void draw_step_boundaries(ImDrawList* draw, const std::vector<RunStep>& steps,
                          const TimelineGeometry& geometry, float area_bottom);
// A failed run's interrupted actions, the root cause's and its consequences', each drawn in
// flight from its start to its error's moment.
void draw_interrupted_actions(ImDrawList* draw, const ViewerState& state);
// A failed run's root cause (the first of the session's errors, which are root cause first) on
// its rank: a bar at its moment across the rank's lanes, the rest of the rank tinted, its kind.
void draw_failure(ImDrawList* draw, const ViewerState& state, float area_bottom);

// The whole run under the header, each column tinted by the share of ranks busy there, the
// current view outlined; a click or drag in it centres the view there.
void draw_overview(ImDrawList* draw, ViewerState& state);

// A bar left of each straggling rank's label (rank_stragglers.hpp: flagged in the chosen step,
// or in any step), and, over a marked row's gutter, a tooltip with each flagged step's figures.
void draw_straggler_marks(ImDrawList* draw, const ViewerState& state, float area_bottom);

// The critical path: a strip over each of its actions in view and a line where it changes lane.
void draw_critical_path(ImDrawList* draw, const TimelineModel& model,
                        const TimelineGeometry& geometry, float area_bottom);

}  // namespace pipelens::viewer
