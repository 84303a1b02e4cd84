// A simulated run as a recorded one reads back (the lowered program and its times), for the
// tests of analyses that compare or re-time runs: exact times from the simulator, no trace file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "engine/analysis/timed_schedule.hpp"
#include "engine/schedule/action_facts.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulator.hpp"

namespace pipelens::analysis::testing {

struct SimulatedRun {
    sim::SimulationResult result;
    TimedSchedule timed;
};

inline SimulatedRun simulate_run(const ScheduleShape& shape, const sim::CostModel& costs) {
    SimulatedRun run;
    const Schedule lowered = lower(generate_schedule(shape));
    run.result = sim::simulate(lowered, costs);
    run.timed = TimedSchedule{lowered, {}, {}, {}};
    run.timed.times.resize(lowered.ranks.size());
    for (std::size_t rank = 0; rank < lowered.ranks.size(); ++rank)
        for (std::size_t step = 0; step < lowered.ranks[rank].size(); ++step) {
            const sim::TimelineEntry& entry =
                run.result.timeline[run.result.first_entry[rank] + step];
            run.timed.times[rank].push_back({entry.start_ns, entry.end_ns,
                                             static_cast<std::int32_t>(step),
                                             entry.lane == sim::Lane::communication, entry.bytes});
        }
    return run;
}

// F = 1000, I = W = 1000 (B = 2000), each transfer 100: exact integers under a 1.5x slowdown.
inline sim::CostModel round_costs(std::vector<double> rank_slowdown = {}) {
    sim::CostModel costs;
    costs.stages = {sim::StageCost{1000, 1000, 1000, std::nullopt}};
    costs.intra_host.latency_ns = 100;
    costs.inter_host.latency_ns = 100;
    costs.rank_slowdown = std::move(rank_slowdown);
    return costs;
}

inline ActionRef find_action(const TimedSchedule& timed, int rank, const std::string& text) {
    const auto& actions = timed.schedule.ranks[static_cast<std::size_t>(rank)];
    for (std::size_t index = 0; index < actions.size(); ++index)
        if (timed.schedule.text(actions[index]) == text)
            return {rank, static_cast<std::int32_t>(index)};
    ADD_FAILURE() << text << " is not on rank " << rank;
    return {};
}

// Host overhead before `action`: it and everything that starts no earlier start `by` later (the
// order the dependencies need is kept; nothing else waits longer).
inline void delay(TimedSchedule& timed, ActionRef action, std::int64_t by) {
    const std::int64_t from = timed.times[action.rank][action.index].start_ns;
    for (auto& spans : timed.times)
        for (ActionSpan& span : spans)
            if (span.start_ns >= from) {
                span.start_ns += by;
                span.end_ns += by;
            }
}

// What the runtime records of the same run: a RECV starts when its rank's thread reaches it in
// program order (posted) and ends when the computation needing it has its data (the later of
// the data's arrival and the thread reaching that computation).
inline TimedSchedule as_the_runtime_records(const TimedSchedule& simulated) {
    TimedSchedule recorded = simulated;
    for (std::size_t rank = 0; rank < recorded.times.size(); ++rank) {
        const auto& actions = recorded.schedule.ranks[rank];
        auto& times = recorded.times[rank];
        std::int64_t reached = 0;
        std::map<std::pair<int, int>, std::size_t> posted;  // stage, microbatch -> RECV
        for (std::size_t index = 0; index < actions.size(); ++index) {
            const Action& action = actions[index];
            if (is_receive(action.kind)) {
                times[index].start_ns = reached;  // the arrival stays in end_ns for now
                posted[{action.stage, action.microbatch}] = index;
                continue;
            }
            if (is_compute(action.kind)) {
                const auto found = posted.find({action.stage, action.microbatch});
                if (found != posted.end()) {
                    ActionSpan& receive = times[found->second];
                    receive.end_ns = std::max(receive.end_ns, reached);
                    posted.erase(found);
                }
            }
            reached = std::max(reached, times[index].end_ns);
        }
    }
    return recorded;
}

// `second` run again after `first`, `gap_ns` after its last end: a two-step run.
inline TimedSchedule two_steps(const TimedSchedule& first, const TimedSchedule& second,
                               std::int64_t gap_ns) {
    std::int64_t end = 0;
    for (const auto& spans : first.times)
        for (const ActionSpan& span : spans)
            end = std::max(end, span.end_ns);
    TimedSchedule run = first;
    for (std::size_t rank = 0; rank < run.times.size(); ++rank)
        for (std::size_t index = 0; index < second.times[rank].size(); ++index) {
            run.schedule.ranks[rank].push_back(second.schedule.ranks[rank][index]);
            ActionSpan span = second.times[rank][index];
            span.start_ns += end + gap_ns;
            span.end_ns += end + gap_ns;
            span.step = static_cast<std::int32_t>(run.times[rank].size());
            run.times[rank].push_back(span);
        }
    return run;
}

}  // namespace pipelens::analysis::testing
