// Matching a compared run with the shown one step by step (step_match.hpp).
#include "app/viewer/step_match.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

std::string signed_duration(std::int64_t delta_ns) {
    if (delta_ns == 0)
        return "0 ns";
    return fmt::format("{}{}", delta_ns > 0 ? '+' : '-', format_duration(std::abs(delta_ns)));
}

// The compared step each shown step meets, as run_divergence pairs them.
std::vector<std::optional<int>> pair_steps(std::size_t shown_steps, std::size_t compared_steps) {
    std::vector<std::optional<int>> paired(shown_steps);
    for (std::size_t step = 0; step < shown_steps; ++step)
        if (compared_steps == 1)
            paired[step] = 0;
        else if (step < compared_steps)
            paired[step] = static_cast<int>(step);
    return paired;
}

// Calls visit(at, action, step) for every action of `model`, compute lanes first per rank.
template <typename Visit>
void for_each_action(const TimelineModel& model, const RunSummary& summary, Visit visit) {
    for (const RankTimeline& rank : model.ranks())
        for (bool communication : {false, true}) {
            const Lane& lane = communication ? rank.communication : rank.compute;
            for (std::size_t index = 0; index < lane.actions.size(); ++index) {
                const ActionLocation at{rank.rank, communication, index};
                visit(at, lane.actions[index], step_of(summary.action_steps, at));
            }
        }
}

// The compared run's actions of each matched step, moved onto every shown step that meets it.
std::vector<GhostRank> ghosts_of(const RunSummary& shown, const TimelineModel& compared,
                                 const RunSummary& compared_summary,
                                 const std::vector<std::optional<int>>& paired) {
    std::vector<GhostRank> ghosts(compared.ranks().size());
    for_each_action(
        compared, compared_summary,
        [&](const ActionLocation& at, const TimelineAction& action, int step) {
            GhostRank& rank = ghosts[static_cast<std::size_t>(at.rank)];
            for (std::size_t shown_step = 0; shown_step < paired.size(); ++shown_step) {
                if (paired[shown_step] != step)
                    continue;
                const std::int64_t shift =
                    shown.steps[shown_step].start_ns -
                    compared_summary.steps[static_cast<std::size_t>(step)].start_ns;
                TimelineAction moved = action;
                moved.start_ns += shift;
                moved.end_ns += shift;
                (at.communication ? rank.communication : rank.compute).actions.push_back(moved);
            }
        });
    for (GhostRank& rank : ghosts) {
        index_lane(rank.compute);
        index_lane(rank.communication);
    }
    return ghosts;
}

}  // namespace

StepMatch match_steps(const TimelineModel& shown, const RunSummary& shown_summary,
                      const TimelineModel& compared, const RunSummary& compared_summary) {
    StepMatch match;
    match.compared_step = pair_steps(shown_summary.steps.size(), compared_summary.steps.size());
    // Per compared step, each action's duration by its text.
    std::vector<std::unordered_map<std::string, std::int64_t>> durations(
        compared_summary.steps.size());
    for_each_action(compared, compared_summary,
                    [&](const ActionLocation&, const TimelineAction& action, int step) {
                        durations[static_cast<std::size_t>(step)].emplace(
                            compared.label(action).view(), action.end_ns - action.start_ns);
                    });
    match.durations.assign(static_cast<std::size_t>(shown.label_id_limit()), -1);
    for_each_action(
        shown, shown_summary,
        [&](const ActionLocation& at, const TimelineAction& action, int step) {
            const std::optional<int> other = match.compared_step[static_cast<std::size_t>(step)];
            if (!other)
                return;
            const auto& of_step = durations[static_cast<std::size_t>(*other)];
            const auto found = of_step.find(std::string(shown.label(action).view()));
            if (found == of_step.end())
                return;
            match.durations[action.label] = found->second;
            const std::int64_t delta = (action.end_ns - action.start_ns) - found->second;
            if (!at.communication && delta != 0)
                match.differences.push_back({at, step, delta});
        });
    std::stable_sort(match.differences.begin(), match.differences.end(),
                     [](const ActionDifference& left, const ActionDifference& right) {
                         return std::abs(left.delta_ns) > std::abs(right.delta_ns);
                     });
    match.ghosts = ghosts_of(shown_summary, compared, compared_summary, match.compared_step);
    match.shown_busy = shown_summary.step_busy_ns;
    match.compared_busy = compared_summary.step_busy_ns;
    return match;
}

std::vector<ActionDifference> largest_differences(const StepMatch& match, std::optional<int> step,
                                                  std::size_t count) {
    std::vector<ActionDifference> largest;
    for (const ActionDifference& difference : match.differences) {
        if (largest.size() == count)
            break;
        if (!step || difference.step == *step)
            largest.push_back(difference);
    }
    return largest;
}

std::string difference_text(const TimelineModel& shown, const ActionDifference& difference,
                            bool name_step) {
    const std::string label(shown.label(shown.action(difference.at)).view());
    const std::string name =
        name_step ? fmt::format("{} (step {})", label, difference.step) : label;
    return fmt::format("{:<10} {}", name, signed_duration(difference.delta_ns));
}

std::string step_delta_text(const RunSummary& shown, std::int64_t compared_id,
                            const RunSummary& compared, const StepMatch& match, int step) {
    if (step < 0 || static_cast<std::size_t>(step) >= match.compared_step.size() ||
        !match.compared_step[static_cast<std::size_t>(step)])
        return fmt::format("step {}: run {} has no step to compare", step, compared_id);
    const int other = *match.compared_step[static_cast<std::size_t>(step)];
    const std::int64_t mine = shown.steps[static_cast<std::size_t>(step)].step_ns();
    const std::int64_t theirs = compared.steps[static_cast<std::size_t>(other)].step_ns();
    const std::int64_t delta = mine - theirs;
    return fmt::format("step {} vs run {}'s step {}: {} ({:+.1f}%)", step, compared_id, other,
                       signed_duration(delta),
                       theirs > 0 ? 100.0 * static_cast<double>(delta) / theirs : 0.0);
}

std::vector<std::string> rank_busy_lines(const TimelineModel& shown, const TimelineModel& compared,
                                         const StepMatch& match, std::optional<int> step) {
    // Ranks busy as long in both runs are counted, not listed: sixty-three lines of "busy 0 ns"
    // once pushed the one rank that differs, and the largest differences, out of the sidebar.
    std::vector<std::string> lines;
    std::size_t equal = 0;
    const auto ranks = std::min(shown.ranks().size(), compared.ranks().size());
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        std::int64_t delta =
            shown.ranks()[rank].figures.busy_ns - compared.ranks()[rank].figures.busy_ns;
        if (step) {
            const auto mine = static_cast<std::size_t>(*step);
            if (mine >= match.compared_step.size() || !match.compared_step[mine])
                break;
            const auto theirs = static_cast<std::size_t>(*match.compared_step[mine]);
            delta = match.shown_busy[mine][rank] - match.compared_busy[theirs][rank];
        }
        if (delta == 0) {
            ++equal;
            continue;
        }
        lines.push_back(fmt::format("rank {} busy {}", rank, signed_duration(delta)));
    }
    if (equal > 0)
        lines.push_back(fmt::format("{} {} busy as long in both runs", equal,
                                    equal == 1 ? "rank is" : "ranks are"));
    return lines;
}

}  // namespace pipelens::viewer
