// `pipelens run --steps N --warmup K` as a user runs it: N recorded steps laid one after another
// on the run's clock in the trace (each rank's whole action list once per step, no step
// overlapping the next), the JSON's step-time spread in order, the trace still read by
// `summary` and `diff`, and step counts that are not counts refused as usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
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

    std::vector<std::int64_t> step_first_start(3, INT64_MAX), step_last_end(3, 0);
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
            step_first_start[step] = std::min(step_first_start[step], start);
            step_last_end[step] = std::max(step_last_end[step], end);
        }
    }
    // A step lasts from its earliest action on any rank to its last end, as every reader of the
    // trace cuts it.
    for (int step = 0; step < 3; ++step)
        EXPECT_EQ(steps["times_ns"][step].get<std::int64_t>(),
                  step_last_end[step] - step_first_start[step])
            << "step " << step;

    // The picture's header gives the median step, and how long the drawn timeline of three
    // steps is, never the timeline as the step.
    const auto svg_path = std::filesystem::path(trace.string() + ".svg");
    ASSERT_EQ(
        run_pipelens("export " + trace.string() + " --run 1 --svg " + svg_path.string()).exit_code,
        0);
    const std::string svg = testing::read_file(svg_path);
    const auto header = svg.find(" (the median step; the timeline spans ");
    EXPECT_NE(header, std::string::npos) << svg.substr(0, 2000);
    EXPECT_NE(svg.rfind(">step time ", header), std::string::npos);
    std::filesystem::remove(svg_path);

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

// DualPipeV's overlapped F/B actions record their parts once: the parts are the same every step,
// so a second recorded step is no second copy of them (it was refused as a duplicate row).
TEST(RunStepsCli, OverlappedActionsOfSeveralStepsAreRecorded) {
    const auto trace = fresh_trace("run_steps_overlap");
    const auto run = run_pipelens(
        "run --schedule DualPipeV --pp 2 --m 4 --model mlp --steps 2 --warmup 0 --out " +
        trace.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    // Each step records every OVERLAP_F_B container (stage -1); its two parts are stored once.
    const int containers = std::stoi(raw.value("SELECT count(*) FROM actions WHERE stage = -1"));
    const int per_step = std::stoi(raw.value(
        "SELECT count(*) FROM (SELECT DISTINCT rank, step FROM actions WHERE stage = -1)"));
    EXPECT_GT(per_step, 0);
    EXPECT_EQ(containers, 2 * per_step);
    EXPECT_EQ(raw.value("SELECT count(*) FROM action_parts"), std::to_string(2 * per_step));
}

// Each training step's copy of a SEND/RECV pair is a pair of its own: every pair row joins, on
// (rank, index, pair id), exactly one SEND and one RECV, each its training step's copy (the
// copy's place among its index's rows on its rank), and every transfer belongs to a pair. The
// commands that pair sends with receives read the trace: summary's critical path and
// stragglers, and export's flows, one per pair.
TEST(RunStepsCli, EachStepsPairsJoinThatStepsActionsOnce) {
    const auto trace = fresh_trace("run_steps_pairs");
    const auto run = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 2 --model mlp --steps 3 "
        "--warmup 0 --out " +
        trace.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;

    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    const std::string pairs_per_step =
        raw.value("SELECT count(*) FROM pairs WHERE training_step = 0");
    ASSERT_NE(pairs_per_step, "0");
    EXPECT_EQ(raw.rows("SELECT training_step, count(*) FROM pairs GROUP BY training_step"),
              (std::vector<std::string>{"0|" + pairs_per_step, "1|" + pairs_per_step,
                                        "2|" + pairs_per_step}));
    for (const std::string side : {"send", "recv"}) {
        SCOPED_TRACE(side);
        // Per pair: its step, how many actions it joins, and the joined copy's training step.
        const auto joined = raw.rows(
            "SELECT p.training_step, count(a.step), min((SELECT count(*) FROM actions b WHERE "
            "b.run_id = a.run_id AND b.rank = a.rank AND b.step = a.step AND b.start_ns < "
            "a.start_ns)) FROM pairs p LEFT JOIN actions a ON a.run_id = p.run_id AND a.rank = p." +
            side + "_rank AND a.step = p." + side +
            "_step AND a.pair_id = p.pair_id GROUP BY p.pair_id");
        ASSERT_EQ(std::to_string(joined.size()), raw.value("SELECT count(*) FROM pairs"));
        for (const std::string& row : joined) {
            const std::string step = row.substr(0, row.find('|'));
            EXPECT_EQ(row, step + "|1|" + step);
        }
    }
    EXPECT_EQ(raw.value("SELECT count(*) FROM actions a WHERE a.pair_id >= 0 AND NOT EXISTS "
                        "(SELECT 1 FROM pairs p WHERE p.run_id = a.run_id AND p.pair_id = "
                        "a.pair_id AND ((p.send_rank = a.rank AND p.send_step = a.step) OR "
                        "(p.recv_rank = a.rank AND p.recv_step = a.step)))"),
              "0");

    const auto summary =
        run_pipelens("summary --critical-path --stragglers --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto summarised = nlohmann::json::parse(summary.out)["runs"][0];
    EXPECT_EQ(summarised["stragglers"]["steps"].size(), 3u);
    // The critical path is the median step's, the step the figures are: as long as the step
    // time, not the three steps and the gaps between them.
    const auto& path = summarised["critical_path"];
    EXPECT_EQ(path["steps"], 3);
    EXPECT_EQ(path["length_ns"], summarised["step_time_ns"]);
    // The text names that step as every other surface does, counting from 0.
    const auto text = run_pipelens("summary --critical-path " + trace.string());
    EXPECT_NE(text.out.find("critical path: of step " + path["step"].dump() +
                            " (steps 0-2), the median one: "),
              std::string::npos)
        << text.out;
    // The ranks' figures are that step's, whole: busy and bubble add up to the step time.
    for (const auto& rank : summarised["ranks"])
        EXPECT_EQ(rank["busy_ns"].get<std::int64_t>() + rank["bubble_ns"].get<std::int64_t>(),
                  summarised["step_time_ns"].get<std::int64_t>())
            << rank;
    const auto chrome = trace.string() + ".json";
    const auto exported = run_pipelens("export " + trace.string() + " --chrome " + chrome);
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    std::set<std::int64_t> sent, received;
    const auto flows = nlohmann::json::parse(std::ifstream(chrome));
    for (const auto& event : flows["traceEvents"]) {
        if (event["ph"] == "s") {
            EXPECT_TRUE(sent.insert(event["id"].get<std::int64_t>()).second) << event;
        }
        if (event["ph"] == "f") {
            EXPECT_TRUE(received.insert(event["id"].get<std::int64_t>()).second) << event;
        }
    }
    EXPECT_EQ(std::to_string(sent.size()), raw.value("SELECT count(*) FROM pairs"));
    EXPECT_EQ(sent, received);
    std::filesystem::remove(chrome);
}

// `run` names the stragglers of every recorded step, in text and JSON, as `summary --stragglers`
// does from the same trace. Timings decide which rank is slower, so only what cannot depend on
// them is asserted: with a threshold of 0.0001 every rank of every step is flagged, with 1e9
// none is.
TEST(RunStepsCli, TheReportNamesEveryStepsStragglers) {
    const auto trace = fresh_trace("run_stragglers");
    const std::string command =
        "run --schedule 1F1B --pp 2 --m 4 --model mlp --steps 2 "
        "--warmup 0 --json --out " +
        trace.string();
    const auto all = run_pipelens(command + " --straggler-threshold 0.0001");
    ASSERT_EQ(all.exit_code, 0) << all.err;
    const auto stragglers = nlohmann::json::parse(all.out)["stragglers"];
    EXPECT_EQ(stragglers["threshold"], 0.0001);
    EXPECT_EQ(stragglers["reference"], "other ranks");
    ASSERT_EQ(stragglers["steps"].size(), 2u);
    for (const auto& step : stragglers["steps"]) {
        EXPECT_GT(step["step_time_ns"].get<std::int64_t>(), 0);
        ASSERT_EQ(step["ranks"].size(), 2u);
        for (const auto& rank : step["ranks"]) {
            EXPECT_TRUE(rank["flagged"].get<bool>()) << rank;
            for (const char* field :
                 {"rank", "step", "ratio", "computations", "on_critical_path", "cost_ns"})
                EXPECT_TRUE(rank.contains(field)) << field;
        }
    }
    EXPECT_EQ(stragglers["flagged"].size(), 4u);
    const auto summary =
        run_pipelens("summary --json --straggler-threshold 0.0001 --run 1 " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_EQ(nlohmann::json::parse(summary.out)["runs"][0]["stragglers"], stragglers);

    const auto none = run_pipelens(command + " --straggler-threshold 1e9");
    ASSERT_EQ(none.exit_code, 0) << none.err;
    EXPECT_TRUE(nlohmann::json::parse(none.out)["stragglers"]["flagged"].empty());

    const auto text =
        run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp --straggler-threshold 0.0001");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("stragglers (computation time over the other ranks' median of the "
                            "same kind, flagged above 0.00x):\n  rank 0 step 0: "),
              std::string::npos)
        << text.out;
    // Stages of 4 and 2 layers are no reference for each other without a calibration.
    const auto uneven = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --layers 6 --split layers.4 --steps 2 --json");
    ASSERT_EQ(uneven.exit_code, 0) << uneven.err;
    const auto unmeasured = nlohmann::json::parse(uneven.out)["stragglers"];
    EXPECT_EQ(unmeasured["reference"], "none");
    EXPECT_TRUE(unmeasured["steps"].empty());
    EXPECT_EQ(unmeasured["not_measured"],
              "the ranks' stages hold different numbers of layers (rank 0: 4, rank 1: 2), so no "
              "rank's time is a reference for another's; `run --profile` records each stage's own "
              "cost to compare against");
    // Interleaved with v = 2 puts 2 + 1 of 6 layers on each rank: alike, measured as usual.
    const auto interleaved = run_pipelens(
        "run --schedule Interleaved1F1B --pp 2 --v 2 --m 4 --layers 6 --steps 2 --json");
    ASSERT_EQ(interleaved.exit_code, 0) << interleaved.err;
    EXPECT_EQ(nlohmann::json::parse(interleaved.out)["stragglers"]["reference"], "other ranks");
    const auto zero = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --straggler-threshold 0");
    EXPECT_EQ(zero.exit_code, 2);
    EXPECT_EQ(zero.err,
              "pipelens run: --straggler-threshold: 0 is not a ratio above 0 (e.g. 1.2); see "
              "pipelens run --help\n");
}

// Over gloo a rank leaves the barrier before rank 0 does and posts its first RECV early; its
// step starts there. `run`'s step times, its straggler report's and `diff`'s measured steps
// are one and the same figure (they once differed by up to 9 %).
TEST(RunStepsCli, RunStragglersAndDiffTimeAStepAlike) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const auto trace = fresh_trace("run_steps_alike");
    const auto run = run_pipelens(
        "run --schedule ZBVZeroBubble --v 2 --pp 2 --m 4 --model mlp --transport gloo --nproc 2 "
        "--steps 3 --warmup 1 --json --out " +
        trace.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto json = nlohmann::json::parse(run.out);
    const auto& times = json["steps"]["times_ns"];
    const auto& straggler_steps = json["stragglers"]["steps"];
    ASSERT_EQ(times.size(), 3u);
    ASSERT_EQ(straggler_steps.size(), 3u);
    for (std::size_t step = 0; step < 3; ++step)
        EXPECT_EQ(straggler_steps[step]["step_time_ns"], times[step]) << "step " << step;
    const auto simulated = fresh_trace("run_steps_alike_sim");
    ASSERT_EQ(run_pipelens("simulate --schedule ZBVZeroBubble --v 2 --pp 2 --m 4 --out " +
                           simulated.string())
                  .exit_code,
              0);
    const auto diff = run_pipelens("diff " + trace.string() + " " + simulated.string() + " --json");
    ASSERT_EQ(diff.exit_code, 0) << diff.err;
    const auto diff_json = nlohmann::json::parse(diff.out);
    ASSERT_EQ(diff_json["steps"].size(), 3u);
    for (std::size_t step = 0; step < 3; ++step)
        EXPECT_EQ(diff_json["steps"][step]["step_time"]["measured_ns"], times[step])
            << diff_json["steps"][step];
    // The text's per-rank figures are the median step's, as run's and summary's are.
    std::size_t median = 0;
    for (std::size_t step = 0; step < 3; ++step)
        if (times[step] == json["step_time_ns"]) {
            median = step;
            break;
        }
    const auto text = run_pipelens("diff " + trace.string() + " " + simulated.string());
    EXPECT_NE(text.out.find("per rank, step " + std::to_string(median) + ", the median one"),
              std::string::npos)
        << text.out;
}

// A run that fails in a warm-up step recorded no whole step: no step times (the failed step's
// would be the timeout), no loss and no reference comparison, though its actions are kept.
TEST(RunStepsCli, ARunThatFailsBeforeItsFirstWholeStepHasNoStepFigures) {
    const auto trace = fresh_trace("steps_failed_in_warmup");
    const auto result = run_pipelens(
        "run --pp 2 --m 4 --fault stage1=sleep:30s --timeout 2s --steps 3 --warmup 2 --json "
        "--out " +
        trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["steps"]["recorded"], 0) << json["steps"].dump();
    EXPECT_TRUE(json["steps"]["times_ns"].empty()) << json["steps"].dump();
    EXPECT_EQ(json["steps"]["max_ns"], 0);
    EXPECT_TRUE(json["loss"].is_null());
    EXPECT_FALSE(json["reference"]["checked"].get<bool>());
    EXPECT_NE(testing::query_trace(trace, "SELECT COUNT(*) FROM actions"), "0");
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
