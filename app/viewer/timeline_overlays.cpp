// The timeline's overlays (timeline_overlays.hpp): all placed with viewer_layout.hpp's geometry,
// so screenshot tests find them where the layout says.
#include "app/viewer/timeline_overlays.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "app/viewer/rank_raster.hpp"
#include "app/viewer/rank_stragglers.hpp"
#include "app/viewer/viewer_state.hpp"
#include "engine/schedule/action.hpp"
#include "traces/root_cause.hpp"

namespace pipelens::viewer {

void draw_status_badge(ImDrawList* draw, const traces::RunRecord& run, bool hangs,
                       bool check_failed) {
    const auto [text, rgb] = [&]() -> std::pair<const char*, Rgb> {
        if (hangs)  // a checked schedule that deadlocks: its file's order, never run to the end
            return {"HANGS", kStatusFailed};
        switch (run.status) {
            case traces::RunStatus::finished:  // its results differ from the reference's
                return check_failed ? std::pair<const char*, Rgb>{"MISMATCH", kStatusFailed}
                                    : std::pair<const char*, Rgb>{"finished", kStatusFinished};
            case traces::RunStatus::failed:
                return {"FAILED", kStatusFailed};
            case traces::RunStatus::running:
                break;
        }
        return {"unfinished", kStatusUnfinished};
    }();
    const ImVec2 top_left{kBadgeLeft, kBadgeTop};
    draw->AddRectFilled(top_left, {kBadgeLeft + kBadgeWidth, kBadgeTop + kBadgeHeight}, colour(rgb),
                        3);
    const std::string label =
        hangs ? std::string("HANGS")
              : fmt::format("{} {}", run.kind == traces::RunKind::real ? "real" : "sim", text);
    draw->AddText({kBadgeLeft + 6, kBadgeTop + 2}, IM_COL32(10, 10, 10, 255), label.c_str());
}

void draw_overview(ImDrawList* draw, ViewerState& state) {
    const TimelineModel& model = *state.trace.model;
    TimelineViewState& view = state.timeline;
    TimelineGeometry& geometry = view.geometry;
    const int width = std::max(1, static_cast<int>(geometry.width));
    TimeSpan span = fitted_span(state.trace);
    span.end_ns = std::max(span.end_ns, span.start_ns + 1);
    if (view.overview_model != &model || static_cast<int>(view.overview.size()) != width) {
        view.overview = busy_share_by_column(model, span, width);
        view.overview_model = &model;
    }
    const float top = kHeaderHeight, bottom = kHeaderHeight + kOverviewHeight - 2;
    const Rgb idle = kBubbleFills[static_cast<int>(BubbleCause::waiting)];
    const Rgb busy = kActionColours[0];
    for (int column = 0; column < width; ++column) {
        const float share = view.overview[static_cast<std::size_t>(column)];
        const auto mix = [&](unsigned char from, unsigned char to) {
            return static_cast<int>(from + (to - from) * share);
        };
        const float x = geometry.left + static_cast<float>(column);
        draw->AddRectFilled(
            {x, top}, {x + 1, bottom},
            IM_COL32(mix(idle.r, busy.r), mix(idle.g, busy.g), mix(idle.b, busy.b), 255));
    }
    const auto x_of = [&](std::int64_t time) {
        return geometry.left + static_cast<float>(static_cast<double>(time - span.start_ns) /
                                                  static_cast<double>(span.length()) * width);
    };
    const float from = std::clamp(x_of(geometry.view_start), geometry.left, geometry.left + width);
    const float to = std::clamp(x_of(geometry.view_end), from + 2, geometry.left + width);
    draw->AddRect({from, top - 1}, {to, bottom + 1}, IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (ImGui::IsWindowHovered() && ImGui::IsMouseDown(ImGuiMouseButton_Left) &&
        ImGui::GetIO().MouseClickedPos[0].y >= top &&
        ImGui::GetIO().MouseClickedPos[0].y < bottom && mouse.x >= geometry.left) {
        const std::int64_t shown = geometry.view_end - geometry.view_start;
        const auto centre =
            span.start_ns + static_cast<std::int64_t>((mouse.x - geometry.left) / width *
                                                      static_cast<double>(span.length()));
        geometry.view_start = centre - shown / 2;
        geometry.view_end = geometry.view_start + shown;
    }
}

void draw_header_figures(ImDrawList* draw, const TraceSession& session, float window_width,
                         bool hangs) {
    const float left = kBadgeLeft + kBadgeWidth + 10;
    draw->PushClipRect({left, 0}, {window_width, kHeaderHeight}, true);
    float text_left = left;
    if (session.live) {
        draw->AddText({left, kBadgeTop + 2}, colour(kLiveMarker), "LIVE");
        text_left += ImGui::CalcTextSize("LIVE  ").x;
    }
    const std::vector<std::string> lines =
        fit_figures(header_figures(session, hangs), window_width - kRightMargin - text_left,
                    kHeaderLines, [](std::string_view text) {
                        return ImGui::CalcTextSize(text.data(), text.data() + text.size()).x;
                    });
    for (std::size_t line = 0; line < lines.size(); ++line)
        draw->AddText({text_left, kBadgeTop + 2 + static_cast<float>(line) * kHeaderLineHeight},
                      IM_COL32(215, 215, 215, 255), lines[line].c_str());
    draw->PopClipRect();
}

void draw_step_boundaries(ImDrawList* draw, const std::vector<RunStep>& steps,
                          const TimelineGeometry& geometry, float area_bottom) {
    draw->PushClipRect({geometry.left, kRulerTop}, {geometry.left + geometry.width, area_bottom},
                       false);
    for (std::size_t index = 1; index < steps.size(); ++index) {
        const float x = geometry.x(steps[index].start_ns);
        if (x < geometry.left - 1 || x > geometry.left + geometry.width + 1)
            continue;
        // Whole pixels, not an antialiased line: the pixel column holding the start and the
        // one before it, in the boundary's own colour.
        const float column = std::floor(x);
        draw->AddRectFilled({column - 1, kRulerTop}, {column + 1, area_bottom},
                            colour(kStepBoundary));
        // In the ruler's lower half, clear of its time labels; left of the line where the
        // view's right edge would cut it ("ste").
        const std::string label = fmt::format("step {}", steps[index].step);
        const float width = ImGui::CalcTextSize(label.c_str()).x;
        const float left = x + 4 + width > geometry.left + geometry.width ? x - 4 - width : x + 4;
        draw->AddText({left, kRulerTop + kRulerHeight / 2}, colour(kStepBoundary), label.c_str());
    }
    draw->PopClipRect();
}

void draw_straggler_marks(ImDrawList* draw, const ViewerState& state, float area_bottom) {
    const TimelineModel& model = *state.trace.model;
    const analysis::StragglerReport& report = model.stragglers();
    if (report.flagged.empty())
        return;
    const TimelineGeometry& geometry = state.timeline.geometry;
    const std::optional<int> step = state.timeline.chosen_step;
    const std::vector<bool> marked =
        marked_ranks(report, static_cast<int>(model.ranks().size()), step);
    const float row_height = geometry.compact ? geometry.lane_height() : 2 * kLaneHeight + kLaneGap;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    for (int rank = 0; rank < static_cast<int>(marked.size()); ++rank) {
        if (!marked[static_cast<std::size_t>(rank)])
            continue;
        const float top = geometry.lane_top(rank, false);
        if (top + row_height < kLanesTop || top > area_bottom)
            continue;
        draw->AddRectFilled({kStragglerMarkLeft, top},
                            {kStragglerMarkLeft + kStragglerMarkWidth, top + row_height},
                            colour(kStraggler));
        if (!ImGui::IsWindowHovered() || mouse.x < kSidebarWidth || mouse.x >= geometry.left ||
            mouse.y < std::max(top, kLanesTop) || mouse.y >= top + row_height)
            continue;
        ImGui::BeginTooltip();
        for (const analysis::RankStraggle& straggle : rank_straggles(report, rank, step))
            ImGui::TextColored(ImColor(colour(kStraggler)), "%s",
                               straggle_text(straggle, report.calibrated).c_str());
        ImGui::EndTooltip();
    }
}

namespace {

// An action a failure or a stop interrupted, from its start to that moment, in its kind's colour
// and outlined in the failure's: it never ended, so the trace has no row for it.
void draw_in_flight(ImDrawList* draw, const TimelineGeometry& geometry,
                    const traces::ErrorRecord& cause) {
    if (!cause.started_ns || cause.action.empty() || *cause.started_ns > *cause.time_ns)
        return;
    std::vector<Action> parts;
    Action action;
    try {
        action = parse_action(cause.action, parts);
    } catch (const ActionParseError&) {
        return;  // a damaged text: the bar still marks the moment
    }
    const float top = geometry.lane_top(cause.rank, uses_communication_stream(action.kind));
    const float left = geometry.x(*cause.started_ns);
    const float right = std::max(left + 2, geometry.x(*cause.time_ns));
    draw->AddRectFilled({left, top}, {right, top + geometry.lane_height()},
                        colour(palette::action_colour(static_cast<int>(action.kind))));
    draw->AddRect({left, top}, {right, top + geometry.lane_height()}, colour(kErrorMarker), 0, 0,
                  2);
    // At the start of a short bar; in the middle of a long one, clear of the "no matching recv"
    // a peer's send points at its start with (it covered the label there).
    const std::string label = cause.action + " (in flight)";
    const float width = ImGui::CalcTextSize(label.c_str()).x;
    if (right - left > width + 6) {
        const float x = right - left > 4 * width ? (left + right - width) / 2 : left + 3;
        draw->AddText({x, top + 2}, IM_COL32(15, 15, 15, 255), label.c_str());
    }
}

}  // namespace

void draw_interrupted_actions(ImDrawList* draw, const ViewerState& state) {
    const TimelineModel& model = *state.trace.model;
    if (model.run().status != traces::RunStatus::failed)
        return;
    // The root cause's and those stopped because of it: a rank stuck in a computation shows as
    // the long bar its peers timed out waiting for.
    for (const traces::ErrorRecord& error : state.trace.errors)
        if (error.rank >= 0 && error.rank < static_cast<int>(model.ranks().size()) && error.time_ns)
            draw_in_flight(draw, state.timeline.geometry, error);
}

namespace {

// A rank whose process died before it reported (its moment unseen, its actions unrecorded): its
// empty lanes looked like an idle rank's. They are tinted whole and say why they are empty.
void draw_unseen_death(ImDrawList* draw, const TimelineGeometry& geometry,
                       const traces::ErrorRecord& cause, float area_bottom) {
    const float top = geometry.lane_top(cause.rank, false);
    const float bottom = geometry.lane_top(cause.rank, true) + kLaneHeight;
    if (bottom < kLanesTop || top > area_bottom)
        return;
    draw->AddRectFilled({geometry.left, top}, {geometry.left + geometry.width, bottom},
                        colour(kErrorMarker, 40));
    // On the communication lane: the compute lane's top carries the peers' "no matching recv".
    const std::string& message = cause.message.empty() ? cause.kind : cause.message;
    const float width = ImGui::CalcTextSize(message.c_str()).x;
    const float text_top = geometry.lane_top(cause.rank, true) + 2;
    draw->AddRectFilled({geometry.left + 3, text_top - 1},
                        {geometry.left + 7 + width, text_top + ImGui::GetTextLineHeight() + 1},
                        colour(kBackground, 230));
    draw->AddText({geometry.left + 5, text_top}, colour(kErrorMarker), message.c_str());
}

}  // namespace

void draw_failure(ImDrawList* draw, const ViewerState& state, float area_bottom) {
    const TimelineModel& model = *state.trace.model;
    if (model.run().status != traces::RunStatus::failed || state.trace.errors.empty())
        return;
    const traces::ErrorRecord& cause = state.trace.errors.front();
    if (cause.rank < 0 || cause.rank >= static_cast<int>(model.ranks().size()))
        return;
    const TimelineGeometry& geometry = state.timeline.geometry;
    if (!cause.time_ns) {
        draw_unseen_death(draw, geometry, cause, area_bottom);
        return;
    }
    if (traces::consequence_level(cause.kind) == 2 || traces::consequence_level(cause.kind) < 0)
        return;  // an echo
    const float top = geometry.lane_top(cause.rank, false);
    const float bottom = geometry.lane_top(cause.rank, true) + kLaneHeight;
    if (bottom < kLanesTop || top > area_bottom)
        return;
    const float x = geometry.x(*cause.time_ns);
    draw->AddRectFilled({x, top}, {geometry.left + geometry.width, bottom},
                        colour(kErrorMarker, 40));
    draw->AddRectFilled({x - 1.5f, top - 2}, {x + 1.5f, bottom + 2}, colour(kErrorMarker));
    const std::string label =
        fmt::format("failed: {}{}{}", cause.kind, cause.action.empty() ? "" : " at ", cause.action);
    // On the communication lane (the compute lane may show the interrupted action's name), right
    // of the bar, or left of it where the view ends first.
    const float width = ImGui::CalcTextSize(label.c_str()).x;
    const float label_x = x + 5 + width < geometry.left + geometry.width
                              ? x + 5
                              : std::max(geometry.left, x - 5 - width);
    // On the timeline's own ground: over the lane's bars the red text was hard to read.
    const float label_top = geometry.lane_top(cause.rank, true) + 2;
    draw->AddRectFilled({label_x - 2, label_top - 1},
                        {label_x + width + 2, label_top + ImGui::GetTextLineHeight() + 1},
                        colour(kBackground, 230));
    draw->AddText({label_x, label_top}, colour(kErrorMarker), label.c_str());
}

// The critical path: a strip over the top of the part of each of its actions in view that is on
// it, and where it changes rank or lane a line at the pixel column it changes in. The path is in
// time order, so the part in view is found by binary search; a strip is drawn only where it adds
// a pixel to its lane, and the changes within one pixel column are drawn as one line spanning
// them, so a zoomed-out frame costs per pixel, not per link. Where the path holds more links
// than a line every few pixels could show apart, the lines would paint the lanes over: only the
// strips are drawn, until the view is zoomed in.
void draw_critical_path(ImDrawList* draw, const TimelineModel& model,
                        const TimelineGeometry& geometry, float area_bottom) {
    const std::vector<ActionLocation>& path = model.critical_path().actions;
    const auto& times = model.critical_path().times;
    if (path.empty() || times.size() != path.size())
        return;
    const auto first =
        std::lower_bound(times.begin(), times.end(), geometry.view_start,
                         [&](const auto& span, std::int64_t time) { return span.second < time; });
    const std::size_t begin = first == times.begin() ? 0 : (first - times.begin()) - 1;
    const auto last =
        std::upper_bound(first, times.end(), geometry.view_end,
                         [&](std::int64_t time, const auto& span) { return time < span.first; });
    constexpr float kPixelsPerLink = 4;
    const bool lines = static_cast<float>(last - first) * kPixelsPerLink <= geometry.width;
    std::vector<float> drawn_right(model.ranks().size() * 2, -1e9f);  // by rank and lane
    const float view_right = geometry.left + geometry.width;
    float column = -1e9f, column_top = 0, column_bottom = 0;
    const auto flush_column = [&] {
        if (column_bottom > column_top)
            draw->AddLine({column, column_top}, {column, column_bottom}, colour(kCriticalPath), 2);
    };
    std::optional<float> previous_y;
    for (std::size_t index = begin; index < path.size(); ++index) {
        const ActionLocation& at = path[index];
        const auto [start_ns, end_ns] = times[index];
        if (start_ns > geometry.view_end)
            break;
        const float top = geometry.lane_top(at.rank, at.communication);
        const float left = geometry.x(start_ns);
        const float right = std::min(view_right, std::max(left + 1, geometry.x(end_ns)));
        float& lane_right = drawn_right[static_cast<std::size_t>(at.rank) * 2 + at.communication];
        if (top + kLaneHeight > kLanesTop && top < area_bottom && right > lane_right + 0.5f) {
            draw->AddRectFilled({std::max(left, lane_right), top}, {right, top + kCriticalStrip},
                                colour(kCriticalPath));
            lane_right = right;
        }
        const float y = top + 2;
        if (lines && previous_y && *previous_y != y) {  // the path changes rank or lane here
            const float x = std::floor(left);
            if (x != column) {
                flush_column();
                column = x;
                column_top = column_bottom = *previous_y;
            }
            column_top = std::min({column_top, *previous_y, y});
            column_bottom = std::max({column_bottom, *previous_y, y});
        }
        previous_y = y;
    }
    flush_column();
}

}  // namespace pipelens::viewer
