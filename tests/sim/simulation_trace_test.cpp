// Recording a simulation: simulate_and_record (which writes the pairs on a second thread while
// the simulation runs) leaves exactly the rows that simulating first and recording afterwards
// leaves; the pairs it writes before any time is known carry the bytes the simulator charges;
// and a schedule that hangs leaves its run recorded as failed with the wait cycle.
#include <gtest/gtest.h>

#include <tuple>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "sim/simulation_trace.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::sim {
namespace {

using pipelens::testing::fresh_trace;

CostModel costs_with_boundaries() {
    CostModel costs;
    costs.stages = {StageCost{1000, 700, 300, std::nullopt}};
    costs.activation_bytes = {100, 200, 300, 400, 500, 600, 700, 800};  // per stage: unequal
    costs.intra_host = {50, 1.0};
    return costs;
}

traces::RunRecord run_of(const Schedule& lowered) {
    traces::RunRecord run;
    run.schedule = lowered.name;
    run.pp = lowered.rank_count;
    run.v = 2;
    run.m = 4;
    return run;
}

auto action_key(const traces::ActionRecord& a) {
    return std::tie(a.rank, a.step, a.lane, a.kind, a.stage, a.microbatch, a.start_ns, a.end_ns,
                    a.bytes, a.pair_id);
}
auto pair_key(const traces::PairRecord& p) {
    return std::tie(p.pair_id, p.send_rank, p.send_step, p.recv_rank, p.recv_step, p.bytes);
}
auto memory_key(const traces::MemoryRecord& m) {
    return std::tie(m.rank, m.time_ns, m.bytes);
}

TEST(SimulationTrace, RecordingWhileSimulatingWritesTheSameRows) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::interleaved_1f1b, 4, 2, 4}));
    const CostModel costs = costs_with_boundaries();
    const auto sequential_path = fresh_trace("sequential");
    const auto overlapped_path = fresh_trace("overlapped");
    const SimulationResult simulated = simulate(lowered, costs);
    {
        traces::TraceWriter writer(sequential_path);
        record_simulation(writer, lowered, costs, simulated, run_of(lowered));
    }
    RecordedSimulation recorded;
    std::size_t last_done = 0, last_total = 0;
    {
        traces::TraceWriter writer(overlapped_path);
        recorded = simulate_and_record(writer, lowered, costs, run_of(lowered),
                                       [&](std::size_t done, std::size_t total) {
                                           last_done = done;
                                           last_total = total;
                                       });
    }
    EXPECT_EQ(recorded.run_id, 1);
    EXPECT_EQ(recorded.result.step_time_ns, simulated.step_time_ns);
    EXPECT_EQ(last_done, simulation_row_count(lowered, simulated));
    EXPECT_EQ(last_total, last_done);

    const traces::TraceReader sequential(sequential_path), overlapped(overlapped_path);
    EXPECT_EQ(overlapped.runs().at(0).status, traces::RunStatus::finished);
    const auto actions = sequential.actions(1), overlapped_actions = overlapped.actions(1);
    ASSERT_EQ(actions.size(), overlapped_actions.size());
    for (std::size_t i = 0; i < actions.size(); ++i)
        EXPECT_EQ(action_key(actions[i]), action_key(overlapped_actions[i])) << "row " << i;
    const auto pairs = sequential.pairs(1), overlapped_pairs = overlapped.pairs(1);
    ASSERT_EQ(pairs.size(), static_cast<std::size_t>(lowered.pair_count));
    ASSERT_EQ(overlapped_pairs.size(), pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i)
        EXPECT_EQ(pair_key(pairs[i]), pair_key(overlapped_pairs[i])) << "pair " << i;
    const auto memory = sequential.memory(1), overlapped_memory = overlapped.memory(1);
    ASSERT_EQ(memory.size(), overlapped_memory.size());
    for (std::size_t i = 0; i < memory.size(); ++i)
        EXPECT_EQ(memory_key(memory[i]), memory_key(overlapped_memory[i])) << "sample " << i;

    // Pairs are written before the simulation: their bytes are what the simulator charged the
    // SEND of the pair, i.e. the activation of the boundary it crosses.
    for (const traces::ActionRecord& action : overlapped_actions) {
        if (action.pair_id < 0)
            continue;
        EXPECT_EQ(overlapped_pairs.at(action.pair_id).bytes, action.bytes);
        const auto kind = static_cast<ActionKind>(action.kind);
        const int boundary = kind == ActionKind::send_forward || kind == ActionKind::recv_backward
                                 ? action.stage
                                 : action.stage - 1;
        EXPECT_EQ(action.bytes, (boundary + 1) * 100);
    }
}

TEST(SimulationTrace, AHangingScheduleLeavesItsRunFailedWithTheWaitCycle) {
    // The same two ranks, once in a working order and once with each receive moved first, so
    // that both ranks wait for a SEND the other never reaches.
    const Schedule working = parse_schedule_csv(
        "0F0,0SEND_F0,0RECV_B0,0B0\n"
        "1RECV_F0,1F0,1B0,1SEND_B0\n",
        "working");
    const Schedule swapped = parse_schedule_csv(
        "0RECV_B0,0F0,0SEND_F0,0B0\n"
        "1RECV_F0,1F0,1B0,1SEND_B0\n",
        "swapped");
    ASSERT_NO_THROW(simulate(working, costs_with_boundaries()));
    const auto path = fresh_trace("hang");
    {
        traces::TraceWriter writer(path);
        EXPECT_THROW(simulate_and_record(writer, swapped, costs_with_boundaries(), run_of(swapped)),
                     ScheduleHangError);
    }
    const traces::TraceReader reader(path);
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, traces::RunStatus::failed);
    EXPECT_NE(runs[0].failure.find("wait cycle"), std::string::npos) << runs[0].failure;
    EXPECT_EQ(reader.pairs(1).size(), 1u + 1u);  // written before the hang was known
    EXPECT_TRUE(reader.actions(1).empty());
}

}  // namespace
}  // namespace pipelens::sim
