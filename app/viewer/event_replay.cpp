// The Events panel's model (event_replay.hpp). Replays go through the recorder's own replay, the
// one `pipelens replay` uses, so the state shown is the state the run had.
#include "app/viewer/event_replay.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "engine/recorder/recorded_trace.hpp"
#include "engine/recorder/state_replay.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

// "#4 plan_buffers", or for a nested event "#4 plan_buffers (which made #5 plan_buffer)".
std::string cause_text(const traces::EventRecord& top, const traces::EventRecord& chosen) {
    if (top.sequence == chosen.sequence)
        return fmt::format("#{} {}", top.sequence, chosen.name);
    return fmt::format("#{} {} (which made #{} {})", top.sequence, top.name, chosen.sequence,
                       chosen.name);
}

// The fields before top-level event `top` of `stream`, by name; empty when there is nothing
// before it or it cannot be replayed (then every field counts as changed).
std::map<std::string, std::string> fields_before(const std::vector<recorder::Event>& stream,
                                                 std::int64_t top) {
    std::map<std::string, std::string> before;
    try {
        if (top > 0)
            for (recorder::StateField& field :
                 recorder::state_fields(recorder::replay_events(stream, top - 1).state()))
                before.emplace(std::move(field.name), std::move(field.value));
    } catch (const std::exception&) {
        before.clear();
    }
    return before;
}

}  // namespace

bool event_passes_filters(const traces::EventRecord& event, int rank_filter,
                          std::string_view name_filter) {
    return (rank_filter == kAllRanks || event.rank == rank_filter) &&
           (name_filter.empty() || event.name.find(name_filter) != std::string::npos);
}

std::vector<int> event_ranks(const std::vector<traces::EventRecord>& events) {
    std::vector<int> ranks;
    for (const traces::EventRecord& event : events)
        ranks.push_back(event.rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
}

std::string rank_filter_label(int rank_filter) {
    if (rank_filter == kAllRanks)
        return "all ranks";
    // A simulation's events are the pipeline's, listed as r-1, not any one rank's.
    return rank_filter < 0 ? std::string("r-1 (pipeline)") : fmt::format("rank {}", rank_filter);
}

std::string event_list_line(const traces::EventRecord& event) {
    return fmt::format("{}r{} #{} {}{} {}", event.parent ? "    " : "", event.rank, event.sequence,
                       event.time_ns ? format_duration(*event.time_ns) + " " : std::string(),
                       event.name, event.arguments.substr(0, 120));
}

std::string scrub_text(const traces::EventRecord& event) {
    return fmt::format("replayed up to r{} #{} {}", event.rank, event.sequence, event.name);
}

const traces::EventRecord& top_level_of(const std::vector<traces::EventRecord>& events,
                                        const traces::EventRecord& event) {
    const traces::EventRecord* current = &event;
    for (int depth = 0; current->parent && depth < 64; ++depth) {
        const auto parent =
            std::find_if(events.begin(), events.end(), [&](const traces::EventRecord& record) {
                return record.rank == current->rank && record.sequence == *current->parent;
            });
        if (parent == events.end())
            break;
        current = &*parent;
    }
    return *current;
}

std::vector<ReplayedLine> replayed_state_lines(const TraceSession& session,
                                               const traces::EventRecord& chosen) {
    std::vector<recorder::Event> stream;
    std::vector<recorder::StateField> after;
    try {
        stream = recorder::RecordedEvents(session.reader->path().string(), session.run_id,
                                          session.events)
                     .stream(chosen.rank);
        after = recorder::state_fields(recorder::replay_events(stream, chosen.sequence).state());
    } catch (const std::exception& error) {
        return {{std::string("replay failed: ") + error.what(), false}};
    }
    const traces::EventRecord& top = top_level_of(session.events, chosen);
    const std::string cause = cause_text(top, chosen);
    const std::map<std::string, std::string> before = fields_before(stream, top.sequence);
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

}  // namespace pipelens::viewer
