// The Simulate panel (simulate_panel.hpp): every field goes through Workbench::set, the same
// call the viewer's script makes, so a scripted journey takes the widgets' path.
#include "app/viewer/simulate_panel.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/viewer_layout.hpp"
#include "app/viewer/viewer_state.hpp"
#include "app/viewer/workbench_fields.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

constexpr ImU32 kMessageColour = IM_COL32(kRefusalText.r, kRefusalText.g, kRefusalText.b, 255);
constexpr const char* kColumnTitles[] = {"schedule", "stage costs (us, one or per stage)",
                                         "or a transformer", "links and memory"};
// The least room right of a column's labels: a count's box and its - + buttons, a per-stage list
// of four durations, a number, a size or a bandwidth.
constexpr std::array<float, 4> kLeastInputWidth = {150, 240, 110, 140};

void message_beside(const Workbench& workbench, const std::string& key) {
    const std::string* text = nullptr;
    if (workbench.field_error_key() == key)
        text = &workbench.field_error();
    else if (!workbench.error().empty() && workbench.error_key() == key)
        text = &workbench.error();
    if (text == nullptr)
        return;
    ImGui::PushStyleColor(ImGuiCol_Text, kMessageColour);
    ImGui::TextWrapped("%s", text->c_str());
    ImGui::PopStyleColor();
}

void kind_field(Workbench& workbench) {
    const std::string shown = field_text(workbench.experiment(), "schedule.kind");
    ImGui::SetNextItemWidth(-1);
    if (!ImGui::BeginCombo("##kind", shown.c_str()))
        return;
    for (ScheduleKind kind : all_schedule_kinds()) {
        const std::string name(schedule_kind_name(kind));
        if (ImGui::Selectable(name.c_str(), name == shown))
            workbench.set_kind(name);
    }
    ImGui::EndCombo();
}

void text_field(SimulatePanelState& panel, Workbench& workbench, const WorkbenchField& field) {
    auto editing = panel.editing.find(field.key);
    std::string text = editing != panel.editing.end()
                           ? editing->second
                           : field_text(workbench.experiment(), field.key);
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, "%s", text.c_str());
    ImGui::SetNextItemWidth(-1);
    const bool entered = ImGui::InputText(fmt::format("##{}", field.key).c_str(), buffer,
                                          sizeof buffer, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemActive())
        panel.editing[field.key] = buffer;
    if (entered || ImGui::IsItemDeactivatedAfterEdit()) {
        panel.editing.erase(field.key);
        workbench.set(field.key, buffer);
    }
}

void count_field(Workbench& workbench, const WorkbenchField& field) {
    int value = std::atoi(field_text(workbench.experiment(), field.key).c_str());
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputInt(fmt::format("##{}", field.key).c_str(), &value))
        workbench.set(field.key, std::to_string(value));
}

void flag_field(Workbench& workbench, const WorkbenchField& field) {
    bool value = field_text(workbench.experiment(), field.key) == "true";
    if (ImGui::Checkbox(fmt::format("##{}", field.key).c_str(), &value))
        workbench.set(field.key, value ? "true" : "false");
}

// Where the fields' inputs start in a column: past its longest label.
float label_width(int column) {
    float widest = 0;
    for (const WorkbenchField& field : workbench_fields())
        if (field.column == column)
            widest = std::max(widest, ImGui::CalcTextSize(field.label).x);
    return widest + ImGui::GetStyle().ItemSpacing.x * 2;
}

void draw_field(SimulatePanelState& panel, Workbench& workbench, const WorkbenchField& field,
                float inputs_at) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(field.label);
    ImGui::SameLine(inputs_at);
    if (field.type == FieldType::kind)
        kind_field(workbench);
    else if (field.type == FieldType::count)
        count_field(workbench, field);
    else if (field.type == FieldType::flag)
        flag_field(workbench, field);
    else
        text_field(panel, workbench, field);
    message_beside(workbench, field.key);
}

// The figures of the shown simulation and the Save and Record buttons.
void draw_figures_and_files(ViewerState& state) {
    Workbench& workbench = state.workbench;
    SimulatePanelState& panel = state.simulate_panel;
    if (const auto& run = workbench.current()) {
        std::int64_t peak = 0;
        for (std::int64_t bytes : run->peak_memory_bytes)
            peak = std::max(peak, bytes);
        ImGui::Text("%s  step %s  bubble %.1f%%  peak %s%s", run->subject.c_str(),
                    format_duration(run->step_time_ns).c_str(), run->bubble_ratio * 100,
                    format_bytes(peak).c_str(), workbench.busy() ? "  (simulating...)" : "");
    } else {
        ImGui::TextUnformatted(workbench.busy() ? "simulating..." : "nothing simulated yet");
    }
    if (!workbench.error().empty() && workbench.error_key().empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kMessageColour);
        ImGui::TextWrapped("%s", workbench.error().c_str());
        ImGui::PopStyleColor();
    }
    if (ImGui::Button("Simulate"))
        workbench.simulate();
    ImGui::SameLine();
    char path[512];
    std::snprintf(path, sizeof path, "%s", panel.save_path.c_str());
    ImGui::SetNextItemWidth(180);
    if (ImGui::InputText("##save", path, sizeof path))
        panel.save_path = path;
    ImGui::SameLine();
    if (ImGui::Button("Save TOML")) {
        try {
            workbench.save(panel.save_path);
            panel.message = "saved " + panel.save_path;
        } catch (const std::exception& error) {
            panel.message = error.what();
        }
    }
    ImGui::SameLine();
    const std::string target =
        state.workbench_trace.empty() ? panel.record_path : state.workbench_trace.string();
    if (ImGui::Button(fmt::format("Record into {}", target).c_str())) {
        try {
            const std::int64_t run = workbench.record(target);
            open_trace(state, target, run);
            panel.message = fmt::format("recorded as run {} in {}", run, target);
        } catch (const std::exception& error) {
            panel.message = error.what();
        }
    }
    if (!panel.message.empty())
        ImGui::TextWrapped("%s", panel.message.c_str());
}

}  // namespace

void draw_simulate_panel(ViewerState& state) {
    draw_figures_and_files(state);
    // Each column keeps its labels and room for a value: a narrow window scrolls the table
    // sideways rather than squeezing pp's box to nothing (it once did at 1024 px).
    // Its full height, so that the panel scrolls down to it rather than the table within.
    float needed = 0;
    std::array<float, 4> labels{}, widths{};
    std::array<int, 4> rows{};
    for (int column = 0; column < 4; ++column) {
        labels[column] = label_width(column);
        widths[column] = labels[column] + kLeastInputWidth[column];
        needed += widths[column];
    }
    for (const WorkbenchField& field : workbench_fields())
        ++rows[static_cast<std::size_t>(field.column)];
    const ImGuiStyle& style = ImGui::GetStyle();
    const float height = ImGui::GetFrameHeightWithSpacing() *
                             static_cast<float>(*std::max_element(rows.begin(), rows.end()) + 1) +
                         style.ScrollbarSize + style.CellPadding.y * 2;
    const float inner = std::max(needed, ImGui::GetContentRegionAvail().x);
    if (!ImGui::BeginTable("fields", 4, ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollX,
                           ImVec2(0, height), inner))
        return;
    for (int column = 0; column < 4; ++column)
        ImGui::TableSetupColumn(kColumnTitles[column], ImGuiTableColumnFlags_WidthStretch,
                                widths[column]);
    ImGui::TableHeadersRow();
    ImGui::TableNextRow();
    for (int column = 0; column < 4; ++column) {
        ImGui::TableSetColumnIndex(column);
        const float inputs_at = labels[column];
        for (const WorkbenchField& field : workbench_fields())
            if (field.column == column)
                draw_field(state.simulate_panel, state.workbench, field, inputs_at);
    }
    ImGui::EndTable();
}

void follow_workbench(ViewerState& state) {
    state.workbench.poll();
    if (state.workbench.generation() == state.shown_generation)
        return;
    state.shown_generation = state.workbench.generation();
    const auto& run = state.workbench.current();
    if (!run || state.shown_simulation == run->model.get())
        return;  // a failed simulation: the last one stays, its message in the panel
    show_simulated_run(state, *run);
}

void open_example(ViewerState& state, const Example& example) {
    try {
        state.workbench.load(example_experiment(example));
    } catch (const std::exception& error) {
        state.trace.error = error.what();
        return;
    }
    state.panel_request = Panel::simulate;
}

}  // namespace pipelens::viewer
