// The timeline panel: ruler, per-rank gutter figures, compute and communication lanes with
// actions coloured by kind (merged below 3 px, culled by binary search), hatched bubbles with
// their cause on hover, send/recv arrows (for the hovered or selected action always, for every
// visible pair once zoomed in), the critical path (a strip over its actions, links between
// ranks), ghost bars of a compared run, zoom on the wheel around the cursor, pan by dragging,
// fit on double-click or F, C to show or hide the critical path.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

struct ViewerState;

struct TimelineViewState {
    TimelineGeometry geometry;
    float scroll_y = 0;   // ranks scrolled up out of view, in pixels (dragging scrolls)
    bool fitted = false;  // geometry set for the current run
    // The step picker's choice: every step (nullopt) or one; fitting (F, double-click, a new
    // choice) shows it whole (run_steps.hpp's fitted_step_geometry).
    std::optional<int> chosen_step;
    std::optional<ActionLocation> selected;
    std::optional<ActionLocation> hovered;
    // The hovered bubble's "waited on": a click selects it and brings it into view.
    std::optional<ActionLocation> hovered_bubble_target;
    bool show_critical_path = true;  // C toggles
    bool fit_ranks = true;           // R toggles: shrink rows to fit when ranks do not fit
    // The pooled image of every rank (rank_raster.hpp) as an OpenGL texture, remade when the
    // view, the window or the run changes: raster_textures[raster_current]. A remake fills the
    // other one, which no frame still being drawn uses, so the upload never waits for the
    // renderer to finish with it (with a software renderer, that wait was the whole frame's
    // rasterising: 50-130 ms).
    std::array<unsigned, 2> raster_textures{};
    int raster_current = 0;
    // The overview strip's busy share per column, for `overview_model` at `overview` size.
    std::vector<float> overview;
    const void* overview_model = nullptr;
    struct RasterKey {
        std::int64_t view_start = 0, view_end = 0;
        int width = 0, height = 0;
        const void* model = nullptr;
        bool critical_path = false;
        friend bool operator==(const RasterKey&, const RasterKey&) = default;
    } raster_key;                     // what the texture shows
    RasterKey raster_previous_frame;  // the view of the frame before: unchanged = settled
    double raster_made_at = 0;        // ImGui time of the last remake
};

// Centres the view, at its zoom, on [start_ns, end_ns] unless that is already in view.
void bring_into_view(TimelineViewState& view, std::int64_t start_ns, std::int64_t end_ns);

// Draws into the current ImGui window, which spans the whole timeline area.
void draw_timeline(ViewerState& state, float window_width, float area_bottom);

}  // namespace pipelens::viewer
