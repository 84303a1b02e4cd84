// A recorded simulation replays: whichever entry point built it (an experiment, as `simulate`,
// a sweep and `import --simulate` do, or a schedule shape under a given cost model, as `plan`
// does), its run carries the schedule's, the transport's and the cost model's events, their
// replay rebuilds the state it recorded, and the cost model read back from the replayed state
// simulates the very step that was recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "engine/recorder/recorded_trace.hpp"
#include "engine/recorder/state_equality.hpp"
#include "engine/recorder/state_replay.hpp"
#include "sim/cost_model_events.hpp"
#include "sim/experiment_simulation.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::sim {
namespace {

using pipelens::testing::fresh_trace;

std::vector<std::string> names_of(const std::vector<recorder::Event>& events) {
    std::vector<std::string> names;
    for (const recorder::Event& event : events)
        if (!event.parent)
            names.push_back(event.name);
    return names;
}

// Run `run_id` of `trace` replays to its snapshot and, simulated again from the replayed
// state, takes `step_time_ns`.
void expect_replays(const std::filesystem::path& trace, std::int64_t run_id,
                    std::int64_t step_time_ns, int stage_count) {
    const traces::TraceReader reader(trace);
    const std::vector<recorder::Event> events = recorder::RecordedEvents(reader, run_id).stream(-1);
    std::vector<std::string> expected{"PipelineState", "choose_schedule", "lower_schedule",
                                      "configure_transport", "set_cost_model"};
    expected.insert(expected.end(), static_cast<std::size_t>(stage_count), "set_stage_costs");
    expected.push_back("plan_buffers");
    EXPECT_EQ(names_of(events), expected);

    const recorder::StateRecorder replayed = recorder::replay_events(events);
    const auto snapshot = recorder::read_snapshot(reader, run_id, -1);
    ASSERT_TRUE(snapshot.has_value());
    const auto difference =
        recorder::compare_states(recorder::state_fields(replayed.state()), snapshot->fields);
    EXPECT_FALSE(difference.has_value()) << recorder::format_state_difference(*difference);
    EXPECT_FALSE(recorder::compare_event_streams(events, replayed.events()).has_value());

    const SimulationResult again =
        simulate(*replayed.state().schedule.schedule, cost_model_from_state(replayed.state()));
    EXPECT_EQ(again.step_time_ns, step_time_ns);
}

TEST(ExperimentSimulation, ARecordedExperimentReplaysWithItsCostModel) {
    const auto trace = fresh_trace("experiment_simulation_experiment");
    Experiment experiment = plain_experiment();
    experiment.shape = {ScheduleKind::one_f_one_b, 2, 1, 4};
    experiment.forward_ns = {1000, 1500};
    experiment.input_ns = {900};
    experiment.weight_ns = {700};
    experiment.activation_bytes = {4096};
    const ExperimentSimulation simulated = simulate_experiment(experiment, trace);
    ASSERT_TRUE(simulated.run_id.has_value());
    EXPECT_GT(simulated.result.step_time_ns, 0);
    expect_replays(trace, *simulated.run_id, simulated.result.step_time_ns, 2);
}

TEST(ExperimentSimulation, ARecordedShapeUnderAGivenCostModelReplaysWithIt) {
    const auto trace = fresh_trace("experiment_simulation_shape");
    CostModel costs;
    costs.stages = {{1000, 800, 600, std::nullopt, 0, 0, 0},
                    {1200, 900, 700, std::nullopt, 0, 0, 0},
                    {1100, 850, 650, std::nullopt, 0, 0, 0},
                    {1300, 950, 750, std::nullopt, 0, 0, 0}};
    costs.activation_bytes = {2048};
    costs.intra_host = {300, 10.0};
    const ScheduleShape shape{ScheduleKind::interleaved_1f1b, 2, 2, 4};
    const ExperimentSimulation simulated = simulate_shape(shape, costs, "{\"plan\":1}", trace);
    ASSERT_TRUE(simulated.run_id.has_value());
    // What was simulated is what the costs say: the recorded cost model is the one given.
    EXPECT_EQ(simulated.result.step_time_ns, simulate(*simulated.lowered, costs).step_time_ns);
    expect_replays(trace, *simulated.run_id, simulated.result.step_time_ns, 4);
    const traces::RunRecord run = traces::TraceReader(trace).run(*simulated.run_id);
    EXPECT_EQ(run.schedule, "Interleaved1F1B");
    EXPECT_EQ(std::tie(run.pp, run.v, run.m), std::make_tuple(2, 2, 4));
    EXPECT_EQ(run.config, "{\"plan\":1}");
}

// Recording after long work (each of a sweep's best configurations) waits for another process
// that writes the file meanwhile (another shard of the sweep) instead of failing with "database
// is locked" and losing what was simulated.
TEST(ExperimentSimulation, ARecordingToldToWaitGetsTheFileOnceTheOtherWriterCloses) {
    const auto trace = fresh_trace("experiment_simulation_waits");
    auto other = std::make_unique<traces::TraceWriter>(trace);
    std::thread closer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        other.reset();
    });
    Experiment experiment = plain_experiment();
    experiment.shape = {ScheduleKind::one_f_one_b, 2, 1, 4};
    const ExperimentSimulation simulated = simulate_experiment(
        experiment, trace, {}, {.wait_for_other_writer = std::chrono::seconds(60)});
    closer.join();
    ASSERT_TRUE(simulated.run_id.has_value());
    EXPECT_EQ(traces::TraceReader(trace).runs().size(), 1u);
}

}  // namespace
}  // namespace pipelens::sim
