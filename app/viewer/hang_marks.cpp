// A hang report's links located on a timeline (hang_marks.hpp).
#include "app/viewer/hang_marks.hpp"

#include <algorithm>

namespace pipelens::viewer {
namespace {

HangWait wait_of(const TimelineModel& model, const WaitLink& link, bool in_cycle) {
    HangWait wait;
    wait.rank = link.rank;
    wait.stuck = find_step(model, link.rank, link.step);
    if (link.holder_rank >= 0 && link.holder_step >= 0)
        wait.needed = find_step(model, link.holder_rank, link.holder_step);
    wait.in_cycle = in_cycle;
    wait.needs = link.needed;
    return wait;
}

}  // namespace

bool HangMarks::in_cycle(int rank) const {
    return std::find(cycle_ranks.begin(), cycle_ranks.end(), rank) != cycle_ranks.end();
}

std::optional<ActionLocation> find_step(const TimelineModel& model, int rank, int step) {
    if (rank < 0 || rank >= static_cast<int>(model.ranks().size()))
        return std::nullopt;
    const RankTimeline& timeline = model.ranks()[static_cast<std::size_t>(rank)];
    for (const bool communication : {false, true}) {
        const Lane& lane = communication ? timeline.communication : timeline.compute;
        for (std::size_t index = 0; index < lane.actions.size(); ++index)
            if (lane.actions[index].step == step)
                return ActionLocation{rank, communication, index};
    }
    return std::nullopt;
}

HangMarks hang_marks(const TimelineModel& model, const HangReport& report) {
    HangMarks marks;
    // A chain that ends at an action nobody runs is no cycle: its ranks are stuck, not circling.
    if (report.closes_cycle())
        for (const WaitLink& link : report.cycle)
            marks.cycle_ranks.push_back(link.rank);
    for (const WaitLink& link : report.cycle)
        marks.waits.push_back(wait_of(model, link, report.closes_cycle()));
    for (const WaitLink& link : report.blocked)
        if (std::none_of(report.cycle.begin(), report.cycle.end(),
                         [&](const WaitLink& in_chain) { return in_chain.rank == link.rank; }))
            marks.waits.push_back(wait_of(model, link, false));
    return marks;
}

}  // namespace pipelens::viewer
