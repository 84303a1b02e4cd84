// Drawing the memory plot (memory_plot.hpp). One point per pixel column — the sample in force
// there, found by binary search — so a frame costs the same whatever the number of samples.
#include "app/viewer/memory_plot.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/galloping_search.hpp"
#include "app/viewer/timeline_overlays.hpp"
#include "app/viewer/viewer_state.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

using Samples = std::vector<traces::MemoryRecord>;

// The first sample at or after `from` that is later than `time`.
Samples::const_iterator first_after(Samples::const_iterator from, Samples::const_iterator end,
                                    std::int64_t time) {
    return std::upper_bound(from, end, time,
                            [](std::int64_t value, const traces::MemoryRecord& sample) {
                                return value < sample.time_ns;
                            });
}

std::int64_t bytes_at(const RankTimeline& rank, std::int64_t time) {
    const auto after = first_after(rank.memory.begin(), rank.memory.end(), time);
    return after == rank.memory.begin() ? 0 : std::prev(after)->bytes;
}

void draw_line(ImDrawList* draw, const RankTimeline& rank, const TimelineGeometry& geometry,
               float bottom, float height, std::int64_t peak, ImU32 tint) {
    ImVec2 previous{geometry.left, bottom};
    auto after = first_after(rank.memory.begin(), rank.memory.end(), geometry.view_start);
    for (float x = geometry.left; x <= geometry.left + geometry.width; x += 1) {
        // A little later than the last column's time: galloped to from the last answer.
        const std::int64_t time = geometry.time_at(x);
        after = galloping_partition_point(
            after, rank.memory.end(),
            [&](const traces::MemoryRecord& sample) { return sample.time_ns <= time; });
        const std::int64_t bytes = after == rank.memory.begin() ? 0 : std::prev(after)->bytes;
        const ImVec2 point{x,
                           bottom - height * static_cast<float>(bytes) / static_cast<float>(peak)};
        if (point.y != previous.y) {
            draw->AddLine(previous, {x, previous.y}, tint, 1.5f);
            draw->AddLine({x, previous.y}, point, tint, 1.5f);
            previous = point;
        }
    }
    draw->AddLine(previous, {geometry.left + geometry.width, previous.y}, tint, 1.5f);
}

// Ticks at 0, half and the peak, labelled in bytes, left of the plot.
void draw_axis(ImDrawList* draw, const TimelineGeometry& geometry, float bottom, float height,
               std::int64_t peak) {
    for (int part = 0; part <= 2; ++part) {
        const float y = bottom - height * static_cast<float>(part) / 2;
        draw->AddLine({geometry.left - 5, y}, {geometry.left, y}, IM_COL32(160, 160, 160, 255));
        const std::string label = format_bytes(peak * part / 2);
        const float width = ImGui::CalcTextSize(label.c_str()).x;
        draw->AddText({geometry.left - 8 - width, y - kMemoryLabelHeight / 2},
                      IM_COL32(170, 170, 170, 255), label.c_str());
    }
}

}  // namespace

void draw_memory(const ViewerState& state, const TimelineGeometry& geometry, float top,
                 float bottom) {
    if (!state.trace.model)
        return;
    const TimelineModel& model = *state.trace.model;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const std::int64_t peak = model.memory_peak();
    if (peak <= 0) {
        draw->AddText({kSidebarWidth + 6, top + 2}, IM_COL32(200, 200, 200, 255), "memory: n/a");
        // At the lanes' left edge as the layout places it: a run without a timeline (a
        // sharding-only one) never set the geometry, whose left would cut the line off.
        draw->AddText({kSidebarWidth + kGutterWidth, top + 40}, IM_COL32(150, 150, 150, 255),
                      "nothing recorded: this run has no memory samples");
        return;
    }
    const std::vector<MemoryLine> lines =
        memory_lines(model, state.timeline.selected ? std::optional(state.timeline.selected->rank)
                                                    : std::nullopt);
    const MemoryPlotLayout layout = memory_plot_layout(top, bottom);
    draw->AddText({kSidebarWidth + 6, layout.title_top}, IM_COL32(200, 200, 200, 255),
                  fmt::format("memory (peak {})", format_bytes(peak)).c_str());
    // The key: each coloured rank, in its colour, under the title.
    float key_x = kSidebarWidth + 6, key_y = layout.title_top + kMemoryLabelHeight + 2;
    for (const MemoryLine& line : lines) {
        if (line.muted)
            continue;
        const std::string label = fmt::format("r{}", line.rank);
        draw->AddText({key_x, key_y}, colour(line.colour), label.c_str());
        key_x += ImGui::CalcTextSize(label.c_str()).x + 8;
        if (key_x > geometry.left - kMemoryAxisWidth - 20) {
            key_x = kSidebarWidth + 6;
            key_y += 14;
        }
    }
    // The plot starts below the title line, so the peak's tick label stays clear of it.
    const float plot_bottom = layout.plot_bottom, height = layout.height();
    draw_axis(draw, geometry, plot_bottom, height, peak);
    draw->PushClipRect({geometry.left, top}, {geometry.left + geometry.width, bottom}, true);
    // Every coloured line; muted ones only for ranks whose rows are in view, at most eight (a
    // line costs a binary search per pixel column).
    int muted = 0;
    for (const MemoryLine& line : lines) {
        if (line.muted) {
            const float row = geometry.lane_top(line.rank, false);
            if (row + geometry.rank_height <= kLanesTop || row >= top || ++muted > 8)
                continue;
        }
        draw_line(draw, model.ranks()[static_cast<std::size_t>(line.rank)], geometry, plot_bottom,
                  height, peak, colour(line.colour));
    }
    draw->PopClipRect();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (ImGui::IsWindowHovered() && mouse.x >= geometry.left &&
        mouse.x <= geometry.left + geometry.width && mouse.y >= top && mouse.y <= bottom) {
        draw->AddLine({mouse.x, top}, {mouse.x, bottom}, IM_COL32(200, 200, 200, 120));
        const std::int64_t time = geometry.time_at(mouse.x);
        ImGui::BeginTooltip();
        ImGui::Text("at %s", format_duration(time).c_str());
        for (const MemoryLine& line : lines)
            if (!line.muted)
                ImGui::TextColored(ImColor(colour(line.colour)), "rank %d: %s", line.rank,
                                   format_bytes(bytes_at(model.ranks()[line.rank], time)).c_str());
        ImGui::EndTooltip();
    }
}

}  // namespace pipelens::viewer
