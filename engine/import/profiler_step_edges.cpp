// Finding where a profiled window's first whole step begins (profiler_step_edges.hpp).
#include "engine/import/profiler_step_edges.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "engine/schedule/action.hpp"

namespace pipelens::import {
namespace {

std::optional<Action> action_of(const Range& range) {
    std::vector<Action> parts;
    try {
        return parse_action(std::string_view(range.name).substr(3), parts);
    } catch (const ActionParseError&) {
        return std::nullopt;  // refused, naming its byte, when the actions are built
    }
}

// The index of each step's start: the forward of microbatch 0 on the rank's lowest stage,
// moved back over the UNSHARDs and that forward's RECV_F just before it.
std::vector<std::size_t> step_starts(const std::vector<Range>& ranges) {
    std::vector<std::optional<Action>> actions;
    int lowest_stage = -1;
    for (const Range& range : ranges) {
        actions.push_back(is_runtime_name(range.name) ? action_of(range) : std::nullopt);
        const std::optional<Action>& action = actions.back();
        if (action && action->kind == ActionKind::forward)
            lowest_stage = lowest_stage < 0 ? action->stage : std::min(lowest_stage, action->stage);
    }
    std::vector<std::size_t> starts;
    for (std::size_t index = 0; index < ranges.size(); ++index) {
        const std::optional<Action>& action = actions[index];
        if (!action || action->kind != ActionKind::forward || action->stage != lowest_stage ||
            action->microbatch != 0)
            continue;
        std::size_t start = index;
        while (start > 0 && actions[start - 1] &&
               (actions[start - 1]->kind == ActionKind::unshard ||
                (actions[start - 1]->kind == ActionKind::recv_forward &&
                 actions[start - 1]->stage == lowest_stage && actions[start - 1]->microbatch == 0)))
            --start;
        starts.push_back(start);
    }
    return starts;
}

std::vector<std::string> runtime_names(const std::vector<Range>& ranges, std::size_t begin,
                                       std::size_t end) {
    std::vector<std::string> names;
    for (std::size_t index = begin; index < end; ++index)
        if (is_runtime_name(ranges[index].name))
            names.push_back(ranges[index].name);
    return names;
}

}  // namespace

std::size_t drop_leading_partial_step(std::vector<Range>& ranges) {
    const std::vector<std::size_t> starts = step_starts(ranges);
    if (starts.empty() || starts.front() == 0)
        return 0;
    const std::vector<std::string> leading = runtime_names(ranges, 0, starts.front());
    const std::size_t next = starts.size() > 1 ? starts[1] : ranges.size();
    const std::vector<std::string> step = runtime_names(ranges, starts.front(), next);
    // Only the end of the step that follows, name for name, is a step the profile began in.
    if (leading.empty() || leading.size() >= step.size() ||
        !std::equal(leading.rbegin(), leading.rend(), step.rbegin()))
        return 0;
    ranges.erase(ranges.begin(), ranges.begin() + static_cast<std::ptrdiff_t>(starts.front()));
    return leading.size();
}

std::size_t ranges_past_last_step(const std::vector<Range>& ranges, int steps) {
    std::map<std::string, int> seen;
    std::size_t past = 0;
    for (const Range& range : ranges)
        if (is_runtime_name(range.name) && seen[range.name]++ >= steps)
            ++past;
    return past;
}

}  // namespace pipelens::import
