// Every mismatch and failure of the run. A click selects the action it happened at and marks
// its moment on the timeline; the full message is in the row's tooltip.
#include "app/viewer/errors_panel.hpp"

#include <algorithm>
#include <string>

#include <imgui.h>

#include "app/viewer/viewer_state.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {

namespace {

// A rank, stage or microbatch; "-" for an error tied to none (a run's failure,
// a whole stage's mismatch) rather than the -1 it is recorded as.
std::string place_text(int place) {
    return place < 0 ? std::string("-") : std::to_string(place);
}

constexpr float kLeastTableWidth = 1200;

}  // namespace

void draw_errors_panel(ViewerState& state) {
    if (state.trace.errors.empty()) {
        ImGui::TextDisabled("nothing recorded: this run has no errors");
        return;
    }
    // A message is read in full: a narrow window scrolls the table sideways rather than cutting
    // the message column to a few words (the row's tooltip holds it too).
    const float inner = std::max(kLeastTableWidth, ImGui::GetContentRegionAvail().x);
    if (!ImGui::BeginTable("errors", 7,
                           ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                               ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable,
                           ImVec2(0, 0), inner))
        return;
    ImGui::TableSetupScrollFreeze(0, 1);
    const struct {
        const char* name;
        float width;
    } fixed[] = {{"rank", 40}, {"stage", 44}, {"mb", 30}, {"at", 96}};
    for (const auto& column : fixed)
        ImGui::TableSetupColumn(column.name, ImGuiTableColumnFlags_WidthFixed, column.width);
    ImGui::TableSetupColumn("kind", ImGuiTableColumnFlags_WidthStretch, 1);
    ImGui::TableSetupColumn("expected / actual", ImGuiTableColumnFlags_WidthStretch, 2);
    ImGui::TableSetupColumn("message", ImGuiTableColumnFlags_WidthStretch, 3);
    ImGui::TableHeadersRow();
    for (std::size_t index = 0; index < state.trace.errors.size(); ++index) {
        const traces::ErrorRecord& error = state.trace.errors[index];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        const bool chosen = state.errors_panel.chosen == static_cast<int>(index);
        if (ImGui::Selectable(
                place_text(error.rank).append("##error").append(std::to_string(index)).c_str(),
                chosen, ImGuiSelectableFlags_SpanAllColumns))
            choose_error(state, static_cast<int>(index));
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", error.message.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(place_text(error.stage).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(place_text(error.microbatch).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(error.time_ns ? format_duration(*error.time_ns).c_str() : "-");
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(error.kind.c_str());
        ImGui::TableNextColumn();
        if (error.expected.empty() && error.actual.empty())
            ImGui::TextDisabled("-");
        else
            ImGui::Text("%s / %s", error.expected.c_str(), error.actual.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(error.message.c_str());
    }
    ImGui::EndTable();
}

}  // namespace pipelens::viewer
