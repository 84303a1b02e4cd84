// Sharding decisions written as a run (engine/run_record/sharding_record.hpp) into a real trace
// and read back: the run's fields, one row per decision in order with the sharding model's own
// texts, and one decide_sharding event per decision naming the chosen spec.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/run_record/sharding_record.hpp"
#include "engine/sharding/op_text.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::run_record {
namespace {

const sharding::DeviceMesh kMesh = sharding::parse_device_mesh("tp=4");

std::vector<sharding::ShardingDecision> two_decisions() {
    return {sharding::propagate(
                sharding::parse_op_call("aten.mm(f32[1024,512](S(1)), f32[512,256](S(0)))", kMesh)),
            sharding::propagate(
                sharding::parse_op_call("aten.sum(f32[8,16](S(1)), [1], True)", kMesh))};
}

std::int64_t write_run(const std::string& path,
                       const std::vector<sharding::ShardingDecision>& decisions) {
    traces::TraceWriter writer(path);
    return record_sharding_run(writer, kMesh, decisions, R"({"block":"op"})");
}

std::vector<traces::EventRecord> decide_events(const traces::TraceReader& reader,
                                               std::int64_t run_id) {
    std::vector<traces::EventRecord> decided;
    for (const traces::EventRecord& event : reader.events(run_id))
        if (event.name == "decide_sharding")
            decided.push_back(event);
    return decided;
}

TEST(ShardingRecord, TheRunIsAFinishedSimulationOnTheMesh) {
    const std::string path = testing::fresh_trace("sharding_run").string();
    const std::int64_t run_id = write_run(path, two_decisions());
    const traces::TraceReader reader(path);
    const traces::RunRecord run = reader.run(run_id);
    EXPECT_EQ(run.kind, traces::RunKind::simulated);
    EXPECT_EQ(run.status, traces::RunStatus::finished);
    EXPECT_EQ(run.schedule, "sharding");
    EXPECT_EQ(run.pp, 4);
    EXPECT_EQ(run.v, 1);
    EXPECT_EQ(run.m, 1);
    EXPECT_EQ(run.config, R"({"block":"op"})");
    EXPECT_EQ(run.step_time_ns, 0);
}

TEST(ShardingRecord, OneRowPerDecisionInOrder) {
    const std::string path = testing::fresh_trace("sharding_rows").string();
    const std::vector<sharding::ShardingDecision> decisions = two_decisions();
    const std::int64_t run_id = write_run(path, decisions);
    const std::vector<traces::ShardingRecord> rows = traces::TraceReader(path).sharding(run_id);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].op,
              "aten.mm.default(Spec(f32[1024, 512](S(1))), Spec(f32[512, 256](S(0)))) on "
              "DeviceMesh((tp=4), 'cuda', stride=(1,)))");
    for (std::size_t index = 0; index < rows.size(); ++index) {
        EXPECT_EQ(rows[index].sequence, static_cast<std::int64_t>(index));
        EXPECT_EQ(rows[index].op, sharding::to_string(decisions[index].schema));
        EXPECT_EQ(rows[index].mesh, "DeviceMesh((tp=4), 'cuda', stride=(1,))");
        EXPECT_EQ(rows[index].strategies, sharding::strategies_json(decisions[index]));
        EXPECT_EQ(rows[index].chosen, static_cast<std::int32_t>(decisions[index].chosen));
        EXPECT_EQ(rows[index].redistributions, sharding::redistributions_json(decisions[index]));
    }
}

TEST(ShardingRecord, EachChoiceIsAStateEventForReplay) {
    const std::string path = testing::fresh_trace("sharding_events").string();
    const std::vector<sharding::ShardingDecision> decisions = two_decisions();
    const std::int64_t run_id = write_run(path, decisions);
    const std::vector<traces::EventRecord> decided =
        decide_events(traces::TraceReader(path), run_id);
    ASSERT_EQ(decided.size(), 2u);
    for (std::size_t index = 0; index < decided.size(); ++index) {
        const nlohmann::json arguments = nlohmann::json::parse(decided[index].arguments);
        EXPECT_EQ(arguments["op"], sharding::to_string(decisions[index].schema));
        EXPECT_EQ(arguments["strategy"], sharding::to_string(decisions[index].chosen_spec()));
        EXPECT_DOUBLE_EQ(arguments["cost_us"].get<double>(),
                         decisions[index].chosen_spec().total_cost());
        EXPECT_EQ(decided[index].rank, -1);
    }
}

TEST(ShardingRecord, NoDecisionsIsStillAFinishedRun) {
    const std::string path = testing::fresh_trace("sharding_none").string();
    const std::int64_t run_id = write_run(path, {});
    const traces::TraceReader reader(path);
    EXPECT_EQ(reader.run(run_id).status, traces::RunStatus::finished);
    EXPECT_TRUE(reader.sharding(run_id).empty());
    EXPECT_TRUE(decide_events(reader, run_id).empty());
}

}  // namespace
}  // namespace pipelens::run_record
