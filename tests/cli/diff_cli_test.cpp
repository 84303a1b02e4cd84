// `pipelens diff` and `pipelens summary --stragglers` as processes, on traces `simulate` writes
// and the tests relabel as real runs: a run against its own simulation is all zeros; rank 1 at
// 1.5x is all speed, flagged with its exact cost; one file can hold both runs; runs that cannot
// be compared are refused with exit 2 naming the file and what differs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens::testing {
namespace {

// A simulation of `schedule` pp = 2 m = 4 in a fresh trace; `real`: relabelled as a real run.
std::filesystem::path simulated(const std::string& name, const std::string& arguments, bool real) {
    const auto path = fresh_trace(name);
    const CommandResult result =
        run_pipelens("simulate --pp 2 --m 4 " + arguments + " --out " + path.string());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    if (real) {
        EXPECT_EQ(edit_trace(path, "UPDATE runs SET kind = 'real'"), 1);
    }
    return path;
}

nlohmann::json diff_json(const std::string& arguments) {
    const CommandResult result = run_pipelens("diff " + arguments + " --json");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return nlohmann::json::parse(result.out);
}

std::int64_t step_time(const std::filesystem::path& trace) {
    return std::stoll(query_trace(trace, "SELECT step_time_ns FROM runs"));
}

TEST(DiffCli, ARunAgainstItsOwnSimulationIsAllZeros) {
    const auto sim = simulated("diff_same_sim", "--schedule 1F1B", false);
    const auto real = simulated("diff_same_real", "--schedule 1F1B", true);
    const nlohmann::json diff = diff_json(real.string() + " " + sim.string());
    ASSERT_EQ(diff["steps"].size(), 1u);
    const nlohmann::json& step = diff["steps"][0];
    EXPECT_EQ(step["step_time"]["difference_ns"], 0);
    EXPECT_EQ(step["step_time"]["measured_ns"], step_time(sim));
    for (const char* part : {"speed_ns", "kinds_ns", "communication_ns", "ordering_ns"})
        EXPECT_EQ(step["split"][part], 0) << part;
    for (const nlohmann::json& rank : step["ranks"])
        for (const char* figure : {"busy", "waiting", "bubble"})
            EXPECT_EQ(rank[figure]["difference_ns"], 0) << figure;
    for (const nlohmann::json& kind : diff["kinds"])
        EXPECT_EQ(kind["median_ratio"], 1.0) << kind["kind"];
    EXPECT_TRUE(diff["unmatched"].empty());
    EXPECT_TRUE(step["waits"].empty());
    EXPECT_EQ(diff["top"].size(), 10u);
    // An action simulated at 0 ns (a free transfer) has no ratio, not 0 ("took no time").
    for (const nlohmann::json& action : diff["top"])
        if (action["simulated_ns"] == 0)
            EXPECT_TRUE(action["ratio"].is_null()) << action;
        else
            EXPECT_EQ(action["ratio"], 1.0) << action;

    const CommandResult text = run_pipelens("diff " + real.string() + " " + sim.string());
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("ordering"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("furthest off"), std::string::npos) << text.out;
}

// A run recorded without its transfers leaves every simulated SEND and RECV on one side only:
// the text names --top of them and counts the rest (it once printed millions of lines); JSON
// lists them all.
TEST(DiffCli, TheTextListsAsManyActionsOnOneSideOnlyAsTopSays) {
    const auto sim = simulated("diff_unmatched_sim", "--schedule 1F1B", false);
    const auto real = simulated("diff_unmatched_real", "--schedule 1F1B", true);
    edit_trace(real, "DELETE FROM pairs");
    EXPECT_EQ(edit_trace(real, "DELETE FROM actions WHERE lane = 1"), 16);
    const CommandResult text =
        run_pipelens("diff " + real.string() + " " + sim.string() + " --top 3");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("\n16 actions on one side only:\n"), std::string::npos) << text.out;
    std::size_t listed = 0;
    for (std::size_t at = text.out.find("  sim only: "); at != std::string::npos;
         at = text.out.find("  sim only: ", at + 1))
        ++listed;
    EXPECT_EQ(listed, 3u) << text.out;
    EXPECT_NE(text.out.find("  ... and 13 more (--json lists all)\n"), std::string::npos)
        << text.out;
    EXPECT_EQ(diff_json(real.string() + " " + sim.string() + " --top 3")["unmatched"].size(), 16u);
}

TEST(DiffCli, ASlowRankIsSpeedAndAStragglerWithItsExactCost) {
    const auto sim = simulated("diff_slow_sim", "--schedule 1F1B", false);
    const auto real = simulated("diff_slow_real", "--schedule 1F1B --rank-slowdown 1,1.5", true);
    const std::int64_t late = step_time(real) - step_time(sim);
    ASSERT_GT(late, 0);
    const nlohmann::json diff = diff_json(real.string() + " " + sim.string() + " --top 2");
    const nlohmann::json& step = diff["steps"][0];
    EXPECT_EQ(step["step_time"]["difference_ns"], late);
    EXPECT_EQ(step["split"]["speed_ns"], late);
    EXPECT_EQ(step["split"]["kinds_ns"], 0);
    EXPECT_EQ(step["split"]["communication_ns"], 0);
    EXPECT_EQ(step["split"]["ordering_ns"], 0);
    EXPECT_EQ(step["at_rank_speed_ns"], step_time(real));
    EXPECT_EQ(step["ranks"][1]["speed"], 1.5);
    EXPECT_EQ(diff["top"].size(), 2u);
    EXPECT_EQ(diff["top"][0]["rank"], 1);
    EXPECT_FALSE(step["waits"].empty());

    const CommandResult summary = run_pipelens("summary " + real.string() + " --stragglers --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const nlohmann::json stragglers = nlohmann::json::parse(summary.out)["runs"][0]["stragglers"];
    ASSERT_EQ(stragglers["flagged"].size(), 1u);
    const nlohmann::json& flagged = stragglers["flagged"][0];
    EXPECT_EQ(flagged["rank"], 1);
    EXPECT_EQ(flagged["ratio"], 1.5);
    EXPECT_EQ(flagged["on_critical_path"], true);
    EXPECT_EQ(flagged["cost_ns"], late);
    EXPECT_DOUBLE_EQ(stragglers["steps"][0]["relative_throughput"].get<double>(), 1 / 1.5);

    // A threshold at the ratio flags nothing; the text says so.
    const CommandResult high =
        run_pipelens("summary " + real.string() + " --straggler-threshold 1.5");
    ASSERT_EQ(high.exit_code, 0) << high.err;
    EXPECT_NE(high.out.find("stragglers"), std::string::npos) << high.out;
    EXPECT_NE(high.out.find("  none"), std::string::npos) << high.out;
    // Without the flag, summary stays as it was.
    EXPECT_EQ(run_pipelens("summary " + real.string()).out.find("stragglers"), std::string::npos);
}

TEST(DiffCli, OneFileCanHoldBothRuns) {
    const auto both = simulated("diff_both", "--schedule GPipe", false);
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --schedule GPipe --rank-slowdown 1.5,1 --out " +
                           both.string())
                  .exit_code,
              0);
    ASSERT_EQ(edit_trace(both, "UPDATE runs SET kind = 'real' WHERE id = 2"), 1);
    const nlohmann::json diff = diff_json(both.string() + " " + both.string());
    EXPECT_EQ(diff["real"]["run"], 2);
    EXPECT_EQ(diff["sim"]["run"], 1);
    EXPECT_EQ(diff["steps"][0]["ranks"][0]["speed"], 1.5);
    EXPECT_GT(diff["steps"][0]["split"]["speed_ns"], 0);
}

// Repeats of one configuration, compared together: their steps pooled, each naming its run.
TEST(DiffCli, SeveralRealRunsArePooledEachStepNamingItsRun) {
    const auto sim = simulated("diff_repeats_sim", "--schedule 1F1B", false);
    const auto real = simulated("diff_repeats_real", "--schedule 1F1B --rank-slowdown 1,1.5", true);
    const std::int64_t late = step_time(real) - step_time(sim);
    ASSERT_GT(late, 0);
    ASSERT_EQ(
        run_pipelens("simulate --pp 2 --m 4 --schedule 1F1B --out " + real.string()).exit_code, 0);
    ASSERT_EQ(edit_trace(real, "UPDATE runs SET kind = 'real' WHERE id = 2"), 1);
    // Runs of one shape but another configuration are not repeats: refused, naming the setting.
    const CommandResult unlike =
        run_pipelens("diff " + real.string() + " " + sim.string() + " --real-run 2,1");
    EXPECT_EQ(unlike.exit_code, 2);
    EXPECT_EQ(unlike.err, "pipelens diff: " + real.string() +
                              " run 1 is not configured as run 2: runs compared together are "
                              "repeats of one configuration ([costs] rank_slowdown is [ 1.0, 1.5 ] "
                              "where run 2 does not set it)\n");
    // As repeats of one configuration, one of whose runs had a slow rank.
    ASSERT_EQ(edit_trace(real,
                         "UPDATE runs SET config = (SELECT config FROM runs WHERE id = 1) "
                         "WHERE id = 2"),
              1);
    const nlohmann::json diff = diff_json(real.string() + " " + sim.string() + " --real-run 2,1");
    EXPECT_EQ(diff["real"]["runs"], nlohmann::json::array({2, 1}));
    EXPECT_EQ(diff["real"]["run"], 2);
    ASSERT_EQ(diff["steps"].size(), 2u);
    EXPECT_EQ(diff["steps"][0]["real_run"], 2);
    EXPECT_EQ(diff["steps"][0]["step_time"]["difference_ns"], 0);
    EXPECT_EQ(diff["steps"][1]["real_run"], 1);
    EXPECT_EQ(diff["steps"][1]["real_step"], 0);
    EXPECT_EQ(diff["steps"][1]["split"]["speed_ns"], late);
    EXPECT_EQ(diff["over_steps"]["steps"], 2);
    EXPECT_EQ(diff["over_steps"]["median_step_time"]["measured_ns"], step_time(sim) + late);
    EXPECT_EQ(diff["over_steps"]["mean_split"]["speed_ns"], late / 2);
    EXPECT_EQ(diff["top"][0]["real_run"], 1);
    // Repeating the option lists the same runs.
    EXPECT_EQ(diff_json(real.string() + " " + sim.string() + " --real-run 2 --real-run 1")["steps"],
              diff["steps"]);

    const CommandResult text =
        run_pipelens("diff " + real.string() + " " + sim.string() + " --real-run 2,1");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("real: " + real.string() + " run 2 (real, 1F1B pp=2 v=1 m=4)\nreal: " +
                            real.string() + " run 1 (real,"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("run:step"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("     1:0 "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("over 2 steps of 2 runs: "), std::string::npos) << text.out;

    // A run named twice would count its steps twice; a run of another configuration is refused
    // as a lone one is.
    CommandResult result =
        run_pipelens("diff " + real.string() + " " + sim.string() + " --real-run 1,2,1");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens diff: --real-run names run 1 twice: each run's steps count once\n");
    // A stray comma is refused, not read as the runs around it, in CLI11's bracketed form too.
    for (const std::string list : {"1,2,", "1,,2", ",1", "[1,,2]"}) {
        result = run_pipelens("diff " + real.string() + " " + sim.string() + " --real-run '" +
                              list + "'");
        EXPECT_EQ(result.exit_code, 2) << list;
        EXPECT_EQ(result.err, "pipelens diff: --real-run: '" + list +
                                  "' has an empty entry (list runs as 1,2,3); see pipelens diff "
                                  "--help\n");
    }
    // A leading zero is decimal, as everywhere a run is named (CLI11 read 010 as octal 8).
    for (const std::string option : {" --real-run 010", " --sim-run 010"}) {
        result = run_pipelens("diff " + real.string() + " " + sim.string() + option);
        EXPECT_EQ(result.exit_code, 2);
        EXPECT_NE(result.err.find(": no run 10 in this trace"), std::string::npos) << result.err;
    }
    ASSERT_EQ(
        run_pipelens("simulate --pp 2 --m 4 --schedule GPipe --out " + real.string()).exit_code, 0);
    ASSERT_EQ(edit_trace(real, "UPDATE runs SET kind = 'real' WHERE id = 3"), 1);
    result = run_pipelens("diff " + real.string() + " " + sim.string() + " --real-run 1,3");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find(real.string() + " run 3 has schedule GPipe but"), std::string::npos)
        << result.err;
}

TEST(DiffCli, RunsThatCannotBeComparedAreRefusedNamingTheFile) {
    const auto sim = simulated("diff_bad_sim", "--schedule 1F1B", false);
    const auto gpipe = simulated("diff_bad_gpipe", "--schedule GPipe", true);
    CommandResult result = run_pipelens("diff " + gpipe.string() + " " + sim.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find(gpipe.string() + " run 1 has schedule GPipe but " + sim.string() +
                              " run 1 has schedule 1F1B"),
              std::string::npos)
        << result.err;

    const auto wide = fresh_trace("diff_bad_wide");
    ASSERT_EQ(
        run_pipelens("simulate --schedule 1F1B --pp 4 --m 4 --out " + wide.string()).exit_code, 0);
    ASSERT_EQ(edit_trace(wide, "UPDATE runs SET kind = 'real'"), 1);
    result = run_pipelens("diff " + wide.string() + " " + sim.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("has pp 4 but"), std::string::npos) << result.err;

    // The simulation's file holds no real run.
    result = run_pipelens("diff " + sim.string() + " " + sim.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find(sim.string() + ": the trace holds no real run"), std::string::npos)
        << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;  // one line

    // A run named by number must be of its side's kind, and finished: a simulation as the real
    // side, or a failed run's partial step, once went into the split as if measured.
    result = run_pipelens("diff " + sim.string() + " " + sim.string() + " --real-run 1");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens diff: " + sim.string() +
                              ": run 1 is a simulated run, but --real-run takes a real (measured) "
                              "run\n");
    const auto failed = simulated("diff_bad_failed", "--schedule 1F1B", true);
    ASSERT_EQ(edit_trace(failed, "UPDATE runs SET status = 'failed', failure = 'rank 1 timed out'"),
              1);
    result = run_pipelens("diff " + failed.string() + " " + sim.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens diff: " + failed.string() +
                              ": run 1 failed: rank 1 timed out; diff compares finished steps\n");
    // A finished run without actions has no step: its figures once all read 0, speed 1.000x.
    const auto empty = simulated("diff_bad_empty", "--schedule 1F1B", false);
    ASSERT_GT(edit_trace(empty, "DELETE FROM action_parts; DELETE FROM actions"), 0);
    EXPECT_EQ(edit_trace(failed, "UPDATE runs SET status = 'finished', failure = NULL"), 1);
    result = run_pipelens("diff " + failed.string() + " " + empty.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens diff: " + empty.string() +
                              ": run 1 is marked finished but holds no actions: there is no step "
                              "to compare\n");
}

}  // namespace
}  // namespace pipelens::testing
