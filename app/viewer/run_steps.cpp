// Finding a run's steps by counting each action's occurrences on its rank (run_steps.hpp).
#include "app/viewer/run_steps.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "traces/text/action_label.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

// What makes an action the same action in the next step. Stage and microbatch fit 24 bits each
// by far (+1 keeps -1 apart); an OVERLAP_F_B has neither and goes by its text instead.
std::uint64_t action_key(const TimelineAction& action, bool communication) {
    const auto field = [](std::int32_t value) {
        return static_cast<std::uint64_t>(static_cast<std::uint32_t>(value + 1) & 0xFFFFFF);
    };
    return (static_cast<std::uint64_t>(action.kind) << 49) |
           (static_cast<std::uint64_t>(communication) << 48) | (field(action.stage) << 24) |
           field(action.microbatch);
}

void add_to_step(std::vector<RunStep>& steps, int step, const TimelineAction& action,
                 bool compute) {
    while (static_cast<int>(steps.size()) <= step) {
        RunStep fresh;
        fresh.step = static_cast<int>(steps.size());
        fresh.start_ns = action.start_ns;
        fresh.end_ns = action.end_ns;
        steps.push_back(fresh);
    }
    RunStep& into = steps[static_cast<std::size_t>(step)];
    into.start_ns = std::min(into.start_ns, action.start_ns);
    into.end_ns = std::max(into.end_ns, action.end_ns);
    ++into.action_count;
    if (compute)
        into.busy_ns += action.end_ns - action.start_ns;
}

}  // namespace

double RunStep::bubble_ratio(int ranks) const {
    const std::int64_t span = step_ns() * ranks;
    return span <= 0 ? 0.0 : 1.0 - static_cast<double>(busy_ns) / static_cast<double>(span);
}

std::vector<int> occurrence_numbers(const std::vector<std::uint64_t>& keys) {
    // Each key's count so far in a flat table, open addressing, at most half full.
    const int bits = std::bit_width(std::max<std::size_t>(2 * keys.size(), 16) - 1);
    const std::size_t mask = (std::size_t{1} << bits) - 1;
    std::vector<std::uint64_t> slot_keys(mask + 1);
    std::vector<int> counts(mask + 1, -1);  // -1: a free slot
    std::vector<int> numbers(keys.size());
    for (std::size_t index = 0; index < keys.size(); ++index) {
        const std::uint64_t key = keys[index];
        // Fibonacci hashing: the keys' fields sit in separate bit ranges, the top bits mix them.
        std::size_t slot = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
        while (counts[slot] >= 0 && slot_keys[slot] != key)
            slot = (slot + 1) & mask;
        if (counts[slot] < 0) {
            slot_keys[slot] = key;
            counts[slot] = 0;
        }
        numbers[index] = counts[slot]++;
    }
    return numbers;
}

std::vector<RankActionSteps> number_steps(const TimelineModel& model) {
    std::vector<RankActionSteps> numbers(model.ranks().size());
    std::vector<std::uint64_t> keys;
    for (const RankTimeline& rank : model.ranks()) {
        // The compute lane, then the communication lane: the order occurrences are counted in.
        keys.clear();
        for (const Lane* lane : {&rank.compute, &rank.communication})
            for (const TimelineAction& action : lane->actions)
                if (action.kind != text::kOverlapKind)
                    keys.push_back(action_key(action, lane == &rank.communication));
        const std::vector<int> occurrences = occurrence_numbers(keys);
        std::size_t next_key = 0;
        std::map<std::string, int, std::less<>> overlaps_seen;
        RankActionSteps& into = numbers[static_cast<std::size_t>(rank.rank)];
        for (const Lane* lane : {&rank.compute, &rank.communication}) {
            auto& steps = lane == &rank.compute ? into.compute : into.communication;
            steps.reserve(lane->actions.size());
            for (const TimelineAction& action : lane->actions)
                steps.push_back(action.kind == text::kOverlapKind
                                    ? overlaps_seen[std::string(model.label(action).view())]++
                                    : occurrences[next_key++]);
        }
    }
    return numbers;
}

std::vector<RunStep> find_steps(const TimelineModel& model) {
    return find_steps(model, number_steps(model));
}

std::vector<RunStep> find_steps(const TimelineModel& model,
                                const std::vector<RankActionSteps>& numbers) {
    std::vector<RunStep> steps;
    for (const RankTimeline& rank : model.ranks()) {
        const RankActionSteps& of = numbers[static_cast<std::size_t>(rank.rank)];
        for (std::size_t index = 0; index < rank.compute.actions.size(); ++index)
            add_to_step(steps, of.compute[index], rank.compute.actions[index], true);
        for (std::size_t index = 0; index < rank.communication.actions.size(); ++index)
            add_to_step(steps, of.communication[index], rank.communication.actions[index], false);
    }
    return steps;
}

std::vector<std::vector<std::int64_t>> busy_by_step(const TimelineModel& model,
                                                    const std::vector<RunStep>& steps,
                                                    const std::vector<RankActionSteps>& numbers) {
    std::vector<std::vector<std::int64_t>> busy(steps.size(),
                                                std::vector<std::int64_t>(model.ranks().size()));
    for (const RankTimeline& rank : model.ranks()) {
        if (static_cast<std::size_t>(rank.rank) >= numbers.size())
            continue;
        const RankActionSteps& of = numbers[static_cast<std::size_t>(rank.rank)];
        for (std::size_t index = 0; index < rank.compute.actions.size(); ++index) {
            const auto step = static_cast<std::size_t>(of.compute[index]);
            const TimelineAction& action = rank.compute.actions[index];
            if (step < busy.size())
                busy[step][static_cast<std::size_t>(rank.rank)] += action.end_ns - action.start_ns;
        }
    }
    return busy;
}

int step_of(const std::vector<RankActionSteps>& numbers, const ActionLocation& at) {
    if (at.rank < 0 || static_cast<std::size_t>(at.rank) >= numbers.size())
        return 0;
    const RankActionSteps& of = numbers[static_cast<std::size_t>(at.rank)];
    const auto& steps = at.communication ? of.communication : of.compute;
    return at.index < steps.size() ? steps[at.index] : 0;
}

std::optional<ActionLocation> copy_in_step(const TimelineModel& model,
                                           const std::vector<RankActionSteps>& numbers,
                                           const ActionLocation& at, int step) {
    if (step_of(numbers, at) == step)
        return at;
    const Lane& lane = model.lane(at);
    const TimelineAction& action = lane.actions[at.index];
    const std::string text(model.label(action).view());
    for (std::size_t index = 0; index < lane.actions.size(); ++index) {
        const ActionLocation copy{at.rank, at.communication, index};
        if (step_of(numbers, copy) == step && lane.actions[index].kind == action.kind &&
            model.label(lane.actions[index]).view() == text)
            return copy;
    }
    return std::nullopt;
}

std::pair<std::int64_t, std::int64_t> step_range(const std::vector<RunStep>& steps,
                                                 std::optional<int> chosen, TimeSpan run) {
    if (!chosen || *chosen < 0 || *chosen >= static_cast<int>(steps.size()))
        return {run.start_ns, run.end_ns};
    const RunStep& step = steps[static_cast<std::size_t>(*chosen)];
    return {step.start_ns, step.end_ns};
}

TimelineGeometry fitted_step_geometry(float window_width, const std::vector<RunStep>& steps,
                                      std::optional<int> chosen, TimeSpan run) {
    TimelineGeometry geometry = fitted_geometry(window_width, run);
    if (!chosen || *chosen < 0 || *chosen >= static_cast<int>(steps.size()))
        return geometry;
    const auto [start, end] = step_range(steps, chosen, run);
    const std::int64_t margin = (end - start) / 50;
    geometry.view_start = start - margin;
    geometry.view_end = std::max(geometry.view_start + 1, end + margin);
    return geometry;
}

bool last_step_incomplete(const std::vector<RunStep>& steps, bool run_running) {
    return run_running && steps.size() >= 2 &&
           steps.back().action_count < steps.front().action_count;
}

std::string incomplete_step_text(const RunStep& step, std::int64_t complete, bool writing) {
    return fmt::format("step {}: {}, {} of {} actions{}", step.step,
                       writing ? "in progress" : "incomplete", step.action_count, complete,
                       writing ? " so far" : "");
}

std::string step_figures_text(const RunStep& step, int ranks) {
    return fmt::format("step {}: {}, bubble {:.1f}%", step.step, format_duration(step.step_ns()),
                       step.bubble_ratio(ranks) * 100);
}

}  // namespace pipelens::viewer
