// `pipelens run` as a user runs it (local transport): the JSON shape and the reference check,
// a real run recorded in a trace next to a simulated one, an injected fault's exit code, error
// line and errors-table row (bad options: run_usage_cli_test.cpp).
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <utility>
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

// run and explain run a schedule file; their help once said it was "to simulate".
TEST(RunCli, ScheduleFileHelpSaysTheFileIsRun) {
    for (const std::string command : {"run", "explain"}) {
        const auto help = run_pipelens(command + " --help");
        EXPECT_NE(help.out.find("A PyTorch CSV schedule to run instead of a generated kind"),
                  std::string::npos)
            << command << help.out;
        EXPECT_EQ(help.out.find("to simulate"), std::string::npos) << command << help.out;
    }
}

TEST(RunCli, JsonReportsTheStepAndTheReferenceComparison) {
    const auto result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::ordered_json::parse(result.out);
    std::vector<std::string> keys;
    for (const auto& item : json.items())
        keys.push_back(item.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"step_time_ns", "bubble_ratio", "peak_memory_counts",
                                              "ranks", "run_id", "completed", "loss", "device",
                                              "reference", "errors", "steps", "stragglers"}));
    EXPECT_TRUE(json["completed"].get<bool>());
    EXPECT_TRUE(json["reference"]["outputs_match"].get<bool>());
    EXPECT_TRUE(json["reference"]["gradients_match"].get<bool>());
    EXPECT_NEAR(json["loss"].get<double>(), json["reference"]["loss"].get<double>(), 1e-5);
    EXPECT_EQ(json["ranks"].size(), 2u);
    EXPECT_GT(json["step_time_ns"].get<long>(), 0);
    EXPECT_EQ(json["device"], "cpu");
}

TEST(RunCli, RealRunSitsBesideTheSimulationInOneTrace) {
    const auto trace = fresh_trace("side_by_side");
    ASSERT_EQ(run_pipelens("simulate --schedule ZBVZeroBubble --pp 2 --m 4 --out " + trace.string())
                  .exit_code,
              0);
    const auto real = run_pipelens(
        "run --schedule ZBVZeroBubble --pp 2 --m 4 --model example "
        "--layers 12 --json --out " +
        trace.string());
    ASSERT_EQ(real.exit_code, 0) << real.err;
    EXPECT_EQ(nlohmann::json::parse(real.out)["run_id"], 2);
    const auto summary = run_pipelens("summary --json " + trace.string());
    const auto runs = nlohmann::json::parse(summary.out)["runs"];
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0]["kind"], "sim");
    EXPECT_EQ(runs[1]["kind"], "real");
    EXPECT_EQ(runs[1]["status"], "finished");
    EXPECT_EQ(runs[1]["actions"], runs[0]["actions"]);  // the same lowered schedule

    // Both have a critical path by the same rules: it starts at rank 0's first forward, ends
    // with the step, and its shares (waiting included: a real rank's host time) add up to it.
    const auto paths = run_pipelens("summary --critical-path --json " + trace.string());
    ASSERT_EQ(paths.exit_code, 0) << paths.err;
    for (const auto& run : nlohmann::json::parse(paths.out)["runs"]) {
        SCOPED_TRACE(run["kind"].get<std::string>());
        const auto& path = run["critical_path"];
        ASSERT_FALSE(path["links"].empty());
        EXPECT_EQ(path["links"][0]["action"], "0F0");
        EXPECT_EQ(path["end_ns"], run["step_time_ns"]);
        std::int64_t total = 0;
        for (const auto& [name, ns] : path["shares"].items())
            total += ns.get<std::int64_t>();
        EXPECT_EQ(total, path["end_ns"].get<std::int64_t>());
    }
}

TEST(RunCli, AFaultIsAnErrorOnOneRankRecordedInTheTrace) {
    const auto trace = fresh_trace("fault");
    const auto result = run_pipelens(
        "run --schedule 1F1B --pp 3 --m 3 --batch 12 --fault "
        "stage1=dtype:bf16 --out " +
        trace.string());
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("rank 1: Stage 1 forward outputs[0] has a dtype mismatch: expected "
                              "torch.float32 actual torch.bfloat16 (rank 1, microbatch 0)\n"),
              std::string::npos)
        << result.err;
    const auto summary = run_pipelens("summary --json " + trace.string());
    const auto run = nlohmann::json::parse(summary.out)["runs"][0];
    EXPECT_EQ(run["kind"], "real");
    EXPECT_EQ(run["status"], "failed");
}

// The last stage's outputs are validated like every other stage's (before its loss).
TEST(RunCli, AFaultOnTheLastStageIsFoundLikeAnyOther) {
    const auto trace = fresh_trace("last_stage_fault");
    const auto result =
        run_pipelens("run --pp 2 --m 4 --fault stage1=dtype:bf16 --out " + trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.err.find("rank 1: Stage 1 forward outputs[0] has a dtype mismatch: expected "
                              "torch.float32 actual torch.bfloat16 (rank 1, microbatch 0)\n"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(testing::query_trace(trace, "SELECT status FROM runs"), "failed");
    EXPECT_EQ(testing::query_trace(trace,
                                   "SELECT group_concat(rank || ',' || stage || ',' || microbatch "
                                   "|| ',' || kind, ';') FROM errors WHERE kind != 'stopped'"),
              "1,1,0,dtype_mismatch");
}

// A failed run has no step: `run` (text and JSON), `summary` (text and JSON) and the SVG export
// all say where it failed, with its first error, instead of a step time or a bubble; and
// `bisect` against a good run says the states agree but one run failed, and exits 1.
TEST(RunCli, AFailedRunSaysWhereItFailedEverywhereInsteadOfAStepTime) {
    const auto trace = fresh_trace("failed_everywhere");
    const std::string run = "run --schedule 1F1B --pp 2 --m 4 --fault stage1=dtype:bf16";
    const std::string first_error =
        "Stage 1 forward outputs[0] has a dtype mismatch: expected torch.float32 actual "
        "torch.bfloat16 (rank 1, "
        "microbatch 0)";
    const std::string failed_at = "failed at rank 1, stage 1, action 1F0: " + first_error;

    auto result = run_pipelens(run + " --out " + trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(result.out.substr(0, result.out.find("\n\n")),
              "1F1B pp=2 v=1 m=4, model mlp, transport local (real run, cpu, FAILED)\n" + failed_at)
        << result.out;
    EXPECT_EQ(result.out.find("step time"), std::string::npos) << result.out;
    // The rank table has no bubble or cool-down: they are measured against the step. Rank 1
    // failed in its first computation, in the warm-up step, whose memory nothing sampled: its
    // peak is unknown, not 0 B; having computed nothing, it has no warm-up either.
    EXPECT_NE(result.out.find("\n   1          0 ns             -        -             -        "
                              "     -            -  -\n"),
              std::string::npos)
        << result.out;

    result = run_pipelens(run + " --json");
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    const nlohmann::json failed = {{"rank", 1},
                                   {"stage", 1},
                                   {"microbatch", 0},
                                   {"action", "1F0"},
                                   {"kind", "dtype_mismatch"},
                                   {"message", first_error},
                                   {"text", failed_at}};
    EXPECT_TRUE(json["step_time_ns"].is_null()) << json["step_time_ns"];
    EXPECT_TRUE(json["bubble_ratio"].is_null()) << json["bubble_ratio"];
    EXPECT_EQ(json["failed"], failed);
    for (const auto& rank : json["ranks"]) {
        EXPECT_TRUE(rank["peak_memory_bytes"].is_null()) << rank;
        EXPECT_TRUE(rank["bubble_ns"].is_null()) << rank;
        EXPECT_TRUE(rank["bubble_ratio"].is_null()) << rank;
        EXPECT_TRUE(rank["cooldown_ns"].is_null()) << rank;
    }

    result = run_pipelens("summary " + trace.string());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("\nrun 1: 1F1B pp=2 v=1 m=4 (real, failed)\n" + failed_at + "\n\n"),
              std::string::npos)
        << result.out;
    EXPECT_EQ(result.out.find("step time 0"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("0.0%"), std::string::npos) << result.out;
    const auto summary =
        nlohmann::json::parse(run_pipelens("summary --json " + trace.string()).out);
    const auto& recorded = summary["runs"][0];
    EXPECT_EQ(recorded["status"], "failed");
    EXPECT_TRUE(recorded["step_time_ns"].is_null()) << recorded["step_time_ns"];
    EXPECT_TRUE(recorded["bubble_ratio"].is_null()) << recorded["bubble_ratio"];
    EXPECT_EQ(recorded["failed"], failed);
    EXPECT_EQ(testing::query_trace(trace, "SELECT failure FROM runs"), first_error);
    // No step ended: the path is said as the chain up to where the run stopped, not as a
    // step's path with a length of its own.
    result = run_pipelens("summary --critical-path " + trace.string());
    EXPECT_NE(result.out.find("critical path: up to where the run stopped (it failed), "),
              std::string::npos)
        << result.out;
    const auto paths = run_pipelens("summary --critical-path --json " + trace.string());
    EXPECT_EQ(nlohmann::json::parse(paths.out)["runs"][0]["critical_path"]["run_failed"], true);

    const auto svg = fresh_trace("failed_everywhere_svg");
    ASSERT_EQ(run_pipelens("export " + trace.string() + " --svg " + svg.string()).exit_code, 0);
    const std::string picture = testing::read_file(svg);
    EXPECT_NE(picture.find(">" + failed_at + "</text>"), std::string::npos) << picture;
    EXPECT_EQ(picture.find("step time"), std::string::npos);
    EXPECT_EQ(picture.find("bubble "), std::string::npos);

    // A good run of the same schedule records the same engine states on rank 0.
    const auto good = fresh_trace("failed_everywhere_good");
    ASSERT_EQ(run_pipelens("run --schedule 1F1B --pp 2 --m 4 --out " + good.string()).exit_code, 0);
    result = run_pipelens("bisect " + good.string() + " " + trace.string() + " --rank 0");
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(result.out.substr(0, result.out.find("\nbisect: ")),
              "the states agree after every event (8 events)\n"
              "but one run failed and the other did not, which the recorded states do not show:\n"
              "  " +
                  trace.string() + " run 1 " + failed_at)
        << result.out;
    result = run_pipelens("bisect " + good.string() + " " + trace.string() + " --rank 0 --json");
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    const auto bisected = nlohmann::json::parse(result.out);
    EXPECT_FALSE(bisected["found"].get<bool>());
    EXPECT_FALSE(bisected["same_ending"].get<bool>());
    EXPECT_TRUE(bisected["runs"][0]["finished"].get<bool>());
    EXPECT_EQ(bisected["runs"][1]["ended"], failed_at);
    EXPECT_EQ(bisected["runs"][1]["first_error"]["rank"], 1);
    EXPECT_EQ(bisected["runs"][1]["first_error"]["message"], first_error);
    // Two ranks of the one failed run end alike: the states agree, and that is exit 0.
    result = run_pipelens("bisect " + trace.string() + " --rank 0 --other-run 1");
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("the run compared failed:\n  " + trace.string() + " run 1 " +
                              failed_at + "\n"),
              std::string::npos)
        << result.out;
    std::filesystem::remove(svg);
}

// NaN outputs fail the run on either transport: an error row says what and where, and no error
// figure reads 0.
void expect_nan_run_failed(const std::string& transport_flags, const std::string& name) {
    const auto trace = fresh_trace(name);
    const auto result = run_pipelens("run --pp 2 --m 4 --fault stage1=nan " + transport_flags +
                                     " --json --out " + trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const std::string message =
        "Stage 1 forward outputs[0] has 512 non-finite values (NaN or Inf) of 512 and the loss is "
        "nan (rank 1, microbatch 0); --check-accuracy names the stage they first appear on";
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_FALSE(json["completed"].get<bool>());
    EXPECT_FALSE(json["reference"]["outputs_match"].get<bool>());
    EXPECT_TRUE(json["reference"]["output_max_error"].is_null()) << json["reference"].dump();
    ASSERT_EQ(json["errors"].size(), 1u) << json["errors"].dump();
    EXPECT_EQ(json["errors"][0]["kind"], "non_finite");
    EXPECT_EQ(json["errors"][0]["message"], message);
    EXPECT_EQ(testing::query_trace(trace, "SELECT status, failure FROM runs"), "failed|" + message);
    EXPECT_EQ(testing::query_trace(trace,
                                   "SELECT rank, stage, microbatch, action, kind, expected FROM "
                                   "errors"),
              "1|1|0|1F0|non_finite|finite values");
}

TEST(RunCli, NanOutputsFailTheRunWithAnErrorRow) {
    expect_nan_run_failed("", "nan_local");
}

// A failed run's ranks stopped at different points: `summary --stragglers` measures none of them
// (it once gave "relative throughput 1.000" from one rank's work), and its JSON says null.
TEST(RunCli, AFailedRunHasNoStragglersToMeasure) {
    const auto trace = fresh_trace("failed_stragglers");
    ASSERT_EQ(run_pipelens("run --pp 2 --m 4 --fault stage1=nan --out " + trace.string()).exit_code,
              1);
    const auto text = run_pipelens("summary --stragglers " + trace.string());
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("stragglers: n/a (no step to measure the ranks against)\n"),
              std::string::npos)
        << text.out;
    EXPECT_EQ(text.out.find("relative throughput"), std::string::npos) << text.out;
    const auto json = run_pipelens("summary --stragglers --json " + trace.string());
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_TRUE(nlohmann::json::parse(json.out)["runs"][0]["stragglers"].is_null());
}

// `--out` where no file can be made (/proc grants root write access and refuses creation) is
// refused before the work, not after the last step.
TEST(RunCli, ATracePathThatCannotBeCreatedIsRefusedBeforeTheRun) {
    const auto result = run_pipelens("run --pp 2 --m 4 --out /proc/pipelens_no_trace.db");
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find("/proc/pipelens_no_trace.db: cannot create trace"), std::string::npos)
        << result.err;
    EXPECT_EQ(result.out.find("loss"), std::string::npos) << result.out;
}

TEST(RunCliGloo, NanOutputsFailTheRunWithAnErrorRow) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    expect_nan_run_failed("--transport gloo --nproc 2", "nan_gloo");
}

// A --timeout under a second still lets the processes meet: c10d's store counted it as 0 s, so
// even rank 0 could not reach its own store ("timed out after 0s"). One process, so that no other
// process's start-up is timed here.
TEST(RunCliGloo, ATimeoutUnderASecondStillMeetsAtTheRendezvous) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const auto result = run_pipelens(
        "run --schedule GPipe --pp 1 --m 2 --transport gloo --nproc 1 --timeout 900ms --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(nlohmann::json::parse(result.out)["completed"].get<bool>());
}

TEST(RunCliGloo, ProcessesOverTcpMatchTheReference) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    // The launcher keeps the ranks' reports in a directory under TMPDIR and removes it after.
    const auto temporary = testing::process_temp_path("launcher_tmpdir");
    std::filesystem::remove_all(temporary);
    std::filesystem::create_directories(temporary);
    const auto result = testing::run_command(
        "TMPDIR=" + temporary.string() + " " + std::string(PIPELENS_BINARY) +
        " run --schedule Interleaved1F1B --pp 2 --m 4 --model mlp --transport gloo --nproc 2 "
        "--json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(std::filesystem::is_empty(temporary)) << temporary;
    const auto json = nlohmann::json::parse(result.out);  // only rank 0 prints
    EXPECT_TRUE(json["completed"].get<bool>());
    EXPECT_TRUE(json["reference"]["outputs_match"].get<bool>());
    EXPECT_TRUE(json["reference"]["gradients_match"].get<bool>());
    EXPECT_EQ(json["ranks"].size(), 2u);
}

// Processes over loopback TCP run a ZB-2p order lowered with deferred receives; the recorded
// schedule replays as ZeroBubbleAuto with its inputs and the deferral.
TEST(RunCliGloo, ZeroBubbleTwoPWithDeferredReceivesMatchesTheReference) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const auto trace = fresh_trace("zb2p_deferred");
    const auto result = run_pipelens(
        "run --schedule ZeroBubbleAuto --max-activations 2p --defer-recv --pp 3 --m 6 "
        "--batch 12 --model mlp --transport gloo --nproc 3 --json --out " +
        trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_TRUE(json["completed"].get<bool>());
    EXPECT_TRUE(json["reference"]["outputs_match"].get<bool>());
    EXPECT_TRUE(json["reference"]["gradients_match"].get<bool>());
    const auto check = run_pipelens("replay " + trace.string() + " --rank 0 --check");
    EXPECT_EQ(check.exit_code, 0) << check.err << check.out;
    const auto replay = run_pipelens("replay " + trace.string() + " --rank 0");
    EXPECT_EQ(replay.exit_code, 0) << replay.err << replay.out;
    EXPECT_NE(replay.out.find("schedule.kind: ZeroBubbleAuto"), std::string::npos) << replay.out;
    EXPECT_NE(replay.out.find("schedule.receives_deferred: true"), std::string::npos) << replay.out;
    EXPECT_NE(replay.out.find("schedule.zero_bubble_inputs: f=1000ns i=1000ns w=1000ns comm=0ns "
                              "max_activations=6"),
              std::string::npos)
        << replay.out;
}

TEST(RunCliGloo, AFaultIsReportedByTheRankThatSawIt) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const auto result = run_pipelens(
        "run --schedule 1F1B --pp 3 --m 3 --batch 12 --transport gloo --nproc 3 --fault "
        "stage1=flatten --json");
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_FALSE(json["completed"].get<bool>());
    int mismatches = 0;
    for (const auto& error : json["errors"]) {
        if (error["kind"] == "shape_mismatch") {
            ++mismatches;
            EXPECT_EQ(error["rank"], 1);
            EXPECT_EQ(error["message"],
                      "Stage 1 forward outputs[0] has a shape mismatch: expected "
                      "torch.Size([4, 64]) actual torch.Size([256]) (rank 1, microbatch 0)");
        } else {
            EXPECT_EQ(error["kind"], "stopped") << error.dump();
        }
    }
    EXPECT_EQ(mismatches, 1);
}

TEST(RunCliGloo, ARankThatDiesIsNamedAndTheRestIsRecorded) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const auto trace = fresh_trace("died");
    const auto result = run_pipelens(
        "run --schedule 1F1B --pp 3 --m 3 --batch 12 --transport gloo --nproc 3 --fault "
        "stage1=die --timeout 2s --json --out " +
        trace.string());
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("pipelens run: rank 1 was killed by signal 9"), std::string::npos)
        << result.err;
    // The launcher saw rank 1 die and told rank 0, which stopped waiting for its report and
    // says how it died (not that it sent nothing within the timeout).
    const auto json = nlohmann::json::parse(result.out);
    bool named = false;
    for (const auto& error : json["errors"])
        if (error["rank"] == 1) {
            named = true;
            EXPECT_EQ(error["kind"], "rank_died");
            EXPECT_EQ(error["message"],
                      "rank 1 died (killed by signal 9 (Killed)) before it reported; its actions "
                      "are not recorded");
        }
    EXPECT_TRUE(named) << json["errors"].dump();
    const auto summary =
        nlohmann::json::parse(run_pipelens("summary --json " + trace.string()).out);
    EXPECT_EQ(summary["runs"][0]["status"], "failed");
    // Its peers stop as if it had aborted, naming it, whether their wait saw the launcher's
    // notice or the dead rank's socket close first (which waits a little for the notice).
    for (const auto& error : json["errors"])
        if (error["rank"] != 1) {
            EXPECT_EQ(error["kind"], "stopped") << error;
            EXPECT_EQ(error["message"], "stopped: rank 1 ended (killed by signal 9 (Killed))");
        }
    // The death is the run's root cause; its peers' errors are its echo.
    EXPECT_EQ(testing::query_trace(trace, "SELECT failure FROM runs"),
              "rank 1 died (killed by signal 9 (Killed)) before it reported; its actions are not "
              "recorded");
    EXPECT_EQ(json["failed"]["rank"], 1);
    EXPECT_EQ(json["failed"]["kind"], "rank_died");
    // When it died is unknown: no time, rather than the step's start.
    EXPECT_EQ(testing::query_trace(
                  trace, "SELECT coalesce(time_ns, 'none') FROM errors WHERE kind = 'rank_died'"),
              "none");
}

// Rank 0 gathers and records; when it dies, the launcher records what the others reported.
TEST(RunCliGloo, WhenRankZeroDiesTheLauncherRecordsTheRest) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const auto trace = fresh_trace("rank_zero_died");
    const auto started = std::chrono::steady_clock::now();
    const auto result = run_pipelens(
        "run --schedule 1F1B --pp 3 --m 3 --batch 12 --transport gloo --nproc 3 --fault "
        "stage0=die --timeout 2s --json --out " +
        trace.string());
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(40));
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("pipelens run: rank 0 was killed by signal 9"), std::string::npos)
        << result.err;
    const auto json = nlohmann::json::parse(result.out);  // printed by the launcher
    EXPECT_FALSE(json["completed"].get<bool>());
    ASSERT_EQ(json["errors"].size(), 3u) << json["errors"].dump();
    EXPECT_EQ(json["errors"][0]["rank"], 0);
    EXPECT_EQ(json["errors"][0]["kind"], "rank_died");
    EXPECT_EQ(json["errors"][0]["message"],
              "rank 0 died (killed by signal 9 (Killed)) before it reported; its actions are not "
              "recorded");
    // The others lose the rendezvous store rank 0 served, and stop at once: during the step, or
    // before it began when rank 0 died first ("stopped before step 0: ..."), as the race goes.
    for (const int rank : {1, 2}) {
        EXPECT_EQ(json["errors"][rank]["rank"], rank);
        EXPECT_EQ(json["errors"][rank]["kind"], "stopped");
        const std::string message = json["errors"][rank]["message"].get<std::string>();
        const std::string lost = "gloo transport: rank " + std::to_string(rank) +
                                 " lost the rendezvous store at 127.0.0.1:";
        EXPECT_TRUE(message.rfind("stopped: " + lost, 0) == 0 ||
                    message.rfind("stopped before step 0: " + lost, 0) == 0)
            << json["errors"][rank].dump();
    }

    EXPECT_EQ(testing::query_trace(trace, "SELECT status, failure FROM runs"),
              "failed|rank 0 died (killed by signal 9 (Killed)) before it reported; its actions "
              "are not recorded");
    EXPECT_EQ(testing::query_trace(trace,
                                   "SELECT group_concat(rank || ':' || kind, ' ') FROM "
                                   "(SELECT rank, kind FROM errors ORDER BY rank)"),
              "0:rank_died 1:stopped 2:stopped");
    // What ranks 1 and 2 recorded is there: their events and the state they ran from.
    EXPECT_EQ(testing::query_trace(trace,
                                   "SELECT group_concat(rank, ',') FROM (SELECT DISTINCT "
                                   "rank FROM events ORDER BY rank)"),
              "1,2");
    EXPECT_EQ(testing::query_trace(trace, "SELECT count(*) FROM ranks"), "3");
}

// A real run records every rank's state; a tampered tensor dtype is named by --check, and
// bisect finds the event that changed it.
TEST(RunCli, RecordedRanksReplayAndATamperedDtypeIsFound) {
    const auto trace = fresh_trace("run_replay");
    const auto original = fresh_trace("run_replay_original");
    ASSERT_EQ(run_pipelens("run --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    std::filesystem::copy_file(trace, original);
    auto result = run_pipelens("replay " + trace.string() + " --check");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("run 1 rank 0: replayed 12 events (12 recorded)\n  check: equal"),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("run 1 rank 1: replayed 12 events"), std::string::npos);

    // Event 7 of rank 0 is set_stage_meta of stage 0.
    ASSERT_EQ(testing::edit_trace(trace,
                                  "UPDATE events SET arguments = replace(arguments, "
                                  "'\"outputs\":[{\"dtype\":\"f32\"', "
                                  "'\"outputs\":[{\"dtype\":\"bf16\"') "
                                  "WHERE rank = 0 AND sequence = 7"),
              1);
    result = run_pipelens("replay " + trace.string() + " --rank 0 --check");
    EXPECT_EQ(result.exit_code, 1);
    // Left is the recorded state, Right the replay's, as upstream's check_equal has them.
    EXPECT_NE(result.err.find("state not equal: field values don't match:\n\n"
                              "==> stage[0].outputs_meta: values don't match.\n"
                              "  >  Left: (f32[8, 64])\n"
                              "  > Right: (bf16[8, 64])\n"),
              std::string::npos)
        << result.err;
    result = run_pipelens("bisect " + original.string() + " " + trace.string() + " --rank 0");
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.out.substr(0, result.out.find('\n')),
              "first divergence after event 7 (set_stage_meta)");
    result = run_pipelens("bisect " + trace.string() + " --rank 0 --until-error");
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.out.find("validation first fails after event 8: set_stage_meta"),
              std::string::npos)
        << result.out;
}

TEST(RunCli, CheckAccuracyNamesTheStageABackendPerturbs) {
    const auto trace = fresh_trace("run_accuracy");
    const auto result = run_pipelens(
        "run --pp 3 --m 4 --backend stage1=accuracy-error "
        "--check-accuracy --json --out " +
        trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_TRUE(json["accuracy"]["diverges"].get<bool>());
    EXPECT_EQ(json["accuracy"]["first_divergence"]["stage"], 1);
    EXPECT_EQ(json["accuracy"]["first_divergence"]["microbatch"], 0);
    EXPECT_EQ(testing::query_trace(trace,
                                   "SELECT rank, stage, microbatch FROM errors WHERE kind "
                                   "= 'accuracy_mismatch'"),
              "1|1|0");  // stage 1 of three is rank 1's
    // The run finished, its results did not: both failed checks are said with its figures and
    // read back from the trace, never a plain finished run.
    ASSERT_EQ(json["check_failed"].size(), 2u) << json.dump();
    EXPECT_EQ(json["check_failed"][0]["kind"], "accuracy_mismatch");
    EXPECT_EQ(json["check_failed"][1]["kind"], "reference_mismatch");
    EXPECT_EQ(testing::query_trace(trace, "SELECT status FROM runs"), "finished");
    const auto summary = run_pipelens("summary " + trace.string());
    EXPECT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_NE(summary.out.find("\n   1  real  check failed  1F1B "), std::string::npos)
        << summary.out;
    EXPECT_NE(summary.out.find("\nrun 1: 1F1B pp=3 v=1 m=4 (real, check failed)\n"),
              std::string::npos)
        << summary.out;
    EXPECT_NE(summary.out.find("\ncheck failed: stage 1 microbatch 0 is the first to diverge "
                               "from the single-rank reference"),
              std::string::npos)
        << summary.out;
    EXPECT_NE(summary.out.find("\ncheck failed: the pipelined step's outputs and gradients "
                               "differ from the single-rank reference's"),
              std::string::npos)
        << summary.out;
    // The flag was given: no advice to give it.
    EXPECT_EQ(summary.out.find("--check-accuracy names"), std::string::npos) << summary.out;
}

// NaNs that a stage's fault puts out fail the run at the last stage, where the NaN check sees
// them; --check-accuracy names the stage they began at, in the failure itself and in its own
// error row on the rank that ran that stage.
TEST(RunCli, CheckAccuracyNamesWhereNonFiniteValuesBegan) {
    const auto trace = fresh_trace("run_accuracy_nan");
    const auto result = run_pipelens(
        "run --pp 3 --m 4 --batch 12 --fault stage1=nan "
        "--check-accuracy --json --out " +
        trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["accuracy"]["first_divergence"]["stage"], 1);
    EXPECT_EQ(json["accuracy"]["first_divergence"]["rank"], 1);
    EXPECT_TRUE(json["accuracy"]["first_divergence"]["non_finite"].get<bool>());
    ASSERT_EQ(json["errors"].size(), 1u) << json["errors"].dump();
    EXPECT_EQ(json["errors"][0]["kind"], "non_finite");
    EXPECT_EQ(json["errors"][0]["message"],
              "Stage 2 forward outputs[0] has 192 non-finite values (NaN or Inf) of 192 and the "
              "loss is nan (rank 2, microbatch 0); they first appear in stage 1's outputs (rank "
              "1, microbatch 0), as --check-accuracy found");
    EXPECT_EQ(testing::query_trace(trace,
                                   "SELECT rank, stage, microbatch FROM errors WHERE kind "
                                   "= 'accuracy_mismatch'"),
              "1|1|0");
    // A finite error before them is the first divergence, not where the NaNs began.
    const auto both = run_pipelens(
        "run --pp 4 --m 4 --backend stage1=accuracy-error --fault stage2=nan --check-accuracy "
        "--json");
    EXPECT_EQ(both.exit_code, 1) << both.err;
    const auto both_json = nlohmann::json::parse(both.out);
    EXPECT_EQ(both_json["accuracy"]["first_divergence"]["stage"], 1);
    EXPECT_FALSE(both_json["accuracy"]["first_divergence"]["non_finite"].get<bool>());
    ASSERT_EQ(both_json["errors"].size(), 1u) << both_json["errors"].dump();
    const std::string message = both_json["errors"][0]["message"];
    EXPECT_TRUE(
        message.ends_with("; they first appear in stage 2's outputs (rank 2, microbatch "
                          "0), as --check-accuracy found"))
        << message;
}

// A trace that cannot take the run (a file size limit standing for a full disk) ends the
// command with its error, after the report of the steps that ran: the figures are not lost too.
TEST(RunCli, ARunATraceCannotTakeIsStillReported) {
    const auto trace = fresh_trace("run_disk_full");
    const auto result = testing::run_command(
        "sh -c \"ulimit -f 200; trap '' XFSZ; exec " + std::string(PIPELENS_BINARY) +
        " run --pp 2 --m 4 --no-reference --steps 200 --out " + trace.string() + "\"");
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.out.rfind("1F1B pp=2 v=1 m=4, model mlp, transport local (real run, cpu)\n"
                               "step time ",
                               0),
              0u)
        << result.out;
    EXPECT_NE(result.out.find("200 steps recorded after 1 warm-up"), std::string::npos)
        << result.out;
    EXPECT_EQ(result.err.rfind("pipelens: " + trace.string() + ": ", 0), 0u) << result.err;
}

// The cores this process may use, as pipelens counts them (its CPU affinity).
int affinity_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
}

TEST(RunCli, RanksThatWouldTimeSliceAreWarnedAbout) {
    const int cores = affinity_cores();
    const std::string threads = std::to_string(cores);
    auto result = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --model mlp --no-reference "
        "--threads " +
        threads);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "pipelens: warning: 2 ranks x " + threads + " thread" +
                              (cores == 1 ? "" : "s") + " on " + threads + " core" +
                              (cores == 1 ? "" : "s") +
                              ": ranks will time-slice; timings will not match a pipeline\n");
    if (cores >= 2) {  // one thread per rank fits: no warning
        result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp --no-reference");
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.err, "");
    }
    result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --threads 0");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: --threads: 0 is not a thread count (give 1 or more)\n");
    // Bounds that keep a run finite, refused before any rank starts.
    result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --threads 10000");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: --threads: 10000 is more threads than a rank can use (at most 1024; the "
              "default shares this host's cores)\n");
    result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --steps 1000000000");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: --steps 1000000000 --warmup 1: at most 1000000 steps each (every "
              "recorded action is held in memory until the run is written; a few hundred steps "
              "give a stable median)\n");
}

}  // namespace
}  // namespace pipelens
