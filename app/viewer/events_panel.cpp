// Recorded events, filterable by rank and name, with their time where they have one, and a
// scrubber that replays the state up to the chosen event and shows it field by field, the
// fields that event changed first and in their own colour (the timeline marks its moment). The
// list's lines and the replayed state come from event_replay.hpp.
#include "app/viewer/events_panel.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <imgui.h>

#include "app/viewer/viewer_layout.hpp"
#include "app/viewer/viewer_state.hpp"

namespace pipelens::viewer {

namespace {

// A list of the ranks the events have, not a number to type: "all ranks", "rank 0", ...
void draw_rank_filter(ViewerState& state) {
    int& filter = state.events_panel.rank_filter;
    ImGui::SetNextItemWidth(110);
    if (!ImGui::BeginCombo("##rank", rank_filter_label(filter).c_str()))
        return;
    if (ImGui::Selectable(rank_filter_label(kAllRanks).c_str(), filter == kAllRanks))
        filter = kAllRanks;
    for (int rank : event_ranks(state.trace.events))
        if (ImGui::Selectable(rank_filter_label(rank).c_str(), filter == rank))
            filter = rank;
    ImGui::EndCombo();
}

}  // namespace

void draw_events_panel(ViewerState& state) {
    if (state.trace.events.empty()) {
        ImGui::TextDisabled("nothing recorded: this run has no events");
        return;
    }
    draw_rank_filter(state);
    ImGui::SameLine();
    char name[64];
    std::snprintf(name, sizeof name, "%s", state.events_panel.name_filter.c_str());
    ImGui::SetNextItemWidth(160);
    ImGui::InputTextWithHint("##name", "name filter", name, sizeof name);
    state.events_panel.name_filter = name;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    // Named as the list and the replayed state name the event (its rank's sequence), not by
    // its place in the list; '%' doubled, as the slider's text is a format.
    std::string scrub = "replay: pick an event";
    if (state.events_panel.scrub >= 0 &&
        state.events_panel.scrub < static_cast<int>(state.trace.events.size())) {
        scrub.clear();
        for (char c : scrub_text(state.trace.events[state.events_panel.scrub]))
            scrub += c == '%' ? std::string("%%") : std::string(1, c);
    }
    ImGui::SliderInt("##scrub", &state.events_panel.scrub, -1,
                     static_cast<int>(state.trace.events.size()) - 1, scrub.c_str());
    ImGui::Columns(2, "events", true);
    ImGui::BeginChild("event list", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
    for (int index = 0; index < static_cast<int>(state.trace.events.size()); ++index) {
        const traces::EventRecord& event = state.trace.events[index];
        if (!event_passes_filters(event, state.events_panel.rank_filter,
                                  state.events_panel.name_filter))
            continue;
        if (ImGui::Selectable(fmt::format("{}##event{}", event_list_line(event), index).c_str(),
                              index == state.events_panel.scrub))
            state.events_panel.scrub = state.events_panel.listed_event = index;
        // An event chosen elsewhere (--event, the scrubber) is brought into the list's view.
        if (index == state.events_panel.scrub && state.events_panel.listed_event != index) {
            ImGui::SetScrollHereY(0.5f);
            state.events_panel.listed_event = index;
        }
    }
    ImGui::EndChild();
    ImGui::NextColumn();
    ImGui::BeginChild("replayed state", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
    if (state.events_panel.scrub >= 0 &&
        state.events_panel.scrub < static_cast<int>(state.trace.events.size())) {
        // Replayed once per chosen event, not once per frame.
        if (state.events_panel.replayed_event != state.events_panel.scrub) {
            state.events_panel.replayed_event = state.events_panel.scrub;
            state.events_panel.replayed_lines =
                replayed_state_lines(state.trace, state.trace.events[state.events_panel.scrub]);
        }
        const ImU32 changed = IM_COL32(kChangedField.r, kChangedField.g, kChangedField.b, 255);
        for (const ReplayedLine& line : state.events_panel.replayed_lines) {
            if (line.changed)
                ImGui::PushStyleColor(ImGuiCol_Text, changed);
            ImGui::TextUnformatted(line.text.c_str());
            if (line.changed)
                ImGui::PopStyleColor();
        }
    } else {
        ImGui::TextDisabled("the state after the chosen event appears here");
    }
    ImGui::EndChild();
    ImGui::Columns(1);
}

}  // namespace pipelens::viewer
