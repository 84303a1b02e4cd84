// Training steps of a recorded run (training_steps.hpp).
#include "engine/analysis/training_steps.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

namespace pipelens::analysis {
namespace {

// The step of each action, index as timed.times: its text's occurrences before it on its rank.
std::vector<std::vector<int>> step_numbers(const TimedSchedule& run, int& step_count) {
    std::vector<std::vector<int>> steps(run.times.size());
    step_count = 0;
    for (std::size_t rank = 0; rank < run.schedule.ranks.size(); ++rank) {
        std::map<std::string, int> seen;
        for (const Action& action : run.schedule.ranks[rank]) {
            const int step = seen[run.schedule.text(action)]++;
            steps[rank].push_back(step);
            step_count = std::max(step_count, step + 1);
        }
    }
    return steps;
}

TimedSchedule empty_like(const TimedSchedule& run) {
    TimedSchedule step;
    step.schedule = run.schedule;
    step.schedule.parts.clear();
    for (auto& actions : step.schedule.ranks)
        actions.clear();
    step.times.resize(run.times.size());
    return step;
}

void append(const TimedSchedule& run, std::size_t rank, std::size_t index, TimedSchedule& step) {
    Action action = run.schedule.ranks[rank][index];
    if (action.kind == ActionKind::overlap_forward_backward) {
        const auto parts = run.schedule.parts_of(action);
        action.link = static_cast<std::int32_t>(step.schedule.parts.size());
        step.schedule.parts.insert(step.schedule.parts.end(), parts.begin(), parts.end());
    }
    step.schedule.ranks[rank].push_back(action);
    step.times[rank].push_back(run.times[rank][index]);
}

void shift(TrainingStep& step) {
    std::int64_t start = std::numeric_limits<std::int64_t>::max();
    for (const auto& spans : step.timed.times)
        for (const ActionSpan& span : spans)
            start = std::min(start, span.start_ns);
    if (start == std::numeric_limits<std::int64_t>::max())
        start = 0;
    step.offset_ns = start;
    for (auto& spans : step.timed.times)
        for (ActionSpan& span : spans) {
            span.start_ns -= start;
            if (span.end_ns >= 0)
                span.end_ns = std::max<std::int64_t>(0, span.end_ns - start);
        }
    step.end_ns = latest_end(step.timed);
}

}  // namespace

std::int64_t latest_end(const TimedSchedule& timed) {
    std::int64_t end = 0;
    for (const auto& spans : timed.times)
        for (const ActionSpan& span : spans)
            end = std::max(end, span.end_ns);
    return end;
}

std::vector<TrainingStep> training_steps(const TimedSchedule& run) {
    int step_count = 0;
    const auto numbers = step_numbers(run, step_count);
    std::vector<TrainingStep> steps(static_cast<std::size_t>(std::max(step_count, 1)));
    for (TrainingStep& step : steps)
        step.timed = empty_like(run);
    for (std::size_t rank = 0; rank < run.times.size(); ++rank)
        for (std::size_t index = 0; index < run.times[rank].size(); ++index)
            append(run, rank, index, steps[static_cast<std::size_t>(numbers[rank][index])].timed);
    for (TrainingStep& step : steps)
        shift(step);
    return steps;
}

}  // namespace pipelens::analysis
