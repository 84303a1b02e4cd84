// Deferred receives in time: Interleaved1F1B pp=4 v=2 m=8 with F = I = W = 1 ms and a 300 us
// link. Where a RECV sits cannot matter while data is in flight as soon as the send is issued
// (the zero-bubble paper's model): the timelines are identical. With rendezvous transfers (a
// transfer starts once its RECV is posted too, as NCCL and Gloo behave) a deferred receive is
// posted only after the computation before it, so the link's latency shows before each consumer
// whose input was already sent. The warm-up bubble does not move (the downstream chain sets the
// pace until the first backward); the steady state and the step time grow by whole latencies.
#include <gtest/gtest.h>

#include <vector>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulator.hpp"

namespace pipelens::sim {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kLatency = 300'000;

CostModel costs(bool rendezvous) {
    CostModel model;
    model.stages = {StageCost{kMs, kMs, kMs, std::nullopt}};
    model.intra_host.latency_ns = model.inter_host.latency_ns = kLatency;
    model.rendezvous = rendezvous;
    return model;
}

Schedule lowered(bool defer) {
    LoweringOptions options;
    options.defer_receives = defer;
    return lower(generate_schedule({ScheduleKind::interleaved_1f1b, 4, 2, 8}), options);
}

// Per rank, idle compute time before its first backward starts.
std::vector<std::int64_t> warm_up_phase_idle(const Schedule& schedule,
                                             const SimulationResult& result) {
    std::vector<std::int64_t> idle;
    for (int rank = 0; rank < schedule.rank_count; ++rank) {
        std::int64_t busy = 0;
        for (std::size_t step = 0; step < schedule.ranks[rank].size(); ++step) {
            const Action& action = schedule.ranks[rank][step];
            const TimelineEntry& entry = result.timeline[result.first_entry[rank] + step];
            if (action.kind == ActionKind::full_backward) {
                idle.push_back(entry.start_ns - busy);
                break;
            }
            if (action.kind == ActionKind::forward)
                busy += entry.end_ns - entry.start_ns;
        }
    }
    return idle;
}

TEST(DeferredReceivesInTime, WithoutRendezvousWhereARecvSitsChangesNothing) {
    const Schedule eager = lowered(false), deferred = lowered(true);
    const SimulationResult a = simulate(eager, costs(false));
    const SimulationResult b = simulate(deferred, costs(false));
    EXPECT_EQ(a.step_time_ns, b.step_time_ns);
    EXPECT_EQ(warm_up_phase_idle(eager, a), warm_up_phase_idle(deferred, b));
    for (int rank = 0; rank < 4; ++rank) {
        EXPECT_EQ(a.ranks[rank].bubbles.warmup_ns, b.ranks[rank].bubbles.warmup_ns);
        EXPECT_EQ(a.ranks[rank].bubble_ns, b.ranks[rank].bubble_ns);
    }
}

TEST(DeferredReceivesInTime, WithRendezvousDeferralExposesTheLatency) {
    const Schedule eager = lowered(false), deferred = lowered(true);
    const SimulationResult a = simulate(eager, costs(true));
    const SimulationResult b = simulate(deferred, costs(true));
    // Idle before the first computation: rank r waits r forwards and r latencies either way.
    for (int rank = 0; rank < 4; ++rank) {
        EXPECT_EQ(a.ranks[rank].bubbles.warmup_ns, rank * (kMs + kLatency));
        EXPECT_EQ(b.ranks[rank].bubbles.warmup_ns, rank * (kMs + kLatency));
    }
    // Up to the first backward the downstream chain sets the pace, so the later forwards a
    // deferral delays still finish in time: the warm-up phase idles alike, 6 ms - r x 300 us.
    const std::vector<std::int64_t> phase = {6'000'000, 5'700'000, 5'400'000, 5'100'000};
    EXPECT_EQ(warm_up_phase_idle(eager, a), phase);
    EXPECT_EQ(warm_up_phase_idle(deferred, b), phase);
    // In the steady state each receive posted behind a computation whose input was already
    // sent costs one latency: 15 of them on the critical path, 61.2 ms -> 65.7 ms.
    EXPECT_EQ(a.step_time_ns, simulate(eager, costs(false)).step_time_ns);
    EXPECT_EQ(a.step_time_ns, 61'200'000);
    EXPECT_EQ(b.step_time_ns, 61'200'000 + 15 * kLatency);
    for (int rank = 0; rank < 4; ++rank) {
        EXPECT_EQ(a.ranks[rank].bubble_ns, 13'200'000);
        EXPECT_EQ(b.ranks[rank].bubble_ns, 13'200'000 + 15 * kLatency);
    }
}

}  // namespace
}  // namespace pipelens::sim
