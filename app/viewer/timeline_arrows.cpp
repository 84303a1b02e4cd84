// The send/recv arrows (timeline_arrows.hpp).
#include "app/viewer/timeline_arrows.hpp"

#include <cmath>
#include <vector>

#include "app/viewer/timeline_overlays.hpp"
#include "engine/schedule/action.hpp"
#include "engine/schedule/action_facts.hpp"

namespace pipelens::viewer {
namespace {

// How many pixels of the view each visible SEND or RECV needs before every pair's arrow is drawn:
// at a fitted view of a few steps, hundreds of arrows hid the bars and their names.
constexpr float kArrowSpacing = 40;
constexpr std::size_t kMostArrowsLookedAt = 400;

void draw_arrow_head(ImDrawList* draw, ImVec2 from, ImVec2 to, Rgb rgb, int alpha = 255) {
    const float angle = std::atan2(to.y - from.y, to.x - from.x);
    const ImVec2 back{to.x - 8 * std::cos(angle), to.y - 8 * std::sin(angle)};
    const ImVec2 side{-4 * std::sin(angle), 4 * std::cos(angle)};
    draw->AddTriangleFilled(to, {back.x + side.x, back.y + side.y},
                            {back.x - side.x, back.y - side.y}, colour(rgb, alpha));
}

// A send whose receive never ran (or the reverse) points a short way toward the peer's rank,
// always to the right of its end so it stays in view, and (when `labelled`) says so; it never
// ends on another action.
void draw_dangling_arrow(ImDrawList* draw, const TimelineGeometry& geometry,
                         const ActionLocation& end, const TimelineAction& action, int peer_rank,
                         bool sends, bool labelled) {
    const float y = geometry.lane_top(end.rank, true) + kLaneHeight / 2;
    const float direction = peer_rank < end.rank ? -1.0f : 1.0f;
    const ImVec2 at{geometry.x(sends ? action.start_ns : action.end_ns), y};
    const ImVec2 loose{at.x + 24.0f, y + direction * kRankHeight * 0.45f};
    const ImVec2 from = sends ? at : loose, to = sends ? loose : at;
    draw->AddLine(from, to, colour(kErrorMarker), 2);
    draw_arrow_head(draw, from, to, kErrorMarker);
    if (!labelled)
        return;
    // On a backing of the background: the label often lies over the peer's bars.
    const char* label = sends ? "no matching recv" : "no matching send";
    const ImVec2 corner{loose.x + 4, loose.y - 7};
    const ImVec2 size = ImGui::CalcTextSize(label);
    draw->AddRectFilled({corner.x - 2, corner.y}, {corner.x + size.x + 2, corner.y + size.y},
                        colour(kBackground));
    draw->AddText(corner, colour(kErrorMarker), label);
}

}  // namespace

bool is_send(std::uint8_t kind) {
    return pipelens::is_send(static_cast<ActionKind>(kind));
}

void draw_arrow(ImDrawList* draw, const TimelineModel& model, const TimelineGeometry& geometry,
                std::int32_t pair_id, bool labelled, int alpha) {
    const auto ends = model.pair_ends(pair_id);
    if (!ends || (!ends->send && !ends->receive))
        return;
    if (!ends->send || !ends->receive) {
        const bool sends = ends->send.has_value();
        const ActionLocation& end = sends ? *ends->send : *ends->receive;
        draw_dangling_arrow(draw, geometry, end, model.action(end),
                            sends ? ends->receive_rank : ends->send_rank, sends, labelled);
        return;
    }
    const TimelineAction& send = model.action(*ends->send);
    const TimelineAction& receive = model.action(*ends->receive);
    const ImVec2 from{geometry.x(send.start_ns),
                      geometry.lane_top(ends->send->rank, true) + kLaneHeight / 2};
    const ImVec2 to{geometry.x(receive.end_ns),
                    geometry.lane_top(ends->receive->rank, true) + kLaneHeight / 2};
    draw->AddLine(from, to, colour(kArrow, alpha), 2);
    draw_arrow_head(draw, from, to, kArrow, alpha);
}

void draw_visible_arrows(ImDrawList* draw, const TimelineModel& model,
                         const TimelineGeometry& geometry, float area_bottom,
                         std::size_t visible_communication) {
    // Past this many (or rows shrunk to fit, which report the most there is), no arrow could be
    // read, and looking for the dangling ones would cost every frame.
    if (visible_communication >= kMostArrowsLookedAt)
        return;
    // Every pair's arrow only once few enough are on screen to read them.
    const bool every_pair =
        static_cast<float>(visible_communication) * kArrowSpacing <= geometry.width;
    std::vector<DrawBlock> blocks;
    for (const RankTimeline& rank : model.ranks()) {
        if (!rank_in_view(geometry, rank.rank, area_bottom))
            continue;
        blocks.clear();
        TimelineModel::visible_blocks(rank.communication, geometry.view_start, geometry.view_end, 0,
                                      blocks);
        bool labelled = false;  // one "no matching ..." per rank
        for (const DrawBlock& block : blocks) {
            const TimelineAction& action = rank.communication.actions[block.first];
            if (action.pair_id < 0)
                continue;
            const auto ends = model.pair_ends(action.pair_id);
            const bool dangling = ends && (!ends->send || !ends->receive);
            if ((is_send(action.kind) && (every_pair || dangling)) || (dangling && !ends->send)) {
                draw_arrow(draw, model, geometry, action.pair_id, dangling && !labelled,
                           kEveryArrowAlpha);
                labelled |= dangling;
            }
        }
    }
}

}  // namespace pipelens::viewer
