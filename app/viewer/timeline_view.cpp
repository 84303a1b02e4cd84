// Timeline drawing and interaction. Everything is placed with viewer_layout.hpp's geometry, so
// a screenshot can be checked pixel by pixel against the model.
#include "app/viewer/timeline_view.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include <GL/gl.h>
#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/hang_overlay.hpp"
#include "app/viewer/rank_raster.hpp"
#include "app/viewer/timeline_arrows.hpp"
#include "app/viewer/timeline_overlays.hpp"
#include "app/viewer/viewer_state.hpp"
#include "engine/schedule/action.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

ImU32 action_colour(std::uint8_t kind) {
    return colour(kActionColours[std::min<std::size_t>(kind, std::size(kActionColours) - 1)]);
}

// A tick step of 1, 2 or 5 times a power of ten with ticks at least 90 px apart.
std::int64_t tick_step(double pixels_per_ns) {
    const double wanted = 90 / pixels_per_ns;
    double step = 1;
    while (step < wanted) {
        for (double factor : {2.0, 2.5, 2.0}) {  // 1, 2, 5, 10, ...
            if (step >= wanted)
                break;
            step *= factor;
        }
    }
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(step));
}

void draw_ruler(ImDrawList* draw, const TimelineGeometry& geometry) {
    const std::int64_t step = tick_step(geometry.pixels_per_ns());
    const std::int64_t first = (geometry.view_start / step) * step;
    for (std::int64_t tick = first; tick <= geometry.view_end; tick += step) {
        const float x = geometry.x(tick);
        if (x < geometry.left)
            continue;
        draw->AddLine({x, kLanesTop - 8}, {x, kLanesTop}, IM_COL32(180, 180, 180, 255));
        // A label the window's edge would cut ("16" of "160 ms") is left out; its tick stays.
        const std::string label = format_tick(tick, step);
        if (x + 3 + ImGui::CalcTextSize(label.c_str()).x <=
            geometry.left + geometry.width + kRightMargin)
            draw->AddText({x + 3, kRulerTop + 4}, IM_COL32(200, 200, 200, 255), label.c_str());
    }
}

void draw_bubbles(ImDrawList* draw, const RankTimeline& rank, const TimelineGeometry& geometry) {
    const float top = geometry.lane_top(rank.rank, false);
    const float bottom = top + kLaneHeight;
    const auto first = std::lower_bound(
        rank.bubbles.begin(), rank.bubbles.end(), geometry.view_start,
        [](const Bubble& bubble, std::int64_t time) { return bubble.end_ns <= time; });
    const auto pixel_ns = static_cast<std::int64_t>(1 / geometry.pixels_per_ns()) + 1;
    for (auto bubble = first; bubble != rank.bubbles.end() && bubble->start_ns < geometry.view_end;
         ++bubble) {
        const float left = std::max(geometry.left, geometry.x(bubble->start_ns));
        const float right = std::min(geometry.left + geometry.width, geometry.x(bubble->end_ns));
        if (right - left < 1) {
            // Invisible: jump to the first bubble a pixel further on.
            const std::int64_t next = bubble->start_ns + pixel_ns;
            bubble = std::prev(std::lower_bound(
                bubble, rank.bubbles.end(), next,
                [](const Bubble& item, std::int64_t time) { return item.start_ns < time; }));
            continue;
        }
        const auto cause = static_cast<std::size_t>(bubble->cause);
        draw->AddRectFilled({left, top}, {right, bottom}, colour(kBubbleFills[cause]));
        draw->PushClipRect({left, top}, {right, bottom}, true);
        for (float x = left - kLaneHeight; x < right; x += 6)
            draw->AddLine({x, bottom}, {x + kLaneHeight, top}, colour(kBubbleHatches[cause]));
        draw->PopClipRect();
    }
}

// What a block shows: the action's text; an OVERLAP_F_B's parts only ("0F9;7B5" for
// "(0F9;7B5)OVERLAP_F_B").
std::string_view short_label(const TimelineAction& action, std::string_view label) {
    if (action.kind != static_cast<std::uint8_t>(ActionKind::overlap_forward_backward) ||
        label.size() < 2 || label.front() != '(')
        return label;
    const std::size_t close = label.find(')');
    return close == std::string_view::npos ? label : label.substr(1, close - 1);
}

void draw_lane(ImDrawList* draw, const TimelineModel& model, const Lane& lane, float top,
               const TimelineGeometry& geometry, std::vector<DrawBlock>& blocks) {
    blocks.clear();
    const auto min_ns = static_cast<std::int64_t>(kMergeBelowPixels / geometry.pixels_per_ns());
    TimelineModel::visible_blocks(lane, geometry.view_start, geometry.view_end, min_ns, blocks);
    const float clip_left = geometry.left, clip_right = geometry.left + geometry.width;
    for (std::size_t index = 0; index < blocks.size(); ++index) {
        const DrawBlock& block = blocks[index];
        const std::optional<float> next_left =
            index + 1 < blocks.size() ? std::optional(geometry.x(blocks[index + 1].start_ns))
                                      : std::nullopt;
        const float left = std::max(clip_left, geometry.x(block.start_ns));
        const float right = std::min(clip_right, std::max(left + 1, geometry.x(block.end_ns)));
        constexpr float kNarrowestText = 14;  // no text below this: saves the text measuring
        // Adjacent actions keep a one-pixel gap once there is room for it.
        const float fill_right = right - left >= 4 ? right - 1 : right;
        if (block.count > 1) {  // in its dominant kind's colour, outlined
            draw->AddRectFilled({left, top}, {fill_right, top + kLaneHeight},
                                action_colour(block.kind));
            if (right - left < kNarrowestText)
                continue;
            draw->AddRect({left, top}, {fill_right, top + kLaneHeight}, colour(kMergedOutline));
            const std::string count = fmt::format("{}", block.count);
            if (right - left > ImGui::CalcTextSize(count.c_str()).x + 4)
                draw->AddText({left + 2, top + 2}, IM_COL32(20, 20, 20, 255), count.c_str());
            continue;
        }
        const TimelineAction& action = lane.actions[block.first];
        draw->AddRectFilled({left, top}, {fill_right, top + kLaneHeight},
                            action_colour(action.kind));
        if (right - left < kNarrowestText)
            continue;
        const ActionText text = model.label(action);
        const std::string_view label = short_label(action, text.view());
        const char* label_end = label.data() + label.size();
        // Text stops where the next block starts: a long posted receive under a send on the
        // communication lane does not print over it.
        const float room = (next_left ? std::min(right, *next_left) : right) - left;
        if (room > ImGui::CalcTextSize(label.data(), label_end).x + 4)
            draw->AddText({left + 2, top + 2}, IM_COL32(15, 15, 15, 255), label.data(), label_end);
    }
}

// Whether the run shown is a checked schedule that can hang: its file's order, which never ends,
// so it has no step, and no step, bubble or critical-path figures.
bool shows_hang(const ViewerState& state) {
    return state.trace.reader && marks_for(state.drop, state.trace.reader->path()) != nullptr;
}

// `hangs`: a checked schedule that can hang, whose busy and bubble shares are of no step.
void draw_gutter(ImDrawList* draw, const RankTimeline& rank, const RunSummary& summary,
                 const TimelineGeometry& geometry, bool hangs, std::optional<int> step) {
    const float top = geometry.lane_top(rank.rank, false);
    const float x = kSidebarWidth + 6;
    draw->AddText({x, top}, IM_COL32(230, 230, 230, 255),
                  fmt::format("rank {}", rank.rank).c_str());
    draw->AddText({x, top + 13}, IM_COL32(170, 170, 170, 255),
                  rank_shares_text(rank, summary, hangs, step).c_str());
    draw->AddText({x, top + 26}, IM_COL32(170, 170, 170, 255),
                  rank.figures.peak_memory_bytes > 0 || !rank.memory.empty()
                      ? fmt::format("peak {}", format_bytes(rank.figures.peak_memory_bytes)).c_str()
                      : "peak n/a");
}

// The vertical scrollbar in the right margin: where it is, from the share of the ranks in view.
struct ScrollbarThumb {
    float top = 0, bottom = 0;
    bool needed = false;
};

ScrollbarThumb scrollbar_thumb(const TimelineViewState& view, float area_bottom, float content) {
    const float visible = area_bottom - kLanesTop;
    if (content <= visible)
        return {};
    const float top = kLanesTop + visible * view.scroll_y / content;
    return {top, top + std::max(12.0f, visible * visible / content), true};
}

// Dragging in the scrollbar's column scrolls the ranks.
void drag_scrollbar(TimelineViewState& view, float window_width, float area_bottom, float content) {
    const ScrollbarThumb thumb = scrollbar_thumb(view, area_bottom, content);
    const ImGuiIO& io = ImGui::GetIO();
    if (!thumb.needed || io.MouseClickedPos[0].x < window_width - kRightMargin ||
        !ImGui::IsMouseDragging(ImGuiMouseButton_Left))
        return;
    const float visible = area_bottom - kLanesTop;
    view.scroll_y =
        std::clamp(view.scroll_y + io.MouseDelta.y * content / visible, 0.0f, content - visible);
}

void draw_scrollbar(ImDrawList* draw, const TimelineViewState& view, float window_width,
                    float area_bottom, float content) {
    const ScrollbarThumb thumb = scrollbar_thumb(view, area_bottom, content);
    if (!thumb.needed)
        return;
    const float left = window_width - kRightMargin + 3, right = window_width - 2;
    draw->AddRectFilled({left, kLanesTop}, {right, area_bottom}, IM_COL32(45, 45, 50, 255), 3);
    draw->AddRectFilled({left, thumb.top}, {right, thumb.bottom}, IM_COL32(140, 140, 150, 255), 3);
}

void handle_input(ViewerState& state, float window_width, float area_bottom) {
    TimelineGeometry& geometry = state.timeline.geometry;
    const ImGuiIO& io = ImGui::GetIO();
    const ImVec2 mouse = io.MousePos;
    const bool inside = mouse.x >= geometry.left && mouse.x <= geometry.left + geometry.width &&
                        mouse.y >= kRulerTop && mouse.y <= area_bottom && ImGui::IsWindowHovered();
    const float content =
        static_cast<float>(state.trace.model->ranks().size()) * geometry.rank_height;
    const float scroll_limit = std::max(0.0f, content - (area_bottom - kLanesTop));
    // The wheel zooms around the cursor; with Shift it scrolls the ranks (when they do not all
    // fit), with Ctrl it pans in time.
    if (inside && io.MouseWheel != 0 && io.KeyShift) {
        state.timeline.scroll_y =
            std::clamp(state.timeline.scroll_y - io.MouseWheel * kRankHeight, 0.0f, scroll_limit);
    } else if (inside && io.MouseWheel != 0 && io.KeyCtrl) {
        const auto shift = static_cast<std::int64_t>(io.MouseWheel * 60 / geometry.pixels_per_ns());
        geometry.view_start -= shift;
        geometry.view_end -= shift;
    } else if (inside && io.MouseWheel != 0) {
        const std::int64_t anchor = geometry.time_at(mouse.x);
        const double factor = std::pow(0.8, io.MouseWheel);
        const double span = std::max(10.0, (geometry.view_end - geometry.view_start) * factor);
        const double before = (anchor - geometry.view_start) /
                              static_cast<double>(geometry.view_end - geometry.view_start);
        geometry.view_start = anchor - static_cast<std::int64_t>(before * span);
        geometry.view_end = geometry.view_start + static_cast<std::int64_t>(span);
    }
    if (inside && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
        const auto shift = static_cast<std::int64_t>(io.MouseDelta.x / geometry.pixels_per_ns());
        geometry.view_start -= shift;
        geometry.view_end -= shift;
        state.timeline.scroll_y =
            std::clamp(state.timeline.scroll_y - io.MouseDelta.y, 0.0f, scroll_limit);
    }
    drag_scrollbar(state.timeline, window_width, area_bottom, content);
    if (ImGui::IsWindowFocused() && ImGui::IsKeyPressed('C'))
        state.timeline.show_critical_path = !state.timeline.show_critical_path;
    if (ImGui::IsWindowFocused() && ImGui::IsKeyPressed('R'))
        state.timeline.fit_ranks = !state.timeline.fit_ranks;
    if ((inside && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) ||
        (ImGui::IsWindowFocused() && ImGui::IsKeyPressed('F')))
        geometry = fitted_step_geometry(window_width, state.trace.summary.steps,
                                        state.timeline.chosen_step, fitted_span(state.trace));
    if (inside && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
        io.MouseDragMaxDistanceSqr[0] < 9) {
        state.timeline.selected = state.timeline.hovered;
        if (!state.timeline.hovered && state.timeline.hovered_bubble_target) {
            state.timeline.selected = state.timeline.hovered_bubble_target;
            const TimelineAction& target = state.trace.model->action(*state.timeline.selected);
            bring_into_view(state.timeline, target.start_ns, target.end_ns);
        }
    }
}

void hover_and_tooltip(ViewerState& state) {
    const TimelineModel& model = *state.trace.model;
    const TimelineGeometry& geometry = state.timeline.geometry;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    state.timeline.hovered.reset();
    state.timeline.hovered_bubble_target.reset();
    if (!ImGui::IsWindowHovered() || mouse.x < geometry.left)
        return;
    const std::int64_t time = geometry.time_at(mouse.x);
    for (const RankTimeline& rank : model.ranks())
        for (bool communication : {false, true}) {
            if (communication && geometry.compact)
                continue;
            const float top = geometry.lane_top(rank.rank, communication);
            if (mouse.y < top || mouse.y >= top + geometry.lane_height())
                continue;
            const Lane& lane = communication ? rank.communication : rank.compute;
            if (const auto index = model.action_at(lane, time)) {
                state.timeline.hovered = ActionLocation{rank.rank, communication, *index};
                const TimelineAction& action = lane.actions[*index];
                ImGui::BeginTooltip();
                if (action.kind == static_cast<std::uint8_t>(ActionKind::overlap_forward_backward))
                    ImGui::Text("%s  (rank %d: F and B of two stages, run as one action)",
                                model.label(action).data(), rank.rank);
                else if (model.has_own_text(action))
                    ImGui::Text("%s  (rank %d)", model.label(action).data(), rank.rank);
                else
                    ImGui::Text("%s  (rank %d, stage %d, microbatch %d)",
                                model.label(action).data(), rank.rank, action.stage,
                                action.microbatch);
                ImGui::Text("start %s  duration %s", format_duration(action.start_ns).c_str(),
                            format_duration(action.end_ns - action.start_ns).c_str());
                if (action.bytes > 0)
                    ImGui::Text("%s", format_bytes(action.bytes).c_str());
                if (action.on_critical_path && !shows_hang(state))
                    ImGui::TextColored(ImColor(colour(kCriticalPath)), "on the critical path");
                if (const auto ends = model.pair_ends(action.pair_id)) {
                    const bool sends = is_send(action.kind);
                    const bool matched = sends ? ends->receive.has_value() : ends->send.has_value();
                    ImGui::Text("%s rank %d%s", sends ? "to" : "from",
                                sends ? ends->receive_rank : ends->send_rank,
                                matched ? ""
                                : sends ? ": no matching recv ran"
                                        : ": no matching send ran");
                }
                if (state.trace.compared && action.label < state.trace.match.durations.size() &&
                    state.trace.match.durations[action.label] >= 0) {
                    const std::int64_t ghost = state.trace.match.durations[action.label];
                    ImGui::Text("run %lld: %s (%+.1f%%)",
                                static_cast<long long>(state.trace.compared_run_id),
                                format_duration(ghost).c_str(),
                                100.0 * ((action.end_ns - action.start_ns) - ghost) /
                                    std::max<std::int64_t>(1, ghost));
                }
                ImGui::EndTooltip();
                return;
            }
            if (communication)
                continue;
            const auto bubble = std::upper_bound(
                rank.bubbles.begin(), rank.bubbles.end(), time,
                [](std::int64_t value, const Bubble& item) { return value < item.end_ns; });
            if (bubble != rank.bubbles.end() && bubble->start_ns <= time) {
                ImGui::BeginTooltip();
                ImGui::Text("bubble %s on rank %d: %s",
                            format_duration(bubble->end_ns - bubble->start_ns).c_str(), rank.rank,
                            model.describe(rank, *bubble).c_str());
                if (bubble->waited_on) {
                    state.timeline.hovered_bubble_target = bubble->waited_on;
                    ImGui::Text("click: go to %s on rank %d, what it waited for last",
                                model.label(model.action(*bubble->waited_on)).data(),
                                bubble->waited_on->rank);
                }
                ImGui::EndTooltip();
                return;
            }
        }
}

// The compared run's outlines, on every step of the shown run (step_match.hpp), in its rows: only
// for ranks the shown run has (a compared run's extra ranks have no row to sit in), at the rows'
// own height, and not at all in rows too thin to outline (hundreds of full-height outlines once
// washed the lanes white).
void draw_ghosts(ImDrawList* draw, const std::vector<GhostRank>& ghosts, std::size_t shown_ranks,
                 const TimelineGeometry& geometry, float area_bottom) {
    constexpr float kThinnestOutlinedRow = 6;
    if (geometry.lane_height() < kThinnestOutlinedRow)
        return;
    std::vector<DrawBlock> blocks;
    const auto min_ns = static_cast<std::int64_t>(kMergeBelowPixels / geometry.pixels_per_ns());
    const float height = geometry.lane_height();
    for (std::size_t index = 0; index < std::min(ghosts.size(), shown_ranks); ++index) {
        const int rank = static_cast<int>(index);
        if (!rank_in_view(geometry, rank, area_bottom))
            continue;
        for (bool communication : {false, true}) {
            if (communication && geometry.compact)  // fitted rows show the compute lane only
                continue;
            blocks.clear();
            const Lane& lane = communication ? ghosts[index].communication : ghosts[index].compute;
            TimelineModel::visible_blocks(lane, geometry.view_start, geometry.view_end, min_ns,
                                          blocks);
            const float top = geometry.lane_top(rank, communication);
            for (const DrawBlock& block : blocks) {
                const float left = std::max(geometry.left, geometry.x(block.start_ns));
                const float right = geometry.x(block.end_ns);
                // A transfer a few pixels long outlines as a bracket, under every lane of a run
                // of posted receives: noise, not a place to compare.
                if (communication && right - left < 3)
                    continue;
                draw->AddRect({left, top + 1}, {right, top + height - 1},
                              IM_COL32(255, 255, 255, 110));
            }
        }
    }
}

// The chosen event's moment: the timeline up to it tinted, a line at it; an event before the
// view (every set-up call of a real run is before the step) is named at the view's left edge.
void draw_event_moment(ImDrawList* draw, const ViewerState& state, float area_bottom) {
    if (state.events_panel.scrub < 0 ||
        state.events_panel.scrub >= static_cast<int>(state.trace.events.size()))
        return;
    const traces::EventRecord& event = state.trace.events[state.events_panel.scrub];
    if (!event.time_ns)
        return;
    const TimelineGeometry& geometry = state.timeline.geometry;
    const float right_edge = geometry.left + geometry.width;
    if (*event.time_ns < geometry.view_start) {
        draw->AddRectFilled({geometry.left, kLanesTop}, {geometry.left + 3, area_bottom},
                            colour(kChangedField));
        const std::string text =
            fmt::format("< r{} #{} {}: {} before {}", event.rank, event.sequence, event.name,
                        format_duration(geometry.view_start - *event.time_ns),
                        geometry.view_start == 0 ? "the step" : "the view");
        draw->AddText({geometry.left + 8, area_bottom - 18}, colour(kChangedField), text.c_str());
        return;
    }
    const float x = std::min(right_edge, geometry.x(*event.time_ns));
    draw->AddRectFilled({geometry.left, kLanesTop}, {x, area_bottom}, colour(kChangedField, 28));
    if (x < right_edge)
        draw->AddLine({x, kLanesTop}, {x, area_bottom}, colour(kChangedField), 2);
}

// The gutter, bubbles and lanes of every rank in view; returns the communication actions drawn.
std::size_t draw_rank_rows(ImDrawList* draw, const TimelineModel& model, const RunSummary& summary,
                           const TimelineGeometry& geometry, float area_bottom, bool hangs,
                           std::optional<int> step) {
    std::vector<DrawBlock> blocks;
    std::size_t communication = 0;
    for (const RankTimeline& rank : model.ranks()) {
        if (!rank_in_view(geometry, rank.rank, area_bottom))
            continue;
        draw_gutter(draw, rank, summary, geometry, hangs, step);
        draw_bubbles(draw, rank, geometry);
        draw_lane(draw, model, rank.compute, geometry.lane_top(rank.rank, false), geometry, blocks);
        draw_lane(draw, model, rank.communication, geometry.lane_top(rank.rank, true), geometry,
                  blocks);
        for (const DrawBlock& block : blocks)
            communication += block.count;
    }
    return communication;
}

// The pooled image's colours, by raster code, as OpenGL bytes.
std::array<std::array<unsigned char, 4>, 256> raster_palette() {
    std::array<std::array<unsigned char, 4>, 256> colours{};
    for (int code = 0; code < 256; ++code) {
        const Rgb rgb = raster_colour(static_cast<std::uint8_t>(code));
        colours[static_cast<std::size_t>(code)] = {rgb.r, rgb.g, rgb.b, 255};
    }
    return colours;
}

// Remakes the rows' texture when the view, the window or the run changed since the last one.
// While the view moves (a drag, the wheel), it is remade at most every kRasterInterval, and the
// last image is drawn where its own time range now falls in between, so panning stays smooth
// at 1,024 ranks (a remake costs tens of ms there).
constexpr double kRasterInterval = 0.12;  // seconds

// `path_shown`: whether the critical path is drawn (its strips are in the image).
void update_raster(TimelineViewState& view, const TimelineModel& model, int width, int height,
                   bool path_shown) {
    const TimelineViewState::RasterKey key{view.geometry.view_start,
                                           view.geometry.view_end,
                                           width,
                                           height,
                                           &model,
                                           path_shown && !model.critical_path().actions.empty()};
    const bool same_frame_shape =
        view.raster_key.width == width && view.raster_key.height == height &&
        view.raster_key.model == &model && view.raster_key.critical_path == key.critical_path;
    const bool moving =
        view.raster_key.view_start != key.view_start || view.raster_key.view_end != key.view_end;
    const bool settled = key == view.raster_previous_frame;
    view.raster_previous_frame = key;
    const unsigned shown = view.raster_textures[static_cast<std::size_t>(view.raster_current)];
    if (shown != 0 && key == view.raster_key)
        return;
    if (shown != 0 && same_frame_shape && moving && !settled &&
        ImGui::GetTime() - view.raster_made_at < kRasterInterval)
        return;  // drawn stretched from its own time range until the view settles
    view.raster_made_at = ImGui::GetTime();
    RankRaster raster = rank_raster(model, key.view_start, key.view_end, key.width, key.height);
    if (key.critical_path)  // in the image: at 1,024 ranks it is thousands of strips a frame
        add_critical_path(raster, model, key.view_start, key.view_end);
    static const auto colours = raster_palette();
    std::vector<unsigned char> pixels(raster.codes.size() * 4);
    for (std::size_t index = 0; index < raster.codes.size(); ++index)
        std::copy_n(colours[raster.codes[index]].data(), 4, pixels.data() + index * 4);
    view.raster_current = 1 - view.raster_current;
    unsigned& texture = view.raster_textures[static_cast<std::size_t>(view.raster_current)];
    if (texture == 0)
        glGenTextures(1, &texture);
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, raster.width, raster.height, 0, GL_RGBA,
                 GL_UNSIGNED_BYTE, pixels.data());
    view.raster_key = key;
}

// Rows shrunk to fit: every rank's compute lane pooled into one image (a bubble on any rank of a
// pixel row shows), rank labels every few rows, as many as there is room for.
std::size_t draw_compact_rows(ImDrawList* draw, TimelineViewState& view, const TimelineModel& model,
                              float area_bottom, bool path_shown) {
    const TimelineGeometry& geometry = view.geometry;
    const int width = static_cast<int>(geometry.width);
    const int height = static_cast<int>(area_bottom - kLanesTop);
    update_raster(view, model, width, height, path_shown);
    // The image covers its own time range: where the view has moved since, it lands shifted.
    draw->PushClipRect({geometry.left, kLanesTop},
                       {geometry.left + static_cast<float>(width), area_bottom}, true);
    const unsigned texture = view.raster_textures[static_cast<std::size_t>(view.raster_current)];
    draw->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(texture)),
                   {geometry.x(view.raster_key.view_start), kLanesTop},
                   {geometry.x(view.raster_key.view_end), kLanesTop + static_cast<float>(height)});
    draw->PopClipRect();
    int every = 1;  // label every 1, 2, 5, 10, 20, 50, ... ranks, 14 px apart at least
    for (int step : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000})
        if ((every = step) * geometry.rank_height >= 14)
            break;
    for (std::size_t rank = 0; rank < model.ranks().size(); rank += static_cast<std::size_t>(every))
        draw->AddText({kSidebarWidth + 6, geometry.lane_top(static_cast<int>(rank), false) - 1},
                      IM_COL32(200, 200, 200, 255), fmt::format("rank {}", rank).c_str());
    return std::numeric_limits<std::size_t>::max();  // no arrows: too many to read
}

// What the lanes say of a run that recorded no action: a failed run ended before its first one.
std::string no_actions_text(const traces::RunRecord& run) {
    if (run.status == traces::RunStatus::failed)
        return "nothing recorded: this run failed before any action ended";
    return "nothing recorded: this run has no actions";
}

}  // namespace

void draw_timeline(ViewerState& state, float window_width, float area_bottom) {
    if (!state.trace.model)
        return;
    if (!state.timeline.fitted) {
        state.timeline.geometry =
            fitted_step_geometry(window_width, state.trace.summary.steps,
                                 state.timeline.chosen_step, fitted_span(state.trace));
        state.timeline.fitted = true;
    }
    TimelineGeometry& layout = state.timeline.geometry;
    layout.left = kSidebarWidth + kGutterWidth;
    layout.width = std::max(1.0f, window_width - layout.left - kRightMargin);
    const float rows_height = area_bottom - kLanesTop;
    const auto rank_count = static_cast<float>(state.trace.model->ranks().size());
    layout.compact = state.timeline.fit_ranks && rank_count * kRankHeight > rows_height;
    layout.rank_height = layout.compact ? rows_height / rank_count : kRankHeight;
    if (layout.compact)
        state.timeline.scroll_y = 0;
    handle_input(state, window_width, area_bottom);
    layout.top = kLanesTop - state.timeline.scroll_y;
    const TimelineModel& model = *state.trace.model;
    const TimelineGeometry& geometry = state.timeline.geometry;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw_ruler(draw, geometry);
    const bool hangs = shows_hang(state);
    const bool path_shown = state.timeline.show_critical_path && !hangs;
    draw_status_badge(draw, model.run(), hangs, !state.trace.summary.outcome.findings.empty());
    draw_header_figures(draw, state.trace, window_width, hangs);
    draw_overview(draw, state);
    if (geometry.compact)  // in the ruler row's gutter, clear of the rank labels
        draw->AddText({kSidebarWidth + 6, kRulerTop + 4}, IM_COL32(150, 150, 150, 255),
                      fmt::format("{} ranks (R: full rows)", model.ranks().size()).c_str());
    draw->PushClipRect({kSidebarWidth, kLanesTop}, {window_width, area_bottom}, true);
    const std::size_t visible_communication =
        geometry.compact ? draw_compact_rows(draw, state.timeline, model, area_bottom, path_shown)
                         : draw_rank_rows(draw, model, state.trace.summary, geometry, area_bottom,
                                          hangs, state.timeline.chosen_step);
    if (model.action_count() == 0)  // blank rows would read as a drawing fault
        draw->AddText({geometry.left + 6, kLanesTop + 4}, IM_COL32(150, 150, 150, 255),
                      no_actions_text(model.run()).c_str());
    draw_straggler_marks(draw, state, area_bottom);
    // Everything after the rows stays within the lanes: nothing crosses the rank labels.
    draw->PushClipRect({geometry.left, kLanesTop}, {geometry.left + geometry.width, area_bottom},
                       true);
    if (state.trace.compared)
        draw_ghosts(draw, state.trace.match.ghosts, model.ranks().size(), geometry, area_bottom);
    // Under the arrows: a send's "no matching recv" points at the peer's in-flight bar.
    draw_interrupted_actions(draw, state);
    draw_visible_arrows(draw, model, geometry, area_bottom, visible_communication);
    // Over the arrows: an arrow crossing the failing rank must not cut its failure bar.
    draw_failure(draw, state, area_bottom);
    // Over the arrows: the path is what matters most (fitted rows have it in their image).
    if (path_shown && !geometry.compact)
        draw_critical_path(draw, model, geometry, area_bottom);
    draw_step_boundaries(draw, state.trace.summary.steps, geometry, area_bottom);
    draw_event_moment(draw, state, area_bottom);
    draw_hang(draw, state, geometry, area_bottom);
    // The chosen error's moment, across every rank.
    if (state.errors_panel.chosen >= 0 &&
        state.errors_panel.chosen < static_cast<int>(state.trace.errors.size()))
        if (const auto time = state.trace.errors[state.errors_panel.chosen].time_ns) {
            const float x = geometry.x(*time);
            if (x >= geometry.left && x <= geometry.left + geometry.width)
                draw->AddLine({x, kLanesTop}, {x, area_bottom}, colour(kErrorMarker), 2);
        }
    hover_and_tooltip(state);
    for (const auto& focus : {state.timeline.selected, state.timeline.hovered}) {
        if (!focus)
            continue;
        const TimelineAction& action = model.action(*focus);
        const float top = geometry.lane_top(focus->rank, focus->communication);
        draw->AddRect({geometry.x(action.start_ns) - 1, top - 1},
                      {geometry.x(action.end_ns) + 1, top + kLaneHeight + 1}, colour(kSelection), 0,
                      0, 2);
        if (action.pair_id >= 0)
            draw_arrow(draw, model, geometry, action.pair_id);
    }
    draw->PopClipRect();
    draw->PopClipRect();
    draw_scrollbar(draw, state.timeline, window_width, area_bottom,
                   static_cast<float>(model.ranks().size()) * geometry.rank_height);
}

void bring_into_view(TimelineViewState& view, std::int64_t start_ns, std::int64_t end_ns) {
    const std::int64_t span = view.geometry.view_end - view.geometry.view_start;
    if (start_ns < view.geometry.view_start || end_ns > view.geometry.view_end) {
        view.geometry.view_start = (start_ns + end_ns) / 2 - span / 2;
        view.geometry.view_end = view.geometry.view_start + span;
    }
}

}  // namespace pipelens::viewer
