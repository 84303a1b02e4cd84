// Recorded events, filterable by rank and name, and a scrubber that replays the state up to
// the chosen event and shows it field by field.
#include <fmt/format.h>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/viewer/panels.hpp"
#include "engine/recorder/state_replay.hpp"

namespace pipelens::viewer {
namespace {

std::vector<recorder::Event> stream_of(const ViewerState& state, int rank) {
    std::vector<recorder::Event> events;
    for (const traces::EventRecord& record : state.events) {
        if (record.rank != rank)
            continue;
        recorder::Event event;
        event.sequence = record.sequence;
        event.rank = record.rank;
        event.parent = record.parent;
        event.name = record.name;
        event.arguments = nlohmann::json::parse(record.arguments, nullptr, false);
        events.push_back(std::move(event));
    }
    return events;
}

}  // namespace

void draw_events_panel(ViewerState& state) {
    if (state.events.empty()) {
        ImGui::TextDisabled("nothing recorded: this run has no events");
        return;
    }
    ImGui::SetNextItemWidth(90);
    ImGui::InputInt("rank (-2 all)", &state.event_rank_filter);
    ImGui::SameLine();
    char name[64];
    std::snprintf(name, sizeof name, "%s", state.event_name_filter.c_str());
    ImGui::SetNextItemWidth(160);
    ImGui::InputTextWithHint("##name", "name filter", name, sizeof name);
    state.event_name_filter = name;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    ImGui::SliderInt("##scrub", &state.event_scrub, -1, static_cast<int>(state.events.size()) - 1,
                     state.event_scrub < 0 ? "replay: pick an event" : "replayed up to #%d");
    ImGui::Columns(2, "events", true);
    ImGui::BeginChild("event list");
    for (int index = 0; index < static_cast<int>(state.events.size()); ++index) {
        const traces::EventRecord& event = state.events[index];
        if (state.event_rank_filter != -2 && event.rank != state.event_rank_filter)
            continue;
        if (!state.event_name_filter.empty() &&
            event.name.find(state.event_name_filter) == std::string::npos)
            continue;
        const std::string text =
            fmt::format("{}r{} #{} {} {}", event.parent ? "    " : "", event.rank, event.sequence,
                        event.name, event.arguments.substr(0, 120));
        if (ImGui::Selectable(fmt::format("{}##event{}", text, index).c_str(),
                              index == state.event_scrub))
            state.event_scrub = index;
    }
    ImGui::EndChild();
    ImGui::NextColumn();
    ImGui::BeginChild("replayed state");
    if (state.event_scrub >= 0 && state.event_scrub < static_cast<int>(state.events.size())) {
        // Replayed once per chosen event, not once per frame.
        if (state.replayed_event != state.event_scrub) {
            state.replayed_event = state.event_scrub;
            state.replayed_lines.clear();
            const traces::EventRecord& chosen = state.events[state.event_scrub];
            try {
                const recorder::StateRecorder replayed =
                    recorder::replay_events(stream_of(state, chosen.rank), chosen.sequence);
                for (const recorder::StateField& field : recorder::state_fields(replayed.state()))
                    state.replayed_lines.push_back(field.name + ": " + field.value);
            } catch (const std::exception& error) {
                state.replayed_lines.push_back(std::string("replay failed: ") + error.what());
            }
        }
        for (const std::string& line : state.replayed_lines)
            ImGui::TextUnformatted(line.c_str());
    } else {
        ImGui::TextDisabled("the state after the chosen event appears here");
    }
    ImGui::EndChild();
    ImGui::Columns(1);
}

}  // namespace pipelens::viewer
