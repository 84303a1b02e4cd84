// `pipelens run --steps N --warmup K` as a user runs it: N recorded steps laid one after another
// on the run's clock in the trace (each rank's whole action list once per step, no step
// overlapping the next), the JSON's step-time spread in order, the trace still read by
// `summary` and `diff`, and step counts that are not counts refused as usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;
using testing::run_pipelens;

struct RecordedAction {
    int index = 0;  // the trace's `step`: the action's index in its rank's list
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

// One rank's recorded actions of one run, in time order.
std::vector<RecordedAction> rank_actions(const std::filesystem::path& trace, int run, int rank) {
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    std::vector<RecordedAction> actions;
    for (const std::string& row :
         raw.rows("SELECT step || ' ' || start_ns || ' ' || end_ns FROM actions WHERE run_id = " +
                  std::to_string(run) + " AND rank = " + std::to_string(rank) +
                  " ORDER BY start_ns, step")) {
        RecordedAction action;
        std::sscanf(row.c_str(), "%d %ld %ld", &action.index, &action.start_ns, &action.end_ns);
        actions.push_back(action);
    }
    return actions;
}

TEST(RunStepsCli, ThreeRecordedStepsFollowOneAnotherWithTheirSpread) {
    const auto trace = fresh_trace("run_steps");
    const auto many = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --model mlp --steps 3 --warmup 1 --json --out " +
        trace.string());
    ASSERT_EQ(many.exit_code, 0) << many.err;
    const auto once =
        run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp --json --out " + trace.string());
    ASSERT_EQ(once.exit_code, 0) << once.err;

    const auto json = nlohmann::json::parse(many.out);
    const auto& steps = json["steps"];
    EXPECT_EQ(steps["recorded"], 3);
    EXPECT_EQ(steps["warmup"], 1);
    ASSERT_EQ(steps["times_ns"].size(), 3u);
    const auto figure = [&](const char* name) { return steps[name].get<std::int64_t>(); };
    EXPECT_GT(figure("min_ns"), 0);
    EXPECT_LE(figure("min_ns"), figure("p10_ns"));
    EXPECT_LE(figure("p10_ns"), figure("median_ns"));
    EXPECT_LE(figure("median_ns"), figure("p90_ns"));
    EXPECT_LE(figure("p90_ns"), figure("max_ns"));
    EXPECT_EQ(json["step_time_ns"], steps["median_ns"]);
    EXPECT_EQ(nlohmann::json::parse(once.out)["steps"]["times_ns"].size(), 1u);

    for (int rank = 0; rank < 2; ++rank) {
        SCOPED_TRACE(rank);
        const std::vector<RecordedAction> one = rank_actions(trace, 2, rank);
        const std::vector<RecordedAction> three = rank_actions(trace, 1, rank);
        ASSERT_FALSE(one.empty());
        ASSERT_EQ(three.size(), 3 * one.size());
        std::set<int> indices;
        for (const RecordedAction& action : one)
            indices.insert(action.index);
        std::int64_t previous_end = three.front().start_ns;
        for (int step = 0; step < 3; ++step) {
            const auto first = three.begin() + static_cast<std::ptrdiff_t>(step * one.size());
            const std::vector<RecordedAction> part(first,
                                                   first + static_cast<std::ptrdiff_t>(one.size()));
            std::set<int> seen;
            std::int64_t start = part.front().start_ns, end = part.front().end_ns;
            for (const RecordedAction& action : part) {
                seen.insert(action.index);
                start = std::min(start, action.start_ns);
                end = std::max(end, action.end_ns);
            }
            EXPECT_EQ(seen, indices) << "step " << step << " holds each action once";
            EXPECT_GE(start, previous_end) << "step " << step << " begins after the last ended";
            EXPECT_GT(end, start);
            previous_end = end;
        }
    }

    const auto summary = run_pipelens("summary --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto runs = nlohmann::json::parse(summary.out)["runs"];
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0]["status"], "finished");
    EXPECT_EQ(runs[0]["step_time_ns"], json["step_time_ns"]);
    const auto simulated = fresh_trace("run_steps_sim");
    ASSERT_EQ(
        run_pipelens("simulate --schedule 1F1B --pp 2 --m 4 --out " + simulated.string()).exit_code,
        0);
    const auto diff = run_pipelens("diff " + trace.string() + " " + simulated.string() + " --json");
    ASSERT_EQ(diff.exit_code, 0) << diff.err;
    EXPECT_FALSE(nlohmann::json::parse(diff.out)["steps"].empty());
}

TEST(RunStepsCli, TextReportGivesTheSpreadOfSeveralSteps) {
    const auto result =
        run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp --steps 2 --warmup 0");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("2 steps recorded after 0 warm-up: step time median "),
              std::string::npos)
        << result.out;
}

TEST(RunStepsCli, StepCountsThatAreNotCountsAreUsageErrors) {
    for (const std::string flags : {"--steps 0", "--steps -2", "--warmup -1"}) {
        SCOPED_TRACE(flags);
        const auto result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 " + flags);
        EXPECT_EQ(result.exit_code, 2);
        const std::string flag = flags.substr(0, flags.find(' '));
        EXPECT_EQ(result.err.rfind("pipelens: " + flag + ": ", 0), 0u) << result.err;
    }
}

}  // namespace
}  // namespace pipelens
