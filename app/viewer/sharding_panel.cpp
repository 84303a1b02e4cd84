// Sharding decisions: pick one, and one of its tensors (the output or an input); the mesh drawn
// as a grid of devices coloured by the block of that tensor each holds under the chosen
// strategy (sharding_mesh.hpp: by its place in the tensor, the indices under each device), and
// the strategy table with costs and the chosen row highlighted.
#include "app/viewer/sharding_panel.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/viewer/sharding_mesh.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "app/viewer/viewer_state.hpp"
#include "engine/sharding/device_mesh.hpp"

namespace pipelens::viewer {
namespace {

// Devices holding the same block get the same colour (sharding_mesh.hpp numbers the blocks by
// their place in the tensor); each cell names its device and, under it, what it holds.
void draw_mesh(const MeshGrid& grid, const std::vector<std::string>& mesh_dims) {
    const float width = mesh_cell_width(grid), height = kMeshCellHeight;
    // Wider than the panel (four devices of long indices at 1024 px): it scrolls sideways
    // rather than cutting the devices past the edge off.
    const ImVec2 size{grid.columns * width, grid.rows * height};
    const bool wider = size.x > ImGui::GetContentRegionAvail().x;
    if (wider)
        ImGui::BeginChild("mesh", {0, size.y + ImGui::GetStyle().ScrollbarSize}, false,
                          ImGuiWindowFlags_HorizontalScrollbar);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    for (const MeshDevice& device : grid.devices) {
        const Rgb tint = kShardColours[device.shard % std::size(kShardColours)];
        const ImVec2 min{origin.x + device.column * width, origin.y + device.row * height};
        const ImVec2 max{min.x + width - 3, min.y + height - 3};
        draw->AddRectFilled(min, max, IM_COL32(tint.r, tint.g, tint.b, 255));
        draw->AddText({min.x + 4, min.y + 2}, IM_COL32(10, 10, 10, 255),
                      std::to_string(device.device).c_str());
        const std::string held = held_text(grid, device.device);
        draw->AddText({min.x + 4, min.y + 16}, IM_COL32(10, 10, 10, 255), held.c_str());
        if (ImGui::IsMouseHoveringRect(min, max)) {
            std::vector<std::string> at;
            for (std::size_t dim = 0; dim < device.coordinate.size(); ++dim)
                at.push_back(fmt::format("{}={}", dim < mesh_dims.size() ? mesh_dims[dim] : "",
                                         device.coordinate[dim]));
            ImGui::SetTooltip("device %d (%s): %s, block %d of %d", device.device,
                              fmt::format("{}", fmt::join(at, ", ")).c_str(),
                              held.empty() ? "?" : held.c_str(), device.shard, grid.blocks);
        }
    }
    ImGui::Dummy(size);
    if (wider)
        ImGui::EndChild();
}

// The mesh's dim names ("dp", "tp"; the index for an unnamed dim).
std::vector<std::string> mesh_dim_names(const std::string& mesh_text) {
    std::vector<std::string> names;
    try {
        const sharding::DeviceMesh mesh = sharding::parse_printed_device_mesh(mesh_text);
        for (int dim = 0; dim < mesh.ndim(); ++dim)
            names.push_back(static_cast<std::size_t>(dim) < mesh.dim_names.size() &&
                                    !mesh.dim_names[dim].empty()
                                ? mesh.dim_names[dim]
                                : std::to_string(dim));
    } catch (const std::invalid_argument&) {
    }
    return names;
}

// The chosen tensor's shape, when decision_shapes could tell it.
const std::optional<std::vector<std::int64_t>>& chosen_shape(const ShardingPanelState& panel) {
    static const std::optional<std::vector<std::int64_t>> unknown;
    if (panel.tensor < 0)
        return panel.shapes.output;
    return panel.tensor < static_cast<int>(panel.shapes.inputs.size())
               ? panel.shapes.inputs[static_cast<std::size_t>(panel.tensor)]
               : unknown;
}

// "[8, 8]"
std::string shape_text(const std::vector<std::int64_t>& shape) {
    return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace

void draw_sharding_panel(ViewerState& state) {
    if (state.trace.sharding.empty()) {
        ImGui::TextDisabled("nothing recorded: this run has no sharding decisions");
        return;
    }
    const float panel_width = ImGui::GetContentRegionAvail().x;
    ImGui::Columns(2, "sharding", true);
    // The list needs less room than the mesh and its table: a third, set once so that a drag of
    // the divider holds.
    if (!state.sharding_panel.columns_set) {
        ImGui::SetColumnWidth(0, std::max(220.0f, panel_width * 0.3f));
        state.sharding_panel.columns_set = true;
    }
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
        if (state.sharding_panel.shapes_of != state.sharding_panel.selected) {
            state.sharding_panel.shapes = decision_shapes(decision.op, decision.mesh);
            state.sharding_panel.shapes_of = state.sharding_panel.selected;
        }
        const auto& shape = chosen_shape(state.sharding_panel);
        const std::optional<MeshGrid> grid = mesh_grid(decision.mesh, placements, shape);
        if (grid && grid->by_position)
            ImGui::TextWrapped(
                "%s %s of %s: devices coloured by the block they hold, numbered by its place in "
                "the tensor; under each device the indices it holds (r rows, c columns)",
                tensor.c_str(), placements.c_str(), shape_text(*shape).c_str());
        else
            ImGui::TextWrapped(
                "%s %s: devices coloured by the shard they hold (by mesh "
                "coordinate: the tensor's shape is not known)",
                tensor.c_str(), placements.c_str());
        if (grid)
            draw_mesh(*grid, mesh_dim_names(decision.mesh));
    }
    if (strategies.is_array() &&
        ImGui::BeginTable("strategy table", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY)) {
        ImGui::TableSetupScrollFreeze(0, 1);  // the header stays in view
        // The index and the cost as wide as their text; the strategy takes the rest and wraps,
        // so its output placement is never cut off under the cost.
        ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn("strategy", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("total cost (us)", ImGuiTableColumnFlags_WidthFixed);
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
            ImGui::TextWrapped("%s", strategies[index].value("strategy", "?").c_str());
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

std::optional<std::string> tensor_choice_refused(const ViewerState& state, int input) {
    if (state.trace.sharding.empty())
        return std::string("the run has no sharding decisions");
    const auto selected = static_cast<std::size_t>(state.sharding_panel.selected);
    if (input < 0 || selected >= state.trace.sharding.size())
        return std::nullopt;
    const std::optional<StrategyTensors> chosen = chosen_strategy_tensors(
        state.trace.sharding_strategies.at(selected), state.trace.sharding[selected].chosen);
    const std::size_t inputs = chosen ? chosen->inputs.size() : 0;
    if (static_cast<std::size_t>(input) < inputs)
        return std::nullopt;
    const std::string& op = state.trace.sharding[selected].op;  // "aten.mm.default(Spec(...)..."
    return fmt::format("decision #{} ({}) has {} input{} (input0 is the first)", selected,
                       op.substr(0, op.find('(')), inputs, inputs == 1 ? "" : "s");
}

}  // namespace pipelens::viewer
