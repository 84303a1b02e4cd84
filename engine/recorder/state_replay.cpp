// Replay: constructor first, then the top-level events; a failure names the event.
#include "engine/recorder/state_replay.hpp"

#include <new>

#include <fmt/format.h>

#include "engine/recorder/event_table.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/text/shortened.hpp"

namespace pipelens::recorder {
namespace {

// The failure the exception being handled stands for.
ReplayFailure current_failure() {
    try {
        throw;
    } catch (const EventFormatError&) {
        return ReplayFailure::unreadable;
    } catch (const ScheduleTooLargeError&) {
        return ReplayFailure::too_large;
    } catch (const ScheduleSizeLimitError&) {
        return ReplayFailure::too_large;
    } catch (const std::bad_alloc&) {
        return ReplayFailure::too_large;
    } catch (...) {
        return ReplayFailure::refused;
    }
}

}  // namespace

ReplayError::ReplayError(const Event& event, const std::string& message)
    : std::runtime_error(fmt::format("failed when replaying {}: {}", to_string(event), message)),
      event(event),
      failure(std::current_exception() ? current_failure() : ReplayFailure::refused) {}

std::vector<Event> top_level_events(const std::vector<Event>& events) {
    std::vector<Event> top_level;
    for (const Event& event : events)
        if (event.top_level())
            top_level.push_back(event);
    return top_level;
}

StateRecorder replay_prefix(const std::vector<Event>& top_level, std::optional<std::size_t> count) {
    if (top_level.empty())
        throw std::invalid_argument("there are no events to replay");
    const std::size_t end = std::min(count.value_or(top_level.size()), top_level.size());
    StateRecorder recorder = [&] {
        try {
            return StateRecorder::from_constructor(top_level.front());
        } catch (const std::exception& error) {
            throw ReplayError(top_level.front(), error.what());
        }
    }();
    for (std::size_t index = 1; index < end; ++index) {
        try {
            recorder.replay(top_level[index]);
        } catch (const std::exception& error) {
            throw ReplayError(top_level[index], error.what());
        }
    }
    return recorder;
}

StateRecorder replay_events(const std::vector<Event>& events, std::optional<std::int64_t> upto) {
    std::vector<Event> top_level = top_level_events(events);
    std::size_t count = top_level.size();
    if (upto) {
        count = 0;
        while (count < top_level.size() && top_level[count].sequence <= *upto)
            ++count;
        if (count == 0)
            throw std::invalid_argument(fmt::format(
                "--upto {}: the constructor is event 0; nothing comes before it", *upto));
    }
    return replay_prefix(top_level, count);
}

namespace {

// The first key (in the arguments' order) whose value differs between two events' arguments.
std::optional<std::string> first_differing_argument(const Event& left, const Event& right) {
    if (!left.arguments.is_object() || !right.arguments.is_object())
        return std::nullopt;
    for (const auto& [key, value] : left.arguments.items())
        if (!right.arguments.contains(key) || right.arguments.at(key) != value)
            return key;
    for (const auto& [key, value] : right.arguments.items())
        if (!left.arguments.contains(key))
            return key;
    return std::nullopt;
}

}  // namespace

std::optional<std::string> compare_event_streams(const std::vector<Event>& recorded,
                                                 const std::vector<Event>& replayed) {
    const std::size_t common = std::min(recorded.size(), replayed.size());
    for (std::size_t index = 0; index < common; ++index) {
        const Event& left = recorded[index];
        const Event& right = replayed[index];
        if (left.name == right.name && left.parent == right.parent &&
            left.arguments == right.arguments)
            continue;
        // Events alike but for where they nest, or past where their texts are cut short, read
        // the same: say where each is nested, and the first argument they differ in.
        const std::optional<std::string> differing = first_differing_argument(left, right);
        const auto text = [&](const Event& event) {
            std::string shown = to_string(event);
            if (left.parent != right.parent)
                shown += event.parent ? fmt::format(" (nested in event {})", *event.parent)
                                      : std::string(" (not nested)");
            if (differing && to_string(left) == to_string(right))
                shown += fmt::format(" ('{}': {})", *differing,
                                     event.arguments.contains(*differing)
                                         ? shortened(event.arguments.at(*differing).dump(), 300)
                                         : std::string("absent"));
            return shown;
        };
        return fmt::format("the replay made event {} as\n    {}\nbut the trace recorded\n    {}",
                           index, text(right), text(left));
    }
    if (recorded.size() != replayed.size())
        return fmt::format("the trace recorded {} events but the replay made {}", recorded.size(),
                           replayed.size());
    return std::nullopt;
}

}  // namespace pipelens::recorder
