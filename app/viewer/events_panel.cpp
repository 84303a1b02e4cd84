// Recorded events, filterable by rank and name, with their time where they have one, and a
// scrubber that replays the state up to the chosen event and shows it field by field, the
// fields that event changed first and in their own colour (the timeline marks its moment).
#include "app/viewer/events_panel.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/viewer/viewer_layout.hpp"
#include "app/viewer/viewer_state.hpp"
#include "engine/recorder/recorded_trace.hpp"
#include "engine/recorder/state_replay.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

// The top-level event `event` belongs to (itself when it is one): nested events take effect
// with their parent.
const traces::EventRecord& top_level_of(const ViewerState& state,
                                        const traces::EventRecord& event) {
    const traces::EventRecord* current = &event;
    for (int depth = 0; current->parent && depth < 64; ++depth) {
        const auto parent = std::find_if(state.trace.events.begin(), state.trace.events.end(),
                                         [&](const traces::EventRecord& record) {
                                             return record.rank == current->rank &&
                                                    record.sequence == *current->parent;
                                         });
        if (parent == state.trace.events.end())
            break;
        current = &*parent;
    }
    return *current;
}

// The state after `chosen`, fields it changed first (and marked), then the rest.
std::vector<ReplayedLine> replayed_state_lines(const ViewerState& state,
                                               const traces::EventRecord& chosen) {
    std::vector<recorder::Event> stream;
    std::vector<recorder::StateField> after;
    try {
        stream = recorder::RecordedEvents(state.trace.reader->path().string(), state.trace.run_id,
                                          state.trace.events)
                     .stream(chosen.rank);
        after = recorder::state_fields(recorder::replay_events(stream, chosen.sequence).state());
    } catch (const std::exception& error) {
        return {{std::string("replay failed: ") + error.what(), false}};
    }
    std::map<std::string, std::string> before;
    const traces::EventRecord& top_event = top_level_of(state, chosen);
    const std::int64_t top = top_event.sequence;
    // A nested event takes effect with the call that made it: that call is what changed things.
    const std::string cause = top == chosen.sequence
                                  ? fmt::format("#{} {}", top, chosen.name)
                                  : fmt::format("#{} {} (which made #{} {})", top, top_event.name,
                                                chosen.sequence, chosen.name);
    try {
        if (top > 0)
            for (recorder::StateField& field :
                 recorder::state_fields(recorder::replay_events(stream, top - 1).state()))
                before.emplace(std::move(field.name), std::move(field.value));
    } catch (const std::exception&) {
        before.clear();  // nothing to compare with: every field counts as changed
    }
    std::vector<ReplayedLine> lines, unchanged;
    lines.push_back({fmt::format("changed by {}:", cause), true});
    for (const recorder::StateField& field : after) {
        const auto found = before.find(field.name);
        const bool changed = found == before.end() || found->second != field.value;
        (changed ? lines : unchanged).push_back({field.name + ": " + field.value, changed});
    }
    if (lines.size() == 1)
        lines.front().text = cause + " changed no field";
    lines.push_back({"unchanged:", false});
    lines.insert(lines.end(), unchanged.begin(), unchanged.end());
    return lines;
}

}  // namespace

void draw_events_panel(ViewerState& state) {
    if (state.trace.events.empty()) {
        ImGui::TextDisabled("nothing recorded: this run has no events");
        return;
    }
    ImGui::SetNextItemWidth(90);
    ImGui::InputInt("rank (-2 all)", &state.events_panel.rank_filter);
    ImGui::SameLine();
    char name[64];
    std::snprintf(name, sizeof name, "%s", state.events_panel.name_filter.c_str());
    ImGui::SetNextItemWidth(160);
    ImGui::InputTextWithHint("##name", "name filter", name, sizeof name);
    state.events_panel.name_filter = name;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    ImGui::SliderInt("##scrub", &state.events_panel.scrub, -1,
                     static_cast<int>(state.trace.events.size()) - 1,
                     state.events_panel.scrub < 0 ? "replay: pick an event" : "replayed up to #%d");
    ImGui::Columns(2, "events", true);
    ImGui::BeginChild("event list");
    for (int index = 0; index < static_cast<int>(state.trace.events.size()); ++index) {
        const traces::EventRecord& event = state.trace.events[index];
        if (state.events_panel.rank_filter != -2 && event.rank != state.events_panel.rank_filter)
            continue;
        if (!state.events_panel.name_filter.empty() &&
            event.name.find(state.events_panel.name_filter) == std::string::npos)
            continue;
        const std::string text =
            fmt::format("{}r{} #{} {}{} {}", event.parent ? "    " : "", event.rank, event.sequence,
                        event.time_ns ? format_duration(*event.time_ns) + " " : std::string(),
                        event.name, event.arguments.substr(0, 120));
        if (ImGui::Selectable(fmt::format("{}##event{}", text, index).c_str(),
                              index == state.events_panel.scrub))
            state.events_panel.scrub = index;
    }
    ImGui::EndChild();
    ImGui::NextColumn();
    ImGui::BeginChild("replayed state");
    if (state.events_panel.scrub >= 0 &&
        state.events_panel.scrub < static_cast<int>(state.trace.events.size())) {
        // Replayed once per chosen event, not once per frame.
        if (state.events_panel.replayed_event != state.events_panel.scrub) {
            state.events_panel.replayed_event = state.events_panel.scrub;
            state.events_panel.replayed_lines =
                replayed_state_lines(state, state.trace.events[state.events_panel.scrub]);
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
