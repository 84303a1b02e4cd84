// Training steps of a recorded run (training_steps.hpp).
#include "engine/analysis/training_steps.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace pipelens::analysis {
namespace {

// Counts the occurrences of each action text on one rank. A plain action's text is its stage,
// kind and microbatch (any negative microbatch is written as none), so those key it without
// building the text, which a run of millions of actions would pay for: a dense counter for the
// rank's own stages (where a schedule keeps each rank), a hash table for anything else and for
// a header too large to be the run's; an OVERLAP_F_B's text is its parts'.
class TextOccurrences {
  public:
    // `local[stage]`: the stage's position among its rank's `local_count` stages.
    TextOccurrences(const Schedule& schedule, int rank, const std::vector<int>& local,
                    std::size_t local_count)
        : schedule_(schedule),
          rank_(rank),
          local_(local),
          per_kind_(static_cast<std::size_t>(std::max(schedule.microbatch_count, 0)) + 1) {
        const std::size_t slots = local_count * kActionKindCount * per_kind_;
        if (slots <= 16 * schedule.ranks[static_cast<std::size_t>(rank)].size() + 4096)
            dense_.assign(slots, 0);
    }

    std::int32_t next(const Action& action) {
        if (action.kind == ActionKind::overlap_forward_backward)
            return overlaps_[schedule_.text(action)]++;
        const int microbatch = std::max(action.microbatch, -1);
        if (!dense_.empty() && own_stage(action.stage) &&
            static_cast<std::size_t>(microbatch + 1) < per_kind_)
            return dense_[(local_[static_cast<std::size_t>(action.stage)] * kActionKindCount +
                           static_cast<std::size_t>(action.kind)) *
                              per_kind_ +
                          static_cast<std::size_t>(microbatch + 1)]++;
        const std::uint64_t key =
            static_cast<std::uint64_t>(static_cast<std::uint32_t>(action.stage)) << 32 |
            static_cast<std::uint32_t>(microbatch);
        return plain_[static_cast<std::size_t>(action.kind)][key]++;
    }

  private:
    bool own_stage(int stage) const {
        return stage >= 0 && static_cast<std::size_t>(stage) < local_.size() &&
               schedule_.stage_to_rank[static_cast<std::size_t>(stage)] == rank_;
    }

    const Schedule& schedule_;
    int rank_;
    const std::vector<int>& local_;
    std::size_t per_kind_;  // microbatch + 1 of a dense slot: none, 0, 1, ...
    std::vector<std::int32_t> dense_;
    std::array<std::unordered_map<std::uint64_t, std::int32_t>, kActionKindCount> plain_;
    std::unordered_map<std::string, std::int32_t> overlaps_;
};

// The run's shape without its actions. Not a copy of the run cleared: cleared vectors keep their
// capacity, and every step would hold the whole run's worth (memory quadratic in the steps).
TimedSchedule empty_like(const TimedSchedule& run) {
    TimedSchedule step;
    step.schedule = pipelens::empty_like(run.schedule);
    step.schedule.has_communication = run.schedule.has_communication;
    step.schedule.pair_count = run.schedule.pair_count;
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

std::int32_t count_of(const std::vector<std::vector<std::int32_t>>& numbers) {
    std::int32_t step_count = 0;
    for (const auto& rank : numbers)
        for (std::int32_t step : rank)
            step_count = std::max(step_count, step + 1);
    return std::max(step_count, 1);
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
    std::vector<int> local(schedule.stage_to_rank.size(), -1);
    std::vector<std::size_t> local_count(schedule.ranks.size(), 0);
    for (std::size_t stage = 0; stage < local.size(); ++stage) {
        const int rank = schedule.stage_to_rank[stage];
        if (rank >= 0 && static_cast<std::size_t>(rank) < local_count.size())
            local[stage] = static_cast<int>(local_count[static_cast<std::size_t>(rank)]++);
    }
    std::vector<std::vector<std::int32_t>> steps(schedule.ranks.size());
    for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
        TextOccurrences seen(schedule, static_cast<int>(rank), local, local_count[rank]);
        steps[rank].reserve(schedule.ranks[rank].size());
        for (const Action& action : schedule.ranks[rank])
            steps[rank].push_back(seen.next(action));
    }
    return steps;
}

std::vector<std::vector<traces::ActionRecord>> split_by_training_step(
    const std::vector<traces::ActionRecord>& actions) {
    std::vector<std::size_t> by_time(actions.size());
    for (std::size_t index = 0; index < by_time.size(); ++index)
        by_time[index] = index;
    std::stable_sort(by_time.begin(), by_time.end(), [&](std::size_t left, std::size_t right) {
        return std::tie(actions[left].start_ns, actions[left].step) <
               std::tie(actions[right].start_ns, actions[right].step);
    });
    std::vector<int> step_of(actions.size());
    std::map<std::pair<std::int32_t, std::string>, int> seen;
    int step_count = 0;
    for (std::size_t index : by_time) {
        step_of[index] = seen[{actions[index].rank, actions[index].label}]++;
        step_count = std::max(step_count, step_of[index] + 1);
    }
    std::vector<std::vector<traces::ActionRecord>> steps(static_cast<std::size_t>(step_count));
    for (std::size_t index = 0; index < actions.size(); ++index)
        steps[static_cast<std::size_t>(step_of[index])].push_back(actions[index]);
    return steps;
}

std::int32_t training_step_count(const Schedule& schedule) {
    return count_of(action_steps(schedule));
}

std::vector<TrainingStep> training_steps(const TimedSchedule& run) {
    const auto numbers = action_steps(run.schedule);
    std::vector<TrainingStep> steps(static_cast<std::size_t>(count_of(numbers)));
    for (TrainingStep& step : steps)
        step.timed = empty_like(run);
    for (std::size_t rank = 0; rank < run.times.size(); ++rank)
        for (std::size_t index = 0; index < run.times[rank].size(); ++index)
            append(run, rank, index, steps[static_cast<std::size_t>(numbers[rank][index])].timed);
    for (TrainingStep& step : steps)
        shift(step);
    return steps;
}

std::optional<std::size_t> median_step(const std::vector<std::int64_t>& step_times_ns,
                                       std::int64_t median_step_time_ns) {
    const auto found = std::find(step_times_ns.begin(), step_times_ns.end(), median_step_time_ns);
    if (found == step_times_ns.end())
        return std::nullopt;
    return static_cast<std::size_t>(found - step_times_ns.begin());
}

}  // namespace pipelens::analysis
