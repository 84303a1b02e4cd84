// Dropped files handed to the model and its progress and errors shown (drop_panel.hpp).
#include "app/viewer/drop_panel.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDialog = "Cannot open the file###drop error";

// A share of the work per stage reached: the stages take roughly alike on small files, and a
// bar that moves says the viewer is not stuck.
float stage_fraction(DropStage stage) {
    switch (stage) {
        case DropStage::reading:
            return 0.1f;
        case DropStage::checking:
            return 0.3f;
        case DropStage::simulating:
        case DropStage::importing:
            return 0.5f;
        case DropStage::recording:
            return 0.8f;
        case DropStage::done:
            break;
    }
    return 1.0f;
}

void draw_progress(const ViewerState& state, float width, float height) {
    const FileDrop& drop = state.drop;
    const auto stage = static_cast<DropStage>(drop.stage ? drop.stage->load() : 0);
    ImGui::SetNextWindowPos({width / 2, height / 2}, ImGuiCond_Always, {0.5f, 0.5f});
    ImGui::Begin("##drop progress", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove);
    ImGui::TextUnformatted(file_names(drop.files).c_str());
    const double elapsed =
        state.drop_panel.started_s >= 0 ? ImGui::GetTime() - state.drop_panel.started_s : 0;
    ImGui::Text("%s... %.1f s", std::string(stage_text(stage)).c_str(), elapsed);
    ImGui::ProgressBar(stage_fraction(stage), {360, 0});
    ImGui::End();
}

void draw_dialog(ViewerState& state, float width) {
    std::string& message = state.drop.dialog;
    if (message.empty())
        return;
    if (!ImGui::IsPopupOpen(kDialog))
        ImGui::OpenPopup(kDialog);
    ImGui::SetNextWindowSize({std::min(720.0f, width - 80), 0});
    ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Always, {0.5f, 0.5f});
    if (ImGui::BeginPopupModal(kDialog, nullptr, ImGuiWindowFlags_NoSavedSettings)) {
        ImGui::TextWrapped("%s", message.c_str());
        ImGui::Spacing();
        if (ImGui::Button("OK", {120, 0}) ||
            ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)) ||
            ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter))) {
            message.clear();
            ImGui::CloseCurrentPopup();
        }
        ImGui::EndPopup();
    }
}

}  // namespace

void drop_files(ViewerState& state, const std::vector<fs::path>& files) {
    if (files.empty())
        return;
    if (route_of(traces::file_kind_of(files.front().string())) == DropRoute::open_trace) {
        open_trace(state, files.front());
        return;
    }
    if (!start_drop(state.drop, files)) {
        state.drop.dialog = fmt::format("{}: still working on {}; drop it again once that is done",
                                        files.front().string(), file_names(state.drop.files));
        return;
    }
    state.drop_panel.started_s = ImGui::GetCurrentContext() != nullptr ? ImGui::GetTime() : 0;
}

bool apply_finished_drop(ViewerState& state, bool wait) {
    const std::optional<DropOutcome> outcome = take_finished_drop(state.drop, wait);
    if (!outcome)
        return false;
    remember_outcome(state.drop, *outcome);
    if (!outcome->error.empty() || outcome->trace.empty())
        return true;
    state.trace.error.clear();
    open_trace(state, outcome->trace, outcome->run_id);
    if (!state.trace.error.empty()) {
        state.drop.dialog = state.trace.error;
        return true;
    }
    locate_hang(state.drop, outcome->trace, *state.trace.model);
    // The sidebar's line for what was written; the whole report is in the hang's banner.
    state.export_message = outcome->report.substr(0, outcome->report.find('\n'));
    return true;
}

void draw_drop_panel(ViewerState& state, float width, float height) {
    if (state.drop.busy())
        draw_progress(state, width, height);
    draw_dialog(state, width);
}

}  // namespace pipelens::viewer
