// Binary search over prefix lengths k in [1, n]: "good" is a length known to be fine, "worse" a
// length known to be bad. Two streams whose top-level events are equal up to k have equal states
// up to k (a replay reads nothing but the events), so a divergence search starts at the first
// event that differs and probes it first: a difference that event makes is found exactly, with
// no assumption about what comes after. Past it the search assumes that a difference, once made,
// stays (a later event that undoes it hides it from the probes). Probing n first both replays
// every event (a damaged one is refused, whatever the search finds) and seeds "worse": at most
// 2 + ceil(log2 n) replays; a longer stream's further events take at most 3 + ceil(log2 n') more.
#include "engine/recorder/state_bisect.hpp"

#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "engine/recorder/state_replay.hpp"

namespace pipelens::recorder {
namespace {

// Smallest k in (good, n] with bad(k), given bad(n) and not bad(good); bad is called at most
// ceil(log2 (n - good)) more times.
std::size_t first_bad(std::size_t good, std::size_t n,
                      const std::function<bool(std::size_t)>& bad) {
    std::size_t worse = n;
    while (worse - good > 1) {
        const std::size_t middle = good + (worse - good) / 2;
        if (bad(middle))
            worse = middle;
        else
            good = middle;
    }
    return worse;
}

// The first k in (same, n] with differs(k), probing same + 1 first and then n, where the prefixes
// up to `same` are known to agree; nullopt when neither probe nor the search finds one.
std::optional<std::size_t> first_difference(std::size_t same, std::size_t n,
                                            const std::function<bool(std::size_t)>& differs) {
    if (same >= n)
        return std::nullopt;
    if (differs(same + 1))
        return same + 1;
    if (!differs(n))
        return std::nullopt;
    return first_bad(same + 1, n, differs);
}

// How many top-level events the streams have alike (name and arguments), from the first.
std::size_t common_events(const std::vector<Event>& left, const std::vector<Event>& right) {
    std::size_t count = 0;
    while (count < left.size() && count < right.size() && left[count].name == right[count].name &&
           left[count].arguments == right[count].arguments)
        ++count;
    return count;
}

// The streams agree over the events both have and one goes on: the first of its further events
// after which its state differs from the other's whole stream, if any does (a run without
// --backend records no set_stage_backend, so the shorter stream can end in another state).
void bisect_extra_events(const std::vector<Event>& left_top, const std::vector<Event>& right_top,
                         DivergenceBisection& result) {
    const bool left_longer = left_top.size() > right_top.size();
    const std::vector<Event>& longer = left_longer ? left_top : right_top;
    const std::vector<Event>& shorter = left_longer ? right_top : left_top;
    const std::size_t extra = longer.size() - shorter.size();
    result.further_event_count = extra;
    result.note = fmt::format(
        "the states agree after the {} events both streams have; the {} "
        "stream goes on with {} more",
        result.event_count, left_longer ? "left" : "right", extra);
    const auto whole_shorter = [&] {
        ++result.replays;
        try {
            return state_fields(replay_prefix(shorter, shorter.size()).state());
        } catch (ReplayError& error) {
            error.stream = left_longer ? 1 : 0;
            throw;
        }
    }();
    std::map<std::size_t, std::optional<StateDifference>> probes;
    const auto difference_after = [&](std::size_t more) -> const std::optional<StateDifference>& {
        auto found = probes.find(more);
        if (found == probes.end()) {
            ++result.replays;
            try {
                const auto fields =
                    state_fields(replay_prefix(longer, shorter.size() + more).state());
                found = probes
                            .emplace(more, left_longer ? compare_states(fields, whole_shorter)
                                                       : compare_states(whole_shorter, fields))
                            .first;
            } catch (ReplayError& error) {
                error.stream = left_longer ? 0 : 1;
                throw;
            }
        }
        return found->second;
    };
    difference_after(extra);  // every further event replayed: a damaged one is refused
    const std::optional<std::size_t> more =
        first_difference(0, extra, [&](std::size_t k) { return difference_after(k).has_value(); });
    if (!more)
        return;
    result.found = true;
    (left_longer ? result.left_event : result.right_event) = longer[shorter.size() + *more - 1];
    result.difference = difference_after(*more);
}

}  // namespace

DivergenceBisection bisect_divergence(const std::vector<Event>& left,
                                      const std::vector<Event>& right) {
    const std::vector<Event> left_top = top_level_events(left);
    const std::vector<Event> right_top = top_level_events(right);
    DivergenceBisection result;
    result.event_count = std::min(left_top.size(), right_top.size());
    std::map<std::size_t, std::optional<StateDifference>> probes;
    const auto difference_after = [&](std::size_t count) -> const std::optional<StateDifference>& {
        auto found = probes.find(count);
        if (found == probes.end()) {
            ++result.replays;
            const auto replayed = [&](const std::vector<Event>& top, std::size_t stream) {
                try {
                    return state_fields(replay_prefix(top, count).state());
                } catch (ReplayError& error) {
                    error.stream = stream;
                    throw;
                }
            };
            const auto left_state = replayed(left_top, 0);
            const auto right_state = replayed(right_top, 1);
            found = probes.emplace(count, compare_states(left_state, right_state)).first;
        }
        return found->second;
    };
    if (result.event_count == 0)
        return result;
    difference_after(result.event_count);  // every common event replayed: a damaged one is refused
    const std::optional<std::size_t> count =
        first_difference(common_events(left_top, right_top), result.event_count,
                         [&](std::size_t k) { return difference_after(k).has_value(); });
    if (!count) {
        if (left_top.size() != right_top.size())
            bisect_extra_events(left_top, right_top, result);
        return result;
    }
    result.found = true;
    result.left_event = left_top[*count - 1];
    result.right_event = right_top[*count - 1];
    result.difference = difference_after(*count);
    return result;
}

ErrorBisection bisect_until_error(const std::vector<Event>& events) {
    const std::vector<Event> top = top_level_events(events);
    ErrorBisection result;
    result.event_count = top.size();
    std::map<std::size_t, std::vector<std::string>> probes;
    const auto problems_after = [&](std::size_t count) -> const std::vector<std::string>& {
        auto found = probes.find(count);
        if (found == probes.end()) {
            ++result.replays;
            std::vector<std::string> problems;
            try {
                problems = validate_state(replay_prefix(top, count).state());
            } catch (const ReplayError& error) {
                if (error.failure != ReplayFailure::refused)
                    throw;  // a damaged event or a machine limit is no validation failure
                problems.push_back(error.what());
            }
            found = probes.emplace(count, std::move(problems)).first;
        }
        return found->second;
    };
    if (top.empty() || problems_after(top.size()).empty())
        return result;
    const std::size_t count =
        first_bad(0, top.size(), [&](std::size_t k) { return !problems_after(k).empty(); });
    result.found = true;
    result.event = top[count - 1];
    result.problems = problems_after(count);
    return result;
}

}  // namespace pipelens::recorder
