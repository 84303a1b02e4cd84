// Recording and replaying calls. What each call does to the state is its event's apply() in
// event_apply.cpp; here is only the bookkeeping: numbering, nesting, clock and failures.
#include "engine/recorder/state_recorder.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace pipelens::recorder {

void StateRecorder::record(AnyEvent event) {
    Event recorded;
    recorded.sequence = static_cast<std::int64_t>(events_.size());
    recorded.rank = state_.rank;
    if (!open_.empty())
        recorded.parent = open_.back();
    recorded.name = std::string(event_name(event));
    recorded.arguments = event_arguments(event);
    if (clock_)
        recorded.time_ns = clock_();
    const std::size_t position = events_.size();
    open_.push_back(recorded.sequence);
    events_.push_back(std::move(recorded));  // arguments can be a whole CSV schedule: no copy
    try {
        std::visit([&](const auto& kind) { kind.apply(*this); }, event);
    } catch (const std::exception& error) {
        open_.pop_back();
        Event failed = std::move(events_[position]);
        events_.resize(position);  // the event and whatever it made
        if (open_.empty())
            failures_.push_back({std::move(failed), error.what()});
        throw;
    }
    open_.pop_back();
}

StateRecorder::StateRecorder(int rank, std::string run_kind, EventClock clock)
    : clock_(std::move(clock)) {
    state_.rank = rank;  // identity, not state: every event of the stream carries it
    record(ConstructState{rank, std::move(run_kind)});
}

StateRecorder StateRecorder::from_constructor(const Event& constructor) {
    if (constructor.name != ConstructState::kName || constructor.sequence != 0)
        throw std::invalid_argument(
            fmt::format("a replay starts from event 0, {}", ConstructState::kName));
    const auto parsed = std::get<ConstructState>(parse_event(constructor));
    return StateRecorder(parsed.rank, parsed.run_kind);
}

void StateRecorder::replay(const Event& event) {
    if (!event.top_level())
        throw std::invalid_argument(
            fmt::format("it is nested in event {}, which replays it", *event.parent));
    AnyEvent parsed = parse_event(event);
    if (std::holds_alternative<ConstructState>(parsed))
        throw std::invalid_argument(
            fmt::format("{} constructs the state: only event 0 is one", ConstructState::kName));
    if (const std::string_view parent = made_by(parsed); !parent.empty())
        throw std::invalid_argument(
            fmt::format("only {} makes {}, nested under it", parent, event.name));
    record(std::move(parsed));
}

}  // namespace pipelens::recorder
