// The per-rank table (ranks_panel.hpp), from TraceSession::summary: sorting reorders indices
// into it, never the summary itself.
#include "app/viewer/ranks_panel.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/viewer_state.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

constexpr int kColumns = 7;

// The value a column sorts by (peak memory n/a, a failed run's cool-down and the warm-up of a
// rank that computed nothing sort below every figure).
std::int64_t sort_key(const RankRow& row, int column) {
    switch (column) {
        case 1:
            return row.busy_ns;
        case 2:
            return row.warmup_ns.value_or(-1);
        case 3:
            return row.cooldown_ns.value_or(-1);
        case 4:
            return row.waiting_ns;
        case 5:
            return row.peak_memory_bytes.value_or(-1);
        case 6:
            return row.waited_most_on;
        default:
            return row.rank;
    }
}

void read_sort_request(RanksPanelState& panel) {
    ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
    if (specs == nullptr || !specs->SpecsDirty || specs->SpecsCount == 0)
        return;
    panel.sort_column = specs->Specs[0].ColumnIndex;
    panel.descending = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
    specs->SpecsDirty = false;
}

void select_rank(ViewerState& state, int rank) {
    const TimelineModel& model = *state.trace.model;
    const RankTimeline& timeline = model.ranks()[static_cast<std::size_t>(rank)];
    if (timeline.compute.actions.empty())
        return;
    // The rank's first computation of the step shown (of the run, over every step).
    ActionLocation chosen{rank, false, 0};
    if (state.timeline.chosen_step)
        chosen = copy_in_step(model, state.trace.summary.action_steps, chosen,
                              *state.timeline.chosen_step)
                     .value_or(chosen);
    state.timeline.selected = chosen;
    const TimelineAction& first = model.action(chosen);
    bring_into_view(state.timeline, first.start_ns, first.end_ns);
}

void draw_caption(const ViewerState& state) {
    if (state.trace.summary.steps.size() < 2)
        return;
    const std::optional<int> step = state.timeline.chosen_step;
    const std::string busy =
        step ? fmt::format("busy: step {}'s", *step) : "busy: the median step's (pick a step)";
    ImGui::TextDisabled("%s; warm-up, cool-down, waiting: the median step's; peak: all steps'",
                        busy.c_str());
}

}  // namespace

void draw_ranks_panel(ViewerState& state) {
    const std::vector<RankRow> rows =
        rows_for_step(state.trace.summary, state.timeline.chosen_step);
    if (rows.empty()) {
        ImGui::TextDisabled("nothing recorded: this run has no ranks");
        return;
    }
    draw_caption(state);
    if (!ImGui::BeginTable("ranks", kColumns,
                           ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                               ImGuiTableFlags_Sortable | ImGuiTableFlags_Resizable))
        return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* name :
         {"rank", "busy", "warm-up", "cool-down", "waiting", "peak memory", "waited most on"})
        ImGui::TableSetupColumn(name);
    ImGui::TableHeadersRow();
    RanksPanelState& panel = state.ranks_panel;
    read_sort_request(panel);
    std::vector<std::size_t> order(rows.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t left, std::size_t right) {
        const std::int64_t a = sort_key(rows[left], panel.sort_column);
        const std::int64_t b = sort_key(rows[right], panel.sort_column);
        return panel.descending ? a > b : a < b;
    });
    for (std::size_t index : order) {
        const RankRow& row = rows[index];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        if (ImGui::Selectable(std::to_string(row.rank).append("##rank").c_str(),
                              state.timeline.selected && state.timeline.selected->rank == row.rank,
                              ImGuiSelectableFlags_SpanAllColumns))
            select_rank(state, row.rank);
        for (std::optional<std::int64_t> ns : {std::optional(row.busy_ns), row.warmup_ns,
                                               row.cooldown_ns, std::optional(row.waiting_ns)}) {
            ImGui::TableNextColumn();
            if (ns)
                ImGui::TextUnformatted(format_duration(*ns).c_str());
            else
                ImGui::TextDisabled("-");
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(row.peak_memory_bytes ? format_bytes(*row.peak_memory_bytes).c_str()
                                                     : "n/a");
        ImGui::TableNextColumn();
        if (row.waited_most_on >= 0)
            ImGui::Text("rank %d", row.waited_most_on);
        else
            ImGui::TextDisabled("-");
    }
    ImGui::EndTable();
}

}  // namespace pipelens::viewer
