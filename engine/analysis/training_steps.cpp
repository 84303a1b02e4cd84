// Training steps of a recorded run (training_steps.hpp).
#include "engine/analysis/training_steps.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <unordered_map>

namespace pipelens::analysis {
namespace {

// Counts the occurrences of each action text on one rank. A plain action's text is its stage,
// kind and microbatch (any negative microbatch is written as none), so those key it without
// building the text, which a run of millions of actions would pay for; an OVERLAP_F_B's text is
// its parts'.
class TextOccurrences {
  public:
    std::int32_t next(const Schedule& schedule, const Action& action) {
        if (action.kind == ActionKind::overlap_forward_backward)
            return overlaps_[schedule.text(action)]++;
        const auto microbatch = static_cast<std::uint32_t>(std::max(action.microbatch, -1));
        const std::uint64_t key =
            static_cast<std::uint64_t>(static_cast<std::uint32_t>(action.stage)) << 32 | microbatch;
        return plain_[static_cast<std::size_t>(action.kind)][key]++;
    }

  private:
    std::array<std::unordered_map<std::uint64_t, std::int32_t>, kActionKindCount> plain_;
    std::unordered_map<std::string, std::int32_t> overlaps_;
};

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

std::vector<std::vector<std::int32_t>> action_steps(const Schedule& schedule) {
    std::vector<std::vector<std::int32_t>> steps(schedule.ranks.size());
    for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
        TextOccurrences seen;
        steps[rank].reserve(schedule.ranks[rank].size());
        for (const Action& action : schedule.ranks[rank])
            steps[rank].push_back(seen.next(schedule, action));
    }
    return steps;
}

std::vector<TrainingStep> training_steps(const TimedSchedule& run) {
    const auto numbers = action_steps(run.schedule);
    std::int32_t step_count = 0;
    for (const auto& rank : numbers)
        for (std::int32_t step : rank)
            step_count = std::max(step_count, step + 1);
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
