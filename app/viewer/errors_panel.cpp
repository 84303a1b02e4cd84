// Every mismatch and failure of the run; a click selects the action it happened at.
#include <imgui.h>

#include "app/viewer/panels.hpp"

namespace pipelens::viewer {

void draw_errors_panel(ViewerState& state) {
    if (state.errors.empty()) {
        ImGui::TextDisabled("nothing recorded: this run has no errors");
        return;
    }
    if (!ImGui::BeginTable(
            "errors", 6,
            ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable))
        return;
    for (const char* column : {"rank", "stage", "mb", "kind", "expected / actual", "message"})
        ImGui::TableSetupColumn(column);
    ImGui::TableHeadersRow();
    for (std::size_t index = 0; index < state.errors.size(); ++index) {
        const traces::ErrorRecord& error = state.errors[index];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        if (ImGui::Selectable(
                std::to_string(error.rank).append("##error").append(std::to_string(index)).c_str(),
                false, ImGuiSelectableFlags_SpanAllColumns) &&
            !error.action.empty())
            select_action(state, error.action);
        ImGui::TableNextColumn();
        ImGui::Text("%d", error.stage);
        ImGui::TableNextColumn();
        ImGui::Text("%d", error.microbatch);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(error.kind.c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%s / %s", error.expected.c_str(), error.actual.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(error.message.c_str());
    }
    ImGui::EndTable();
}

}  // namespace pipelens::viewer
