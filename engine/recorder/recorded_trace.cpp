// Events <-> the trace's rows. Arguments are stored as compact JSON text; a row whose text is
// not JSON is reported with its run, rank and sequence rather than skipped.
#include "engine/recorder/recorded_trace.hpp"

#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/recorder/event_table.hpp"
#include "engine/text/shortened.hpp"

namespace pipelens::recorder {
namespace {

traces::EventRecord to_record(const Event& event) {
    traces::EventRecord record;
    record.sequence = event.sequence;
    record.rank = event.rank;
    record.parent = event.parent;
    record.name = event.name;
    record.arguments = event.arguments.dump();
    record.outcome = "ok";
    record.time_ns = event.time_ns;
    return record;
}

nlohmann::json event_to_json(const Event& event) {
    nlohmann::json json = {{"sequence", event.sequence},
                           {"rank", event.rank},
                           {"name", event.name},
                           {"arguments", event.arguments}};
    if (event.parent)
        json["parent"] = *event.parent;
    if (event.time_ns)
        json["time_ns"] = *event.time_ns;
    return json;
}

Event event_from_json(const nlohmann::json& json) {
    Event event;
    event.sequence = json.at("sequence").get<std::int64_t>();
    event.rank = json.at("rank").get<int>();
    event.name = json.at("name").get<std::string>();
    event.arguments = json.at("arguments");
    if (json.contains("parent"))
        event.parent = json.at("parent").get<std::int64_t>();
    if (json.contains("time_ns"))
        event.time_ns = json.at("time_ns").get<std::int64_t>();
    return event;
}

// Why `events` (one rank's rows by sequence) cannot be a recorder's stream, when they cannot: a
// recorder numbers its events 0, 1, 2, ... with no gap, in the order its clock (where it has one)
// saw them, and nests an event only under one recorded before it. A replay of a stream that
// breaks this would rebuild a state no run had.
std::optional<std::string> broken_numbering(const std::vector<Event>& events) {
    for (std::size_t index = 0; index < events.size(); ++index) {
        const Event& event = events[index];
        const auto expected = static_cast<std::int64_t>(index);
        if (event.sequence != expected) {
            if (index == 0)
                return fmt::format("its first event ({}) is numbered {}, not 0", event.name,
                                   event.sequence);
            if (event.sequence < expected)
                return fmt::format("event {} is recorded twice ({} and {})", event.sequence,
                                   events[index - 1].name, event.name);
            if (event.sequence == expected + 1)
                return fmt::format("event {} is missing (event {}, {}, follows event {})", expected,
                                   event.sequence, event.name, expected - 1);
            return fmt::format("events {} to {} are missing (event {}, {}, follows event {})",
                               expected, event.sequence - 1, event.sequence, event.name,
                               expected - 1);
        }
        // The constructor names the rank whose state it starts: another rank's under this
        // rank's rows is a stream put together from two.
        if (index == 0 && event.arguments.is_object() && event.arguments.contains("rank") &&
            event.arguments["rank"].is_number_integer() &&
            event.arguments["rank"].get<std::int64_t>() != event.rank)
            return fmt::format(
                "its first event ({}) starts the state of rank {}, but the "
                "stream is {}",
                event.name, event.arguments["rank"].dump(),
                event.rank < 0 ? std::string("the whole pipeline's")
                               : fmt::format("rank {}'s", event.rank));
        // Two events renumbered into each other's places keep their times.
        if (index > 0 && event.time_ns && events[index - 1].time_ns &&
            *event.time_ns < *events[index - 1].time_ns)
            return fmt::format(
                "event {} ({}) was recorded at {} ns, before event {} ({}) at {} "
                "ns: the events are renumbered",
                event.sequence, event.name, *event.time_ns, index - 1, events[index - 1].name,
                *events[index - 1].time_ns);
        if (event.parent && (*event.parent < 0 || *event.parent >= event.sequence))
            return fmt::format("event {} ({}) is nested in event {}, which {}", event.sequence,
                               event.name, *event.parent,
                               *event.parent < 0 ? "does not exist" : "is not recorded before it");
    }
    return std::nullopt;
}

// Why `events` (numbered as a recorder numbers them) cannot be a recorder's stream, when they
// cannot: every event is one this engine reads, the constructor is event 0 and only event 0, and
// an event a call makes is nested under that call, right after it; every other event is top
// level. Replay reads only top-level events, so damage nested in them would otherwise go unseen,
// and a constructor or nesting out of place is a damaged trace, not a finding about the run.
std::optional<std::string> broken_structure(const std::vector<Event>& events) {
    std::size_t last_top_level = 0;
    for (std::size_t index = 0; index < events.size(); ++index) {
        const Event& event = events[index];
        const std::string named = fmt::format("event {} ({})", event.sequence, event.name);
        AnyEvent parsed;
        try {
            parsed = parse_event(event);
        } catch (const EventFormatError& error) {
            return fmt::format("{}: {}", named, error.what());
        }
        const bool constructs = event.name == ConstructState::kName;
        if (index == 0 && !constructs)
            return fmt::format("{} comes first, but a stream starts with its constructor, {}",
                               named, ConstructState::kName);
        if (index > 0 && constructs)
            return fmt::format("{} is a second constructor: only event 0 constructs the state",
                               named);
        const std::string_view maker = made_by(parsed);
        if (!event.parent) {
            if (!maker.empty())
                return fmt::format("{} is at top level, but only {} makes it, nested under it",
                                   named, maker);
            last_top_level = index;
            continue;
        }
        const Event& parent = events[static_cast<std::size_t>(*event.parent)];
        if (maker.empty() || parent.name != maker)
            return fmt::format("{} is nested in event {} ({}), which makes no {} events", named,
                               parent.sequence, parent.name, event.name);
        if (static_cast<std::size_t>(*event.parent) != last_top_level)
            return fmt::format(
                "{} is nested in event {} ({}), but follows event {} ({}), which "
                "is not nested in it",
                named, parent.sequence, parent.name, events[last_top_level].sequence,
                events[last_top_level].name);
    }
    return std::nullopt;
}

}  // namespace

std::string stream_name(int rank) {
    return rank < 0 ? std::string("whole pipeline") : fmt::format("rank {}", rank);
}

void write_recording(traces::TraceWriter& writer, std::int64_t run_id, int rank,
                     const std::vector<Event>& events, const std::vector<StateField>& final_state,
                     const std::vector<EventFailure>& failures) {
    for (const Event& event : events)
        writer.add_event(run_id, to_record(event));
    traces::StateSnapshotRecord snapshot;
    snapshot.rank = rank;
    snapshot.after_sequence = events.empty() ? -1 : events.back().sequence;
    snapshot.state = fields_to_json(final_state);
    writer.add_state_snapshot(run_id, snapshot);
    for (const EventFailure& failure : failures) {
        traces::ErrorRecord error;
        error.rank = rank;
        error.stage = event_stage(failure.event).value_or(-1);
        error.kind = "event_failed";
        error.action = failure.event.name;
        error.message = fmt::format("{} failed: {}", to_string(failure.event), failure.message);
        error.time_ns = failure.event.time_ns;
        writer.add_error(run_id, error);
    }
}

void write_recording(traces::TraceWriter& writer, std::int64_t run_id,
                     const StateRecorder& recorder) {
    write_recording(writer, run_id, recorder.state().rank, recorder.events(),
                    state_fields(recorder.state()), recorder.failures());
}

RecordedEvents::RecordedEvents(const traces::TraceReader& reader, std::int64_t run_id)
    : RecordedEvents(reader.path().string(), run_id, reader.events(run_id)) {}

RecordedEvents::RecordedEvents(std::string path, std::int64_t run_id,
                               std::vector<traces::EventRecord> records)
    : path_(std::move(path)), run_id_(run_id), records_(std::move(records)) {}

std::vector<int> RecordedEvents::ranks() const {
    std::set<int> ranks;
    for (const traces::EventRecord& record : records_)
        ranks.insert(record.rank);
    return {ranks.begin(), ranks.end()};
}

namespace {

// Recorded arguments are a few levels deep (a tensor's metadata in a list in the arguments).
// Deeper is no recorder's, and printing it in an error would recurse once per level, past the
// stack of a damaged trace's hundred thousand levels.
constexpr int kMaxArgumentDepth = 64;

struct NestedTooDeep {};

nlohmann::json parse_arguments(const std::string& text) {
    return nlohmann::json::parse(
        text, [](int depth, nlohmann::json::parse_event_t, const nlohmann::json&) {
            if (depth > kMaxArgumentDepth)
                throw NestedTooDeep{};
            return true;
        });
}

}  // namespace

std::vector<Event> RecordedEvents::stream(int rank) const {
    std::vector<Event> events;
    for (const traces::EventRecord& record : records_) {
        if (record.rank != rank)
            continue;
        // A call that failed goes to the errors table, never into its rank's stream.
        if (record.outcome != "ok")
            throw std::invalid_argument(fmt::format(
                "{}: trace is corrupt: run {} {}: event {} ({}) is marked as failed ({}), but a "
                "recorder writes only calls that succeeded into its stream",
                path_, run_id_, stream_name(rank), record.sequence, record.name,
                shortened(record.outcome, 200)));
        Event event;
        event.sequence = record.sequence;
        event.rank = record.rank;
        event.parent = record.parent;
        event.name = record.name;
        event.time_ns = record.time_ns;
        try {
            event.arguments = parse_arguments(record.arguments);
        } catch (const nlohmann::json::exception& error) {
            throw std::invalid_argument(fmt::format(
                "{}: trace is corrupt: run {} {}: event {} ({}) has arguments that "
                "are not JSON: {}",
                path_, run_id_, stream_name(rank), record.sequence, record.name, error.what()));
        } catch (const NestedTooDeep&) {
            throw std::invalid_argument(fmt::format(
                "{}: trace is corrupt: run {} {}: event {} ({}) has arguments nested more than "
                "{} levels deep, which no recorder writes",
                path_, run_id_, stream_name(rank), record.sequence, record.name,
                kMaxArgumentDepth));
        }
        events.push_back(std::move(event));
    }
    if (events.empty()) {
        const std::vector<int> recorded = ranks();
        if (recorded.empty())
            throw std::invalid_argument(fmt::format(
                "{}: run {} has no recorded events (it was written before events were recorded, "
                "or by a tool that does not record them)",
                path_, run_id_));
        throw std::invalid_argument(
            fmt::format("{}: run {} has no events for rank {} (ranks with "
                        "events: {})",
                        path_, run_id_, rank, fmt::join(recorded, ", ")));
    }
    std::optional<std::string> problem = broken_numbering(events);
    if (!problem)
        problem = broken_structure(events);
    if (problem)
        throw std::invalid_argument(fmt::format("{}: trace is corrupt: run {} {}: {}", path_,
                                                run_id_, stream_name(rank), *problem));
    return events;
}

std::optional<StateSnapshot> read_snapshot(const traces::TraceReader& reader, std::int64_t run_id,
                                           int rank) {
    for (const traces::StateSnapshotRecord& record : reader.state_snapshots(run_id))
        if (record.rank == rank)
            return StateSnapshot{record.after_sequence, fields_from_json(record.state)};
    return std::nullopt;
}

nlohmann::json recording_to_json(const StateRecorder& recorder, std::int64_t time_origin_ns) {
    const auto on_run_clock = [&](Event event) {
        if (event.time_ns)
            *event.time_ns -= time_origin_ns;
        return event_to_json(event);
    };
    nlohmann::json events = nlohmann::json::array();
    for (const Event& event : recorder.events())
        events.push_back(on_run_clock(event));
    nlohmann::json failures = nlohmann::json::array();
    for (const EventFailure& failure : recorder.failures())
        failures.push_back({{"event", on_run_clock(failure.event)}, {"message", failure.message}});
    return {{"events", std::move(events)},
            {"state", nlohmann::json::parse(fields_to_json(state_fields(recorder.state())))},
            {"failures", std::move(failures)}};
}

RecordingParts recording_from_json(const nlohmann::json& json) {
    RecordingParts parts;
    for (const nlohmann::json& event : json.at("events"))
        parts.events.push_back(event_from_json(event));
    parts.state = fields_from_json(json.at("state").dump());
    for (const nlohmann::json& failure : json.at("failures"))
        parts.failures.push_back(
            {event_from_json(failure.at("event")), failure.at("message").get<std::string>()});
    return parts;
}

traces::ActionRecord action_record(const Schedule& lowered, int rank, int step) {
    const Action& action = lowered.ranks[rank][step];
    traces::ActionRecord record;
    record.rank = rank;
    record.step = step;
    record.lane = uses_communication_stream(action.kind) ? traces::ActionLane::communication
                                                         : traces::ActionLane::compute;
    record.kind = static_cast<std::uint8_t>(action.kind);
    record.stage = action.stage;
    record.microbatch = action.microbatch;
    if (action.kind == ActionKind::overlap_forward_backward)
        for (const Action& part : lowered.parts_of(action))
            record.parts.push_back(
                {static_cast<std::uint8_t>(part.kind), part.stage, part.microbatch});
    record.pair_id = is_communication(action.kind) ? action.link : kNoPair;
    return record;
}

}  // namespace pipelens::recorder
