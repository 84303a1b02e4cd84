// `pipelens replay` and `pipelens bisect` on real trace files written by `pipelens simulate`
// (and by `import --simulate` and `plan --out`): every example replays to exactly the state it
// recorded, a tampered event is named by the field it changed, two simulations are bisected to
// the first differing event, and bad requests are one-line usage errors.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::edit_trace;
using testing::fresh_trace;
using testing::run_pipelens;

TEST(ReplayCli, EveryExampleReplaysToTheStateItRecorded) {
    const auto trace = fresh_trace("replay_examples");
    int run = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(PIPELENS_SOURCE_DIR) +
                                                                 "/assets/examples")) {
        if (entry.path().extension() != ".toml")
            continue;
        const auto simulated =
            run_pipelens("simulate " + entry.path().string() + " --out " + trace.string());
        ASSERT_EQ(simulated.exit_code, 0) << entry.path() << simulated.err;
        ++run;
        const auto replayed =
            run_pipelens("replay " + trace.string() + " --run " + std::to_string(run) + " --check");
        EXPECT_EQ(replayed.exit_code, 0) << entry.path() << replayed.err;
        EXPECT_NE(replayed.out.find("check: equal to the recorded state"), std::string::npos)
            << entry.path() << replayed.out;
    }
    EXPECT_EQ(run, 5);
}

// A trace written by an earlier pipelens (the fuzz corpus keeps one, committed before deferred
// receives, rendezvous and the zero-bubble search existed) still checks equal: fields added
// since are only listed when set.
TEST(ReplayCli, ATraceFromBeforeTheNewStateFieldsStillChecksEqual) {
    const auto replayed = run_pipelens("replay " + std::string(PIPELENS_SOURCE_DIR) +
                                       "/tests/fuzz/corpus/trace_file/simulate_1f1b_pp2_m2.db "
                                       "--check");
    EXPECT_EQ(replayed.exit_code, 0) << replayed.err << replayed.out;
    EXPECT_NE(replayed.out.find("check: equal to the recorded state (42 fields"), std::string::npos)
        << replayed.out;
}

// `import --simulate`'s twin and `plan --out`'s best layout are built like a `simulate` run:
// their runs carry the cost model's events and replay to the state they recorded.
TEST(ReplayCli, ImportedTwinsAndPlannedRunsReplayLikeSimulatedOnes) {
    const auto imported = fresh_trace("replay_import");
    const std::string profiler =
        std::string(PIPELENS_SOURCE_DIR) + "/tests/data/pytorch_profiler/runtime_1f1b_rank";
    ASSERT_EQ(run_pipelens("import " + profiler + "0.json " + profiler + "1.json.gz --out " +
                           imported.string() + " --simulate")
                  .exit_code,
              0);
    const auto twin = run_pipelens("replay " + imported.string() + " --run 2 --check --events");
    EXPECT_EQ(twin.exit_code, 0) << twin.err;
    EXPECT_NE(twin.out.find("  event 4: set_cost_model "), std::string::npos) << twin.out;
    EXPECT_NE(twin.out.find("  event 5: set_stage_costs "), std::string::npos) << twin.out;
    EXPECT_NE(twin.out.find("check: equal to the recorded state (42 fields, 12 events)"),
              std::string::npos)
        << twin.out;

    const auto planned = fresh_trace("replay_plan");
    ASSERT_EQ(run_pipelens("plan --layers 8 --hidden 1024 --heads 16 --sequence 512 "
                           "--vocabulary 1000 --global-batch 16 --gpus 8 --tp 2 --pp 2 --out " +
                           planned.string())
                  .exit_code,
              0);
    const auto best = run_pipelens("replay " + planned.string() + " --run 1 --check --events");
    EXPECT_EQ(best.exit_code, 0) << best.err;
    EXPECT_NE(best.out.find("  event 4: set_cost_model "), std::string::npos) << best.out;
    EXPECT_NE(best.out.find("check: equal to the recorded state (120 fields, 42 events)"),
              std::string::npos)
        << best.out;
}

TEST(ReplayCli, ATamperedEventIsReportedByTheFieldItChanged) {
    const auto trace = fresh_trace("replay_tampered");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --f 1us --out " + trace.string()).exit_code, 0);
    // Event 5 is set_stage_costs of stage 0 (after the constructor, choose/lower_schedule,
    // configure_transport and set_cost_model).
    ASSERT_EQ(edit_trace(trace,
                         "UPDATE events SET arguments = replace(arguments, "
                         "'\"forward_ns\":1000', '\"forward_ns\":1500') WHERE sequence = 5"),
              1);
    const auto result = run_pipelens("replay " + trace.string() + " --check");
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.err,
              trace.string() +
                  ": run 1 whole pipeline: the replay of 12 events does not rebuild the recorded "
                  "state\n"
                  "state not equal: field values don't match:\n\n"
                  "==> stage[0].costs: values don't match.\n"
                  "  >  Left: F=1000ns I=1000ns W=1000ns B=2000ns sends=0B holds=0B\n"
                  "  > Right: F=1500ns I=1000ns W=1000ns B=2000ns sends=0B holds=0B\n");
}

// Replay reads only top-level events, so a nested event is checked where the stream is read:
// nested under a call that makes no such events, it is a damaged trace for replay and bisect
// alike (it once replayed as if nothing were wrong, and bisect then paired events by position).
TEST(ReplayCli, AnEventNestedElsewhereIsADamagedTrace) {
    const auto recorded = fresh_trace("replay_renested");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + recorded.string()).exit_code, 0);
    const auto trace = fresh_trace("replay_renested_copy");
    std::filesystem::copy_file(recorded, trace);
    ASSERT_EQ(edit_trace(trace, "UPDATE events SET parent = 2 WHERE sequence = 10"), 1);
    for (const std::string& command :
         {"replay " + trace.string(), "bisect " + recorded.string() + " " + trace.string(),
          "bisect " + trace.string() + " --until-error"}) {
        const auto result = run_pipelens(command);
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err,
                  "pipelens: " + trace.string() +
                      ": trace is corrupt: run 1 whole pipeline: event 10 (plan_buffer) "
                      "is nested in event 2 (lower_schedule), which makes no "
                      "plan_buffer events\n")
            << command;
    }
}

TEST(ReplayCli, UptoShowsTheStateAtAnEarlierEvent) {
    const auto trace = fresh_trace("replay_upto");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    const auto result = run_pipelens("replay " + trace.string() + " --upto 2 --events");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("run 1 whole pipeline: replayed 3 events up to event 2 (12 "
                              "recorded)\n"
                              "  event 0: PipelineState {\"rank\":-1,\"run_kind\":\"sim\"}\n"
                              "  event 1: choose_schedule {\"kind\":\"1F1B\",\"m\":4,\"pp\":2,"
                              "\"v\":1}\n"
                              "  event 2: lower_schedule {\"keep_fsdp_actions\":false}\n"),
              std::string::npos)
        << result.out;
    // Past the stream's end everything is replayed, and the line says where the stream ended.
    const auto past = run_pipelens("replay " + trace.string() + " --upto 99");
    EXPECT_EQ(past.out.substr(0, past.out.find('\n')),
              "run 1 whole pipeline: replayed 12 events up to event 99 (12 recorded; the stream "
              "ends at event 11)");
    EXPECT_NE(result.out.find("  transport.kind: none\n"), std::string::npos);
    EXPECT_NE(result.out.find("  schedule.lowered: true\n"),
              std::string::npos);  // --json --events carries the events too, nested ones with their
                                   // parent.
    const auto json = run_pipelens("replay " + trace.string() + " --json --events");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto events = nlohmann::json::parse(json.out)[0]["events"];
    ASSERT_EQ(events.size(), 12u) << json.out;
    EXPECT_EQ(events[1], nlohmann::json::parse(R"({"sequence":1,"name":"choose_schedule",)"
                                               R"("parent":null,"arguments":{"kind":"1F1B",)"
                                               R"("m":4,"pp":2,"v":1}})"));
    EXPECT_EQ(events[11]["parent"], 7);
    EXPECT_EQ(events[11]["name"], "plan_buffer");
    // A nested event is made by its parent, which a replay applies whole: no place to stop.
    const auto nested = run_pipelens("replay " + trace.string() + " --upto 9");
    EXPECT_EQ(nested.exit_code, 2);
    EXPECT_EQ(nested.err,
              "pipelens: --upto 9: event 9 (plan_buffer, whole pipeline) is made by event 7 "
              "(plan_buffers), which a replay applies whole: give --upto 7 (after it and the "
              "events it makes, up to 11) or --upto 6 (before it)\n");
    EXPECT_TRUE(nested.out.empty()) << nested.out;
}

TEST(BisectCli, TwoSimulationsDivergeAtTheFirstDifferingCall) {
    const auto left = fresh_trace("bisect_left");
    const auto right = fresh_trace("bisect_right");
    ASSERT_EQ(run_pipelens("simulate --pp 4 --m 8 --out " + left.string()).exit_code, 0);
    ASSERT_EQ(
        run_pipelens("simulate --pp 4 --m 8 --ranks-per-host 2 --out " + right.string()).exit_code,
        0);
    const auto result = run_pipelens("bisect " + left.string() + " " + right.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(result.out.substr(0, result.out.find('\n')),
              "first divergence after event 4 (set_cost_model)");
    EXPECT_NE(result.out.find("==> costs.links: values don't match.\n"
                              "  >  Left: intra-host 0ns 0GB/s, inter-host 0ns 0GB/s, 8 ranks "
                              "per host\n"
                              "  > Right: intra-host 0ns 0GB/s, inter-host 0ns 0GB/s, 2 ranks "
                              "per host\n"),
              std::string::npos)
        << result.out;
    // 10 top-level events: at most 1 + ceil(log2 10) + 1 = 6 replays; the whole streams and the
    // first event that differs find it.
    EXPECT_NE(result.out.find("bisect: 2 replays for 10 events (bound 6)"), std::string::npos)
        << result.out;
    // JSON names each field by its name alone, with both values as the report prints them.
    const auto json = run_pipelens("bisect " + left.string() + " " + right.string() + " --json");
    EXPECT_EQ(json.exit_code, 1) << json.err;
    const auto bisected = nlohmann::json::parse(json.out);
    EXPECT_EQ(bisected["event"]["sequence"], 4);
    EXPECT_EQ(bisected["fields"],
              nlohmann::json::parse(R"([{"field":"costs.links","left":"intra-host 0ns 0GB/s, )"
                                    R"(inter-host 0ns 0GB/s, 8 ranks per host","right":)"
                                    R"("intra-host 0ns 0GB/s, inter-host 0ns 0GB/s, 2 ranks )"
                                    R"(per host"}])"));
    EXPECT_EQ(bisected["unique_fields"], nlohmann::json::parse(R"({"left":[],"right":[]})"));

    const auto same = run_pipelens("bisect " + left.string() + " " + left.string());
    EXPECT_EQ(same.exit_code, 0);
    EXPECT_EQ(same.out,
              "the states agree after every event (10 events)\n"
              "bisect: 1 replays for 10 events (bound 6)\n");
    const auto consistent = run_pipelens("bisect " + left.string() + " --until-error");
    EXPECT_EQ(consistent.exit_code, 0);
}

// An event that fails to replay is a finding (exit 1) only when the engine refused it: one that
// cannot be read is a damaged trace (exit 2) and one that does not fit this machine is too large
// (exit 3), for replay and both kinds of bisect alike, each naming the trace it came from.
TEST(ReplayCli, AnEventThatCannotBeReadOrDoesNotFitIsNoFinding) {
    const auto good = fresh_trace("replay_good");
    const auto unreadable = fresh_trace("replay_unreadable");
    const auto large = fresh_trace("replay_large");
    for (const auto& trace : {good, unreadable, large})
        ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    ASSERT_EQ(edit_trace(unreadable,
                         "UPDATE events SET arguments = replace(arguments, '\"pp\":2', "
                         "'\"pp\":\"two\"') WHERE sequence = 1"),
              1);
    // 1F1B pp=2 m=1,000,000: 8 million actions, refused under a 200 MB address space.
    ASSERT_EQ(edit_trace(large,
                         "UPDATE events SET arguments = replace(arguments, '\"m\":4', "
                         "'\"m\":1000000') WHERE sequence = 1"),
              1);
    const std::string unreadable_event =
        "pipelens: " + unreadable.string() +
        ": trace is corrupt: run 1 whole pipeline: event 1 (choose_schedule): malformed "
        "arguments: field 'pp' must be an integer, got \"two\"\n";
    auto result = run_pipelens("replay " + unreadable.string() + " --check");
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.err, unreadable_event);
    result = run_pipelens("bisect " + good.string() + " " + unreadable.string());
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.err, unreadable_event);
    result = run_pipelens("bisect " + unreadable.string() + " --until-error");
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, unreadable_event);

    const auto limited = [](const std::string& arguments) {
        return testing::run_command("sh -c 'ulimit -v 200000; exec " +
                                    std::string(PIPELENS_BINARY) + " " + arguments + "'");
    };
    for (const std::string& command :
         {"replay " + large.string() + " --check", "bisect " + good.string() + " " + large.string(),
          "bisect " + large.string() + " --until-error"}) {
        SCOPED_TRACE(command);
        result = limited(command);
        EXPECT_EQ(result.exit_code, 3) << result.out << result.err;
        EXPECT_NE(result.err.find(large.string()), std::string::npos) << result.err;
        EXPECT_NE(result.err.find("is too large for this machine"), std::string::npos)
            << result.err;
    }
    // Past the engine's fixed limit of stage-microbatches it is too large on any machine: it was
    // a finding (exit 1), which reads as the runs differing.
    ASSERT_EQ(edit_trace(large,
                         "UPDATE events SET arguments = replace(arguments, '\"pp\":2', "
                         "'\"pp\":1000000000') WHERE sequence = 1"),
              1);
    for (const std::string& command :
         {"replay " + large.string(), "bisect " + large.string() + " --until-error"}) {
        result = run_pipelens(command);
        EXPECT_EQ(result.exit_code, 3) << command << result.err;
        EXPECT_NE(result.err.find("is too large (the limit is 536870911 stage-microbatches)"),
                  std::string::npos)
            << result.err;
    }
}

// A recorder numbers its events 0, 1, 2, ... and snapshots the state after the last one. A
// stream that breaks this is a damaged trace (exit 2, naming the rank and the break) for both
// replay and bisect, never a state "equal" to or "different" from the recording.
TEST(ReplayCli, ADamagedEventStreamIsACorruptTraceNotAFinding) {
    const auto recorded = fresh_trace("replay_damaged");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + recorded.string()).exit_code, 0);
    const std::vector<std::pair<std::string, std::string>> damages = {
        {"DELETE FROM events WHERE sequence = 0",
         "its first event (choose_schedule) is numbered 1, not 0"},
        {"UPDATE events SET sequence = 99 WHERE sequence = 3",
         "event 3 is missing (event 4, set_cost_model, follows event 2)"},
        {"INSERT INTO events SELECT * FROM events WHERE sequence = 6",
         "event 6 is recorded twice (set_stage_costs and set_stage_costs)"},
        {"UPDATE events SET parent = 50 WHERE sequence = 9",
         "event 9 (plan_buffer) is nested in event 50, which is not recorded before it"},
        {"UPDATE events SET arguments = json_set(arguments, '$.rank', 5) WHERE sequence = 0",
         "its first event (PipelineState) starts the state of rank 5, but the stream is the "
         "whole pipeline's"},
        // Every event is read before anything replays, nested ones too.
        {"UPDATE events SET arguments = json_set(arguments, '$.bytes', 'lots') "
         "WHERE sequence = 10",
         "event 10 (plan_buffer): malformed arguments: field 'bytes' must be an integer, got "
         "\"lots\""},
        {"UPDATE events SET name_id = (SELECT name_id FROM events WHERE sequence = 0), "
         "arguments = '{\"rank\":-1,\"run_kind\":\"sim\"}' WHERE sequence = 5",
         "event 5 (PipelineState) is a second constructor: only event 0 constructs the state"},
        {"UPDATE events SET parent = NULL WHERE sequence = 10",
         "event 10 (plan_buffer) is at top level, but only plan_buffers makes it, nested under "
         "it"},
        {"UPDATE events SET arguments = json_set(arguments, '$.bogus', 42) WHERE sequence = 1",
         "event 1 (choose_schedule): malformed arguments: field 'bogus' is not one of "
         "choose_schedule's fields (kind, pp, v, m, zero_bubble_f_ns, zero_bubble_i_ns, "
         "zero_bubble_w_ns, zero_bubble_comm_ns, max_activations)"},
        {"UPDATE events SET arguments = json_set(arguments, '$.forward_ns', -5) "
         "WHERE sequence = 5",
         "event 5 (set_stage_costs): malformed arguments: field 'forward_ns': -5 is negative; a "
         "time or size is zero or more"},
        // A failed call goes to the errors table: a stream row marked failed is no recorder's.
        {"UPDATE events SET outcome = 'there is no stage 9' WHERE sequence = 5",
         "event 5 (set_stage_costs) is marked as failed (there is no stage 9), but a recorder "
         "writes only calls that succeeded into its stream"},
        // Two events swapped keep their clock times (a simulation records none: given here).
        {"UPDATE events SET time_ns = 30 - 10 * sequence WHERE sequence IN (2, 3)",
         "event 3 (configure_transport) was recorded at 0 ns, before event 2 (lower_schedule) at "
         "10 ns: the events are renumbered"},
    };
    for (const auto& [damage, why] : damages) {
        const auto trace = fresh_trace("replay_damaged_copy");
        std::filesystem::copy_file(recorded, trace);
        ASSERT_GE(edit_trace(trace, damage), 1) << damage;
        const std::string expected = "pipelens: " + trace.string() +
                                     ": trace is corrupt: run 1 whole pipeline: " + why + "\n";
        for (const std::string& command : {"replay " + trace.string() + " --check",
                                           "bisect " + trace.string() + " --until-error"}) {
            const auto result = run_pipelens(command);
            EXPECT_EQ(result.exit_code, 2) << command << " after " << damage;
            EXPECT_EQ(result.err, expected) << command;
        }
    }
    // The snapshot of a run is taken after its last event; one taken elsewhere is damage too.
    ASSERT_EQ(edit_trace(recorded, "UPDATE state_snapshots SET after_sequence = 5"), 1);
    const auto result = run_pipelens("replay " + recorded.string() + " --check");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + recorded.string() +
                              ": trace is corrupt: run 1 whole pipeline: its state snapshot is "
                              "taken after event 5, but its events end at event 11\n");
}

// Arguments nested a hundred thousand levels deep (no recorder writes more than a few) are a
// damaged trace, exit 2, for every command that reads the events: printing them in the error
// once overflowed the stack. A state snapshot that is no list of pairs is damage too.
TEST(ReplayCli, DeeplyNestedArgumentsAndASnapshotThatIsNoListAreDamage) {
    const auto recorded = fresh_trace("replay_nested");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + recorded.string()).exit_code, 0);
    const auto trace = fresh_trace("replay_nested_copy");
    std::filesystem::copy_file(recorded, trace);
    ASSERT_EQ(edit_trace(trace,
                         "UPDATE events SET arguments = '{\"kind\":' || "
                         "replace(hex(zeroblob(100000)), '00', '[') || "
                         "replace(hex(zeroblob(100000)), '00', ']') || '}' "
                         "WHERE sequence = 1"),
              1);
    for (const std::string& command :
         {"replay " + trace.string(), "bisect " + trace.string() + " " + recorded.string(),
          "bisect " + trace.string() + " --until-error"}) {
        const auto result = run_pipelens(command);
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                                  ": trace is corrupt: run 1 whole pipeline: event 1 "
                                  "(choose_schedule) has arguments nested more than 64 levels "
                                  "deep, which no recorder writes\n")
            << command;
    }
    // A megabyte of kind name is quoted cut short: one line, not three copies of it.
    const auto long_kind = fresh_trace("replay_long_kind");
    std::filesystem::copy_file(recorded, long_kind);
    ASSERT_EQ(edit_trace(long_kind,
                         "UPDATE events SET arguments = json_set(arguments, '$.kind', "
                         "replace(hex(zeroblob(500000)), '00', 'AA')) "
                         "WHERE sequence = 1"),
              1);
    const auto quoted = run_pipelens("replay " + long_kind.string());
    EXPECT_EQ(quoted.exit_code, 2);
    EXPECT_LT(quoted.err.size(), 2000u);
    EXPECT_NE(quoted.err.find("unknown schedule kind 'AAAA"), std::string::npos) << quoted.err;
    ASSERT_EQ(edit_trace(recorded, "UPDATE state_snapshots SET state = '{}'"), 1);
    const auto snapshot = run_pipelens("replay " + recorded.string() + " --check");
    EXPECT_EQ(snapshot.exit_code, 2);
    EXPECT_NE(snapshot.err.find("the state snapshot is not a list of [field, value] pairs: it is "
                                "a JSON object"),
              std::string::npos)
        << snapshot.err;
}

TEST(ReplayCli, BadRequestsAreOneLineUsageErrors) {
    const auto trace = fresh_trace("replay_bad");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    auto result = run_pipelens("replay " + trace.string() + " --rank 3");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                              ": run 1 has no events for rank 3 (ranks with events: -1)\n");
    result = run_pipelens("replay " + trace.string() + " --run 9");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("run 9"), std::string::npos) << result.err;
    result = run_pipelens("replay " + trace.string() + " --check --upto 3");
    EXPECT_EQ(result.exit_code, 2);
    result = run_pipelens("replay " + trace.string() + " --upto -3");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(
        result.err,
        "pipelens: --upto -3: events are numbered from 0 (the constructor); give 0 or more\n");
    // A snapshot no writer produces is a damaged trace (exit 2, naming it), not a difference.
    ASSERT_EQ(edit_trace(trace, "UPDATE state_snapshots SET state = 'garbage'"), 1);
    result = run_pipelens("replay " + trace.string() + " --check");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err.rfind("pipelens: " + trace.string() +
                                   ": trace is corrupt: run 1 whole pipeline: the state snapshot "
                                   "is not a list of [field, value] pairs: ",
                               0),
              0u)
        << result.err;
    result = run_pipelens("bisect " + trace.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: bisect needs a second trace, or --other-run / --other-rank to "
              "compare within one trace (or --until-error)\n");
    // --until-error checks one stream: a second one given beside it went unchecked, exit 0.
    for (const std::string& second :
         {" " + trace.string(), std::string(" --other-run 1"), std::string(" --other-rank 0")}) {
        result = run_pipelens("bisect " + trace.string() + second + " --until-error");
        EXPECT_EQ(result.exit_code, 2) << second;
        EXPECT_EQ(result.err,
                  "pipelens: bisect --until-error checks one stream (the first trace's --run and "
                  "--rank): leave out the second trace, --other-run and --other-rank, or run it "
                  "once per stream\n")
            << second;
    }
}

}  // namespace
}  // namespace pipelens
