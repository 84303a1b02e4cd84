// The Compare panel and view (compare_panel.hpp). Both timelines are drawn from the models the
// workbench simulated, culled and merged by TimelineModel::visible_blocks as the main timeline is.
#include "app/viewer/compare_panel.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <imgui.h>

#include "app/viewer/compare_layout.hpp"
#include "app/viewer/viewer_state.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

ImU32 colour(Rgb rgb) {
    return IM_COL32(rgb.r, rgb.g, rgb.b, 255);
}

std::int64_t peak_of(const SimulatedRun& run) {
    std::int64_t peak = 0;
    for (std::int64_t bytes : run.peak_memory_bytes)
        peak = std::max(peak, bytes);
    return peak;
}

std::string signed_duration(std::int64_t ns) {
    return fmt::format("{}{}", ns >= 0 ? '+' : '-', format_duration(ns >= 0 ? ns : -ns));
}

std::string signed_bytes(std::int64_t bytes) {
    return fmt::format("{}{}", bytes >= 0 ? '+' : '-', format_bytes(bytes >= 0 ? bytes : -bytes));
}

std::string figures_line(const char* name, const SimulatedRun& run) {
    return fmt::format("{:<8} {}  step {}  bubble {:.1f}%  peak {}", name, run.subject,
                       format_duration(run.step_time_ns), run.bubble_ratio * 100,
                       format_bytes(peak_of(run)));
}

std::string difference_line(const SimulatedRun& pinned, const SimulatedRun& current) {
    const std::int64_t step = current.step_time_ns - pinned.step_time_ns;
    return fmt::format("current - pinned: step {} ({:+.1f}%)  bubble {:+.1f} pts  peak {}",
                       signed_duration(step),
                       pinned.step_time_ns > 0 ? 100.0 * step / pinned.step_time_ns : 0.0,
                       (current.bubble_ratio - pinned.bubble_ratio) * 100,
                       signed_bytes(peak_of(current) - peak_of(pinned)));
}

void draw_half(ImDrawList* draw, const CompareGeometry& geometry, int half,
               const SimulatedRun& run) {
    const TimelineModel& model = *run.model;
    const std::int64_t pixel_ns = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(geometry.span_ns /
                                     std::max(1.f, geometry.right - geometry.left)));
    std::vector<DrawBlock> blocks;
    const float bar = geometry.bar_height(half);
    for (const RankTimeline& rank : model.ranks()) {
        const float top = geometry.row_top(half, rank.rank);
        if (geometry.row_height[half] >= 10)
            draw->AddText({kSidebarWidth + 8, top}, IM_COL32(200, 200, 200, 255),
                          fmt::format("rank {}", rank.rank).c_str());
        blocks.clear();
        TimelineModel::visible_blocks(rank.compute, 0, geometry.span_ns, pixel_ns, blocks);
        for (const DrawBlock& block : blocks)
            draw->AddRectFilled(
                {geometry.x(block.start_ns), top},
                {std::max(geometry.x(block.end_ns), geometry.x(block.start_ns) + 1), top + bar},
                colour(kActionColours[block.kind]));
    }
    const float end = geometry.x(run.step_time_ns);
    const float bottom = geometry.row_top(half, static_cast<int>(model.ranks().size()));
    draw->AddLine({end, geometry.top[half]}, {end, bottom}, IM_COL32(255, 255, 255, 255));
}

std::vector<std::string> comma_words(const std::string& text) {
    std::vector<std::string> words;
    std::stringstream stream(text);
    for (std::string word; std::getline(stream, word, ',');)
        if (!word.empty())
            words.push_back(word);
    return words;
}

// The typed m values, each a whole number from 1; none (and the refusal set) otherwise, rather
// than a mistyped one simulated as some other m.
std::optional<std::vector<int>> grid_microbatches(ComparePanelState& panel) {
    std::vector<int> values;
    for (const std::string& word : comma_words(panel.grid_ms)) {
        int value = 0;
        const auto [end, failure] = std::from_chars(word.data(), word.data() + word.size(), value);
        if (failure != std::errc{} || end != word.data() + word.size() || value < 1) {
            panel.grid_refusal =
                fmt::format("m '{}' is not a whole number of microbatches from 1", word);
            return std::nullopt;
        }
        values.push_back(value);
    }
    if (values.empty()) {
        panel.grid_refusal = "give the m values to simulate, separated by commas (4,8,16)";
        return std::nullopt;
    }
    return values;
}

void draw_rank_differences(const SimulatedRun& pinned, const SimulatedRun& current) {
    if (!ImGui::BeginTable(
            "rank differences", 5,
            ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV,
            {560, 0}))
        return;
    for (const char* title :
         {"rank", "bubble pinned", "bubble current", "peak pinned", "peak current"})
        ImGui::TableSetupColumn(title);
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableHeadersRow();
    const std::size_t ranks =
        std::max(pinned.peak_memory_bytes.size(), current.peak_memory_bytes.size());
    const auto bubble = [](const SimulatedRun& run, std::size_t rank) {
        return rank < run.rank_bubble_ratio.size()
                   ? fmt::format("{:.1f}%", run.rank_bubble_ratio[rank] * 100)
                   : std::string("-");
    };
    const auto peak = [](const SimulatedRun& run, std::size_t rank) {
        return rank < run.peak_memory_bytes.size() ? format_bytes(run.peak_memory_bytes[rank])
                                                   : std::string("-");
    };
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%zu", rank);
        for (const std::string& cell : {bubble(pinned, rank), bubble(current, rank),
                                        peak(pinned, rank), peak(current, rank)}) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(cell.c_str());
        }
    }
    ImGui::EndTable();
}

// The boxes show the grid the workbench last simulated when it was asked for elsewhere; what a
// person types stays until Simulate grid.
void fill_boxes_from_grid(ComparePanelState& panel, const Workbench& workbench) {
    if (workbench.grid_kinds() == panel.boxes_kinds && workbench.grid_ms() == panel.boxes_ms)
        return;
    panel.boxes_kinds = workbench.grid_kinds();
    panel.boxes_ms = workbench.grid_ms();
    if (panel.boxes_kinds.empty() || panel.boxes_ms.empty())
        return;
    panel.grid_kinds = fmt::format("{}", fmt::join(panel.boxes_kinds, ","));
    panel.grid_ms = fmt::format("{}", fmt::join(panel.boxes_ms, ","));
    panel.grid_refusal.clear();
}

void draw_grid(ViewerState& state) {
    Workbench& workbench = state.workbench;
    ComparePanelState& panel = state.compare_panel;
    fill_boxes_from_grid(panel, workbench);
    char kinds[256], ms[128];
    std::snprintf(kinds, sizeof kinds, "%s", panel.grid_kinds.c_str());
    std::snprintf(ms, sizeof ms, "%s", panel.grid_ms.c_str());
    ImGui::SetNextItemWidth(320);
    if (ImGui::InputText("kinds", kinds, sizeof kinds))
        panel.grid_kinds = kinds;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(100);
    if (ImGui::InputText("m", ms, sizeof ms))
        panel.grid_ms = ms;
    ImGui::SameLine();
    if (ImGui::Button("Simulate grid")) {
        if (const std::optional<std::vector<int>> values = grid_microbatches(panel)) {
            panel.grid_refusal.clear();
            workbench.request_grid(comma_words(panel.grid_kinds), *values);
        }
    }
    if (!panel.grid_refusal.empty())
        ImGui::TextColored(ImColor(colour(kRefusalText)), "%s", panel.grid_refusal.c_str());
    const auto& cells = workbench.grid();
    const std::size_t columns = workbench.grid_ms().size();
    if (cells.empty() || columns == 0)
        return;
    if (workbench.grid_is_stale())
        ImGui::TextDisabled(
            "simulated before the experiment's last change: a cell opens the "
            "experiment the grid simulated; Simulate grid again for this one");
    if (!ImGui::BeginTable("grid", static_cast<int>(columns) + 1, ImGuiTableFlags_Borders))
        return;
    ImGui::TableSetupColumn("kind \\ m");
    for (int m : workbench.grid_ms())
        ImGui::TableSetupColumn(std::to_string(m).c_str());
    ImGui::TableHeadersRow();
    for (std::size_t index = 0; index < cells.size(); ++index) {
        if (index % columns == 0) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(cells[index].kind.c_str());
        }
        ImGui::TableNextColumn();
        const GridCell& cell = cells[index];
        if (!cell.error.empty()) {
            ImGui::TextDisabled("n/a");
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("%s", cell.error.c_str());
        } else if (ImGui::SmallButton(fmt::format("{} {:.0f}%##{}",
                                                  format_duration(cell.step_time_ns),
                                                  cell.bubble_ratio * 100, index)
                                          .c_str())) {
            workbench.open_cell(index);
        }
    }
    ImGui::EndTable();
    // Why, without hovering each n/a: on the default example every multi-stage kind is n/a.
    ImGui::PushStyleColor(ImGuiCol_Text, ImU32(ImColor(colour(kRefusalText))));
    for (const std::string& refusal : grid_refusals(cells))
        ImGui::TextWrapped("n/a %s", refusal.c_str());
    ImGui::PopStyleColor();
}

}  // namespace

bool showing_comparison(const ViewerState& state) {
    return state.compare_panel.show_both && state.workbench.pinned() && state.workbench.current() &&
           state.shown_simulation != nullptr;
}

namespace {

// The two halves' geometry for the pinned and the current run.
CompareGeometry geometry_of(const ViewerState& state, float width, float area_bottom) {
    const SimulatedRun& pinned = *state.workbench.pinned();
    const SimulatedRun& current = *state.workbench.current();
    const int ranks[2] = {static_cast<int>(pinned.model->ranks().size()),
                          static_cast<int>(current.model->ranks().size())};
    const std::int64_t ends[2] = {pinned.step_time_ns, current.step_time_ns};
    return compare_geometry(width, area_bottom, ranks, ends);
}

}  // namespace

TimelineGeometry comparison_axis(const ViewerState& state, float width, float area_bottom) {
    return comparison_time_axis(geometry_of(state, width, area_bottom));
}

void draw_comparison_view(const ViewerState& state, float width, float area_bottom) {
    const SimulatedRun& pinned = *state.workbench.pinned();
    const SimulatedRun& current = *state.workbench.current();
    const CompareGeometry geometry = geometry_of(state, width, area_bottom);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 text = IM_COL32(220, 220, 220, 255);
    const float left = kSidebarWidth + 8;
    draw->AddText({left, 4}, text, figures_line("pinned", pinned).c_str());
    draw->AddText({left, 18}, text, figures_line("current", current).c_str());
    draw->AddText({left, 32}, colour(kSelection), difference_line(pinned, current).c_str());
    for (int half = 0; half < 2; ++half) {
        const SimulatedRun& run = half == 0 ? pinned : current;
        draw->AddText({left, geometry.top[half] - kCompareLabelHeight + 2}, text,
                      half == 0 ? "pinned" : "current");
        draw_half(draw, geometry, half, run);
    }
}

void draw_compare_panel(ViewerState& state) {
    Workbench& workbench = state.workbench;
    if (ImGui::Button("Pin current") && workbench.current())
        workbench.pin();
    ImGui::SameLine();
    if (ImGui::Button("Unpin"))
        workbench.unpin();
    ImGui::SameLine();
    ImGui::Checkbox("both timelines", &state.compare_panel.show_both);
    const auto& pinned = workbench.pinned();
    const auto& current = workbench.current();
    if (pinned && current) {
        ImGui::SameLine();
        ImGui::TextUnformatted(difference_line(*pinned, *current).c_str());
    } else {
        ImGui::SameLine();
        ImGui::TextDisabled("pin a simulation, then change the experiment in Simulate");
    }
    if (pinned && current) {
        draw_rank_differences(*pinned, *current);
        ImGui::SameLine();
    }
    ImGui::BeginGroup();
    draw_grid(state);
    ImGui::EndGroup();
}

}  // namespace pipelens::viewer
