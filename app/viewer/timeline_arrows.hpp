// The send/recv arrows over the timeline's lanes: a pair's arrow from its SEND's start to its
// RECV's end, a dangling one where a failed run left a pair with one end, and every visible
// pair's at once when the view is zoomed in far enough to read them. Split from
// timeline_view.cpp (the lanes and interaction) so each file keeps one job.
//
// Invariants: an arrow never ends on an action that is not its pair's other end (a missing end
// points a short way toward the peer's rank instead); every pair's arrows are see-through
// (kEveryArrowAlpha), the focused one solid.
#pragma once

#include <cstddef>
#include <cstdint>

#include <imgui.h>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

// A recorded action's kind (its ActionKind's integer) is a SEND (action_facts.hpp's rule).
bool is_send(std::uint8_t kind);

// Whether any of `rank`'s row lies within the lanes: only the ranks in view are drawn, so a
// frame costs what is on screen.
inline bool rank_in_view(const TimelineGeometry& geometry, int rank, float area_bottom) {
    const float top = geometry.lane_top(rank, false);
    return top + kRankHeight > kLanesTop && top < area_bottom;
}

// The arrow of pair `pair_id`. `labelled`: a dangling arrow names what is missing (the first
// per rank in view, and the hovered or selected one: more would print over each other).
// `alpha`: every pair's arrows are drawn see-through, so the action names under them stay
// readable; the focused one is solid.
void draw_arrow(ImDrawList* draw, const TimelineModel& model, const TimelineGeometry& geometry,
                std::int32_t pair_id, bool labelled = true, int alpha = 255);

// Each visible send's arrow when `visible_communication` SENDs and RECVs leave each enough room
// (40 pixels), and a dangling one for each visible send whose receive never ran or receive whose
// send never ran (those mark a failure) unless hundreds are in view; none in rows shrunk to fit.
void draw_visible_arrows(ImDrawList* draw, const TimelineModel& model,
                         const TimelineGeometry& geometry, float area_bottom,
                         std::size_t visible_communication);

}  // namespace pipelens::viewer
