// Sharding decisions: pick one, and one of its tensors (the output or an input); the mesh drawn
// as a grid of devices coloured by the shard of that tensor each holds under the chosen
// strategy, and the strategy table with costs and the chosen row highlighted.
#include "app/viewer/sharding_panel.hpp"

#include <fmt/format.h>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/viewer/sharding_mesh.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {
namespace {

// Devices holding the same shard get the same colour (sharding_mesh.hpp numbers the shards).
void draw_mesh(const MeshGrid& grid) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float cell = 34;
    for (const MeshDevice& device : grid.devices) {
        const Rgb tint = kShardColours[device.shard % std::size(kShardColours)];
        const ImVec2 min{origin.x + device.column * cell, origin.y + device.row * cell};
        draw->AddRectFilled(min, {min.x + cell - 3, min.y + cell - 3},
                            IM_COL32(tint.r, tint.g, tint.b, 255));
        draw->AddText({min.x + 4, min.y + 9}, IM_COL32(10, 10, 10, 255),
                      std::to_string(device.device).c_str());
    }
    ImGui::Dummy({grid.columns * cell, grid.rows * cell});
}

}  // namespace

void draw_sharding_panel(ViewerState& state) {
    if (state.trace.sharding.empty()) {
        ImGui::TextDisabled("nothing recorded: this run has no sharding decisions");
        return;
    }
    ImGui::Columns(2, "sharding", true);
    ImGui::BeginChild("decisions");
    for (int index = 0; index < static_cast<int>(state.trace.sharding.size()); ++index)
        if (ImGui::Selectable(fmt::format("#{} {}", index, state.trace.sharding[index].op).c_str(),
                              index == state.sharding_panel.selected)) {
            state.sharding_panel.selected = index;
            state.sharding_panel.tensor = -1;
            state.sharding_panel.scroll_pending = true;
        }
    ImGui::EndChild();
    ImGui::NextColumn();
    ImGui::BeginChild("strategies");
    const traces::ShardingRecord& decision = state.trace.sharding.at(state.sharding_panel.selected);
    const nlohmann::json& strategies =
        state.trace.sharding_strategies.at(state.sharding_panel.selected);
    ImGui::TextWrapped("%s", decision.mesh.c_str());
    if (const std::optional<StrategyTensors> chosen =
            chosen_strategy_tensors(strategies, decision.chosen)) {
        ImGui::RadioButton("output", &state.sharding_panel.tensor, -1);
        for (int input = 0; input < static_cast<int>(chosen->inputs.size()); ++input) {
            ImGui::SameLine();
            ImGui::RadioButton(fmt::format("input {}", input).c_str(), &state.sharding_panel.tensor,
                               input);
        }
        if (state.sharding_panel.tensor >= static_cast<int>(chosen->inputs.size()))
            state.sharding_panel.tensor = -1;
        const std::string& placements = state.sharding_panel.tensor < 0
                                            ? chosen->output
                                            : chosen->inputs[state.sharding_panel.tensor];
        const std::string tensor = state.sharding_panel.tensor < 0
                                       ? std::string("output")
                                       : fmt::format("input {}", state.sharding_panel.tensor);
        ImGui::Text("%s %s: devices coloured by the shard they hold", tensor.c_str(),
                    placements.c_str());
        if (const std::optional<MeshGrid> grid = mesh_grid(decision.mesh, placements))
            draw_mesh(*grid);
    }
    if (strategies.is_array() &&
        ImGui::BeginTable("strategy table", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY)) {
        ImGui::TableSetupScrollFreeze(0, 1);  // the header stays in view
        ImGui::TableSetupColumn("#");
        ImGui::TableSetupColumn("strategy");
        ImGui::TableSetupColumn("total cost (us)");
        ImGui::TableHeadersRow();
        for (int index = 0; index < static_cast<int>(strategies.size()); ++index) {
            if (!strategies[index].is_object())
                continue;  // a damaged row: nothing to show
            ImGui::TableNextRow();
            if (index == decision.chosen) {
                ImGui::TableSetBgColor(
                    ImGuiTableBgTarget_RowBg0,
                    IM_COL32(kChosenStrategy.r, kChosenStrategy.g, kChosenStrategy.b, 255));
                if (state.sharding_panel.scroll_pending) {  // bring the chosen row into view once
                    ImGui::SetScrollHereY(0.5f);
                    state.sharding_panel.scroll_pending = false;
                }
            }
            ImGui::TableNextColumn();
            ImGui::Text("%d", index);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(strategies[index].value("strategy", "?").c_str());
            ImGui::TableNextColumn();
            const nlohmann::json total = strategies[index].value("total", nlohmann::json());
            ImGui::TextUnformatted(total.is_number()
                                       ? fmt::format("{:.2f}", total.get<double>()).c_str()
                                       : total.dump().c_str());
        }
        ImGui::EndTable();
    }
    ImGui::EndChild();
    ImGui::Columns(1);
}

}  // namespace pipelens::viewer
