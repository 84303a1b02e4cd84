// Sharding decisions: pick one, and one of its tensors (the output or an input); the mesh drawn
// as a grid of devices coloured by the shard of that tensor each holds under the chosen
// strategy, and the strategy table with costs and the chosen row highlighted.
#include "app/viewer/sharding_panel.hpp"

#include <fmt/format.h>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/viewer/viewer_layout.hpp"
#include "app/viewer/viewer_state.hpp"
#include "engine/sharding/placement.hpp"

namespace pipelens::viewer {
namespace {

// "DeviceMesh((dp=2, tp=4), 'cuda', stride=(4, 1))" -> {2, 4}: the sizes in the first group.
std::vector<int> mesh_shape(const std::string& mesh) {
    std::vector<int> shape;
    const std::size_t open = mesh.find("((");
    const std::size_t close = mesh.find(')', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos)
        return shape;
    for (std::size_t at = mesh.find('=', open); at < close; at = mesh.find('=', at + 1))
        shape.push_back(std::atoi(mesh.c_str() + at + 1));
    return shape;
}

// Devices holding the same shard get the same colour: the shard a device holds is numbered by
// its coordinates along the mesh dims that shard (replicated or partial dims repeat it).
void draw_mesh(const std::vector<int>& shape, const std::string& placements_text) {
    std::vector<sharding::Placement> placements;
    try {
        placements = sharding::parse_placements(placements_text);
    } catch (const std::invalid_argument&) {
        return;  // a tuple output: no single tensor to draw
    }
    if (shape.empty() || placements.size() != shape.size())
        return;
    const int rows = shape.size() == 2 ? shape[0] : 1;
    const int columns = shape.back();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float cell = 34;
    for (int row = 0; row < rows; ++row)
        for (int column = 0; column < columns; ++column) {
            const int coordinate[2] = {shape.size() == 2 ? row : column, column};
            int shard = 0;
            for (std::size_t dim = 0; dim < shape.size(); ++dim)
                if (placements[dim].is_shard())
                    shard = shard * shape[dim] + coordinate[dim];
            const Rgb tint = kShardColours[shard % std::size(kShardColours)];
            const ImVec2 min{origin.x + column * cell, origin.y + row * cell};
            draw->AddRectFilled(min, {min.x + cell - 3, min.y + cell - 3},
                                IM_COL32(tint.r, tint.g, tint.b, 255));
            draw->AddText({min.x + 4, min.y + 9}, IM_COL32(10, 10, 10, 255),
                          std::to_string(row * columns + column).c_str());
        }
    ImGui::Dummy({columns * cell, rows * cell});
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
    if (strategies.is_array() && decision.chosen >= 0 &&
        decision.chosen < static_cast<int>(strategies.size()) &&
        strategies[decision.chosen].is_object()) {
        const nlohmann::json& chosen = strategies[decision.chosen];
        nlohmann::json inputs = chosen.value("input_specs", nlohmann::json::array());
        if (!inputs.is_array())
            inputs = nlohmann::json::array();
        ImGui::RadioButton("output", &state.sharding_panel.tensor, -1);
        for (int input = 0; input < static_cast<int>(inputs.size()); ++input) {
            ImGui::SameLine();
            ImGui::RadioButton(fmt::format("input {}", input).c_str(), &state.sharding_panel.tensor,
                               input);
        }
        if (state.sharding_panel.tensor >= static_cast<int>(inputs.size()))
            state.sharding_panel.tensor = -1;
        const nlohmann::json spec = state.sharding_panel.tensor < 0
                                        ? chosen.value("output_spec", nlohmann::json())
                                        : inputs[state.sharding_panel.tensor];
        const std::string placements = spec.is_string() ? spec.get<std::string>() : "";
        const std::string tensor = state.sharding_panel.tensor < 0
                                       ? std::string("output")
                                       : fmt::format("input {}", state.sharding_panel.tensor);
        ImGui::Text("%s %s: devices coloured by the shard they hold", tensor.c_str(),
                    placements.c_str());
        draw_mesh(mesh_shape(decision.mesh), placements);
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
