// The hang of a checked schedule over its timeline (hang_overlay.hpp).
#include "app/viewer/hang_overlay.hpp"

#include <cmath>

#include "app/viewer/hang_marks.hpp"
#include "app/viewer/timeline_overlays.hpp"
#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {
namespace {

struct Box {
    ImVec2 min, max;
    ImVec2 centre() const { return {(min.x + max.x) / 2, (min.y + max.y) / 2}; }
};

Box box_of(const TimelineModel& model, const TimelineGeometry& geometry, const ActionLocation& at) {
    const TimelineAction& action = model.action(at);
    const float top = geometry.lane_top(at.rank, at.communication);
    return {{geometry.x(action.start_ns), top},
            {geometry.x(action.end_ns), top + geometry.lane_height()}};
}

// From the waiting action's edge to the waited-for one's, with a head at the latter.
void draw_wait_arrow(ImDrawList* draw, const Box& from_box, const Box& to_box, Rgb rgb) {
    const ImVec2 from = from_box.centre(), to = to_box.centre();
    draw->AddLine(from, to, colour(rgb), 2.5f);
    const float angle = std::atan2(to.y - from.y, to.x - from.x);
    const ImVec2 back{to.x - 10 * std::cos(angle), to.y - 10 * std::sin(angle)};
    const ImVec2 side{-5 * std::sin(angle), 5 * std::cos(angle)};
    draw->AddTriangleFilled(to, {back.x + side.x, back.y + side.y},
                            {back.x - side.x, back.y - side.y}, colour(rgb));
}

}  // namespace

void draw_hang(ImDrawList* draw, const ViewerState& state, const TimelineGeometry& geometry,
               float area_bottom) {
    if (!state.trace.reader || !state.trace.model)
        return;
    const HangMarks* marks = marks_for(state.drop, state.trace.reader->path());
    if (marks == nullptr)
        return;
    const TimelineModel& model = *state.trace.model;
    // In the gutter, outside the lanes' clip the rest is drawn in.
    draw->PushClipRect({kSidebarWidth, kLanesTop}, {geometry.left, area_bottom});
    for (const int rank : marks->cycle_ranks)
        draw->AddRectFilled(
            {kCycleBarRight - kCycleBarWidth, geometry.lane_top(rank, false)},
            {kCycleBarRight, geometry.lane_top(rank, true) + geometry.lane_height()},
            colour(kWaitCycle));
    draw->PopClipRect();
    for (const HangWait& wait : marks->waits) {
        if (!wait.stuck)
            continue;
        const Rgb rgb = wait.in_cycle ? kWaitCycle : kErrorMarker;
        const Box stuck = box_of(model, geometry, *wait.stuck);
        draw->AddRect({stuck.min.x - 2, stuck.min.y - 2}, {stuck.max.x + 2, stuck.max.y + 2},
                      colour(rgb), 0, 0, 3);
        if (wait.needed)
            draw_wait_arrow(draw, stuck, box_of(model, geometry, *wait.needed), rgb);
        else
            draw->AddText({stuck.max.x + 6, stuck.min.y + 2}, colour(rgb),
                          ("waits for " + wait.needs + ", which no rank runs").c_str());
    }
    if (state.drop.hang) {
        const std::string text = state.drop.hang->text();
        const std::string first_line = text.substr(0, text.find('\n'));
        draw->AddText({geometry.left + 6, area_bottom - 20}, colour(kWaitCycle),
                      first_line.c_str());
    }
}

}  // namespace pipelens::viewer
