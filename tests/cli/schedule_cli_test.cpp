// `pipelens schedule` and `pipelens check` as a user runs them: exact JSON, formats, exit codes
// and the messages for impossible configurations and broken files.
#include <gtest/gtest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;
using testing::temp_file;

bool contains(const std::string& text, const std::string& fragment) {
    return text.find(fragment) != std::string::npos;
}

TEST(ScheduleCli, JsonHasPyTorchActionsAndNoIdleSlots) {
    const auto result =
        run_pipelens("schedule --kind interleaved1f1b --pp 2 --v 2 --m 4 --format json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::ordered_json::parse(result.out);
    std::vector<std::string> keys;
    for (const auto& item : json.items())
        keys.push_back(item.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"kind", "pp", "v", "m", "stage_to_rank", "ranks"}));
    EXPECT_EQ(json["kind"], "Interleaved1F1B");
    EXPECT_EQ(json["pp"], 2);
    EXPECT_EQ(json["v"], 2);
    EXPECT_EQ(json["m"], 4);
    EXPECT_EQ(json["stage_to_rank"].dump(), R"({"0":0,"1":1,"2":0,"3":1})");
    EXPECT_EQ(json["ranks"]["0"].get<std::vector<std::string>>(),
              (std::vector<std::string>{"0F0", "0F1", "2F0", "2F1", "0F2", "2B0", "0F3", "2B1",
                                        "2F2", "0B0", "2F3", "0B1", "2B2", "2B3", "0B2", "0B3"}));
}

TEST(ScheduleCli, CommsAddsSendRecvButNoFsdpActions) {
    const auto comms = run_pipelens("schedule --kind 1F1B --pp 2 --m 2 --comms --format json");
    ASSERT_EQ(comms.exit_code, 0) << comms.err;
    const auto json = nlohmann::json::parse(comms.out);
    EXPECT_EQ(json["ranks"]["1"].get<std::vector<std::string>>(),
              (std::vector<std::string>{"1RECV_F0", "1F0", "1RECV_F1", "1B0", "1SEND_B0", "1F1",
                                        "1B1", "1SEND_B1"}));
    EXPECT_FALSE(contains(comms.out, "UNSHARD"));
    EXPECT_FALSE(contains(comms.out, "REDUCE_GRAD"));
    const auto fsdp = run_pipelens("schedule --kind 1F1B --pp 2 --m 2 --fsdp --format json");
    ASSERT_EQ(fsdp.exit_code, 0) << fsdp.err;
    EXPECT_TRUE(contains(fsdp.out, "\"0UNSHARD\",\"0F0\""));
    EXPECT_TRUE(contains(fsdp.out, "\"0REDUCE_GRAD\",\"0RESHARD\"]"));
}

TEST(ScheduleCli, TableIsAStepByRankGrid) {
    const auto result = run_pipelens("schedule --kind GPipe --pp 2 --m 2");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out,
              "        Rank 0 Rank 1\n"
              "Step 0: 0F0    1F0\n"
              "Step 1: 0F1    1F1\n"
              "Step 2: 0B0    1B0\n"
              "Step 3: 0B1    1B1\n");
}

TEST(ScheduleCli, KindNamesAreCaseInsensitiveAndVShapesDefaultToTwoStages) {
    const auto result =
        run_pipelens("schedule --kind ScheduleZBVZeroBubble --pp 2 --m 4 --format json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.out, R"("v":2)"));
    EXPECT_TRUE(contains(result.out, R"("stage_to_rank":{"0":0,"1":1,"2":1,"3":0})"));
    // The format's name too, as the kind's: CSV is csv, not a table.
    const auto csv = run_pipelens("schedule --kind 1F1B --pp 2 --m 2 --format CSV");
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("0F0,0F1,0B0,0B1", 0), 0u) << csv.out;
}

TEST(ScheduleCli, ImpossibleConfigurationsNameTheRule) {
    const auto one_f_one_b = run_pipelens("schedule --kind 1F1B --pp 4 --m 2");
    EXPECT_EQ(one_f_one_b.exit_code, 2);
    EXPECT_TRUE(contains(one_f_one_b.err,
                         "invalid schedule configuration: 1F1B needs at least as many microbatches "
                         "as stages: m=2 < stages=4"))
        << one_f_one_b.err;
    const auto dual = run_pipelens("schedule --kind DualPipeV --pp 4 --m 6");
    EXPECT_EQ(dual.exit_code, 2);
    EXPECT_TRUE(contains(dual.err, "m=6 < stages=8")) << dual.err;
    const auto unknown = run_pipelens("schedule --kind Chimera --pp 4 --m 8");
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_TRUE(contains(unknown.err, "unknown schedule kind 'Chimera'")) << unknown.err;
    const auto missing = run_pipelens("schedule --kind 1F1B --m 8");
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_TRUE(contains(missing.err, "--pp is required")) << missing.err;
}

// Both once grew memory without bound: pp*v*m overflowed the size guard.
TEST(ScheduleCli, SizesBeyondTheLimitExitTwoBeforeGenerating) {
    const auto huge = run_pipelens("schedule --kind 1F1B --pp 1000000000 --m 1000000000");
    EXPECT_EQ(huge.exit_code, 2);
    EXPECT_TRUE(contains(huge.err,
                         "invalid schedule configuration: 1F1B: pp*v*m = 1000000000*1*1000000000 "
                         "is too large (the limit is 536870911 stage-microbatches)"))
        << huge.err;
    const auto wide = run_pipelens("schedule --kind LoopedBFS --pp 65536 --v 65536 --m 65536");
    EXPECT_EQ(wide.exit_code, 2);
    EXPECT_TRUE(contains(wide.err, "pp*v*m = 65536*65536*65536 is too large")) << wide.err;
}

// Counts are read by pipelens, as `simulate` reads them: a value CLI11 could not convert once
// exited 104 (its own code), 0 and -1 read as "missing".
TEST(ScheduleCli, CountFlagsOutOfRangeNameTheFlagAndExitTwo) {
    const auto overflow = run_pipelens("schedule --kind 1F1B --pp 2147483647 --m 99999999999");
    EXPECT_EQ(overflow.exit_code, 2);
    EXPECT_TRUE(contains(overflow.err, "--pp: 2147483647 is out of range (at most 1000000000)"))
        << overflow.err;
    const auto zero = run_pipelens("schedule --kind 1F1B --pp 0 --m 4");
    EXPECT_EQ(zero.exit_code, 2);
    EXPECT_TRUE(contains(zero.err, "--pp must be at least 1, got 0")) << zero.err;
    const auto file = temp_file("count_flags.csv", "0F0,0B0\n");
    const auto check = run_pipelens("check " + file.string() + " --m 99999999999");
    EXPECT_EQ(check.exit_code, 2);
    EXPECT_TRUE(contains(check.err, "--m: 99999999999 is out of range (at most 1000000000)"))
        << check.err;
}

// A file of a few bytes naming stage or microbatch 10^8 once took seconds and gigabytes to
// check; it is refused from what the file holds, and `check --m` sizes nothing by m.
TEST(CheckCli, HugeNumbersInATinyFileExitTwoAtOnce) {
    const auto stage = temp_file("huge_stage.csv", "0F0,0B0\n1F0,1B0\n100000000F0\n");
    const auto checked = run_pipelens("check " + stage.string());
    EXPECT_EQ(checked.exit_code, 2);
    EXPECT_TRUE(contains(checked.err, stage.string() +
                                          ":3: rank 2, cell 1: '100000000F0' names stage "
                                          "100000000, but no action names stages 2..99999999"))
        << checked.err;
    const auto microbatch = temp_file("huge_microbatch.csv", "0F0,0B0\n1F133333333\n");
    const auto simulated = run_pipelens("simulate --schedule-file " + microbatch.string());
    EXPECT_EQ(simulated.exit_code, 2);
    EXPECT_TRUE(contains(simulated.err,
                         "names microbatch 133333333, but no action names microbatches "
                         "1..133333332"))
        << simulated.err;
    const auto small = temp_file("small.csv", "0F0,0B0\n1F0,1B0\n");
    const auto declared = run_pipelens("check " + small.string() + " --m 1000000000");
    EXPECT_EQ(declared.exit_code, 1);
    EXPECT_TRUE(contains(declared.err, "stage 0: 1 of 1000000000 microbatches have a forward (F)"))
        << declared.err;
    for (const auto& path : {stage, microbatch, small})
        std::filesystem::remove(path);
}

TEST(CheckCli, GeneratedCsvPasses) {
    const auto path = temp_file("good.csv", "");
    const auto written = run_pipelens(
        "schedule --kind InterleavedZeroBubble --pp 4 --v 2 --m 8 "
        "--format csv --out " +
        path.string());
    ASSERT_EQ(written.exit_code, 0) << written.err;
    const auto checked = run_pipelens("check " + path.string() + " --pp 4 --m 8");
    EXPECT_EQ(checked.exit_code, 0) << checked.err;
    EXPECT_TRUE(contains(checked.out,
                         ": ok: pp=4, 8 stages, m=8, 192 actions (compute only; "
                         "lowers to 416 actions with 112 send/recv pairs); dry run "
                         "completes"))
        << checked.out;
    std::filesystem::remove(path);
}

// The table PyTorch 2.11's ScheduleGPipe printed (tests/data/pytorch/), REDUCE_GRAD and all.
TEST(CheckCli, PyTorchsOwnGPipeTablePasses) {
    const std::string table =
        PIPELENS_SOURCE_DIR "/tests/data/pytorch/schedules/GPipe_pp4_v1_m8_compute.csv";
    const auto checked = run_pipelens("check " + table + " --pp 4 --m 8");
    EXPECT_EQ(checked.exit_code, 0) << checked.err;
    EXPECT_EQ(checked.out, table +
                               ": ok: pp=4, 4 stages, m=8, 68 actions (compute only; lowers to "
                               "160 actions with 48 send/recv pairs); dry run completes\n");
    // PyTorch wrote it, and its own compute-only reader refuses it: said, not hidden.
    EXPECT_EQ(checked.err, "pipelens: note: " + table +
                               " is compute-only but holds REDUCE_GRAD, as PyTorch's _dump_csv "
                               "writes GPipe and 1F1B: read here, but PyTorch's "
                               "_load_csv(format=\"compute_only\") refuses it\n");
    const auto simulated = run_pipelens("simulate --schedule-file " + table + " --f 1 --b 1");
    EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
    EXPECT_TRUE(contains(simulated.out, "step time 22.000 us, bubble ratio 27.3%"))
        << simulated.out;
    // A lowered file's idle slot (a simulated dump's) is read past, and named.
    const std::string dump = PIPELENS_SOURCE_DIR "/tests/data/pipelining/1f1b_pp2_m4_comms.csv";
    const auto lowered = run_pipelens("check " + dump);
    EXPECT_EQ(lowered.exit_code, 0) << lowered.err;
    EXPECT_TRUE(contains(lowered.err, dump + ":1: rank 0, cell 5 is empty, in a schedule with "
                                             "communication actions"))
        << lowered.err;
    const auto misplaced =
        temp_file("misplaced.csv", "0F0,0F1,0B0,0REDUCE_GRAD,0B1\n1F0,1F1,1B0,1B1\n");
    const auto refused = run_pipelens("check " + misplaced.string());
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_TRUE(contains(refused.err, misplaced.string() +
                                          ": schedule check failed (1 problem):\n  - rank 0, "
                                          "step 3: '0REDUCE_GRAD' where lowering puts '0B1'"))
        << refused.err;
    // simulate names the file too (it said only "schedule check failed").
    const auto simulated_misplaced = run_pipelens("simulate --schedule-file " + misplaced.string());
    EXPECT_EQ(simulated_misplaced.exit_code, 1);
    EXPECT_EQ(simulated_misplaced.err.rfind(
                  "pipelens: " + misplaced.string() + ": schedule check failed (1 problem):", 0),
              0u)
        << simulated_misplaced.err;
    std::filesystem::remove(misplaced);
}

TEST(CheckCli, SwappedRecvsExitNonZeroWithTheCycle) {
    const auto path = temp_file(
        "swapped.csv",
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0F2,0SEND_F2,0RECV_B1,0B1,0F3,0SEND_F3,0RECV_B2,"
        "0B2,0RECV_B3,0B3\r\n"
        "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1RECV_F3,1B1,1SEND_B1,1F2,1RECV_F2,1B2,1SEND_B2,"
        "1F3,1B3,1SEND_B3\r\n");
    const auto result = run_pipelens("check " + path.string());
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_TRUE(contains(result.err, "schedule can hang: wait cycle rank 0 -> rank 1 -> rank 0"))
        << result.err;
    EXPECT_TRUE(contains(result.err,
                         "rank 1 is stuck at step 6 (1RECV_F3): it needs 0SEND_F3, "
                         "which rank 0 only runs at step 11"))
        << result.err;
    std::filesystem::remove(path);
}

TEST(CheckCli, BrokenFilesExitNonZeroNamingTheProblem) {
    const auto malformed = temp_file("malformed.csv", "0F0,0B0\n1F0,1BX,1B0\n");
    const auto parse = run_pipelens("check " + malformed.string());
    EXPECT_EQ(parse.exit_code, 2);
    EXPECT_TRUE(contains(parse.err, ":2: rank 1, cell 2: invalid action '1BX'")) << parse.err;

    const auto misordered = temp_file("misordered.csv", "0B0,0F0\n1F0,1B0\n");
    const auto check = run_pipelens("check " + misordered.string());
    EXPECT_EQ(check.exit_code, 1);
    EXPECT_TRUE(contains(check.err, "schedule check failed (1 problem):")) << check.err;
    EXPECT_TRUE(contains(check.err, "rank 0, step 0: 0B0 runs the full backward")) << check.err;

    const auto missing = run_pipelens("check /nonexistent/schedule.csv");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_TRUE(contains(
        missing.err,
        "cannot open schedule file '/nonexistent/schedule.csv': No such file or directory"));
    std::filesystem::remove(malformed);
    std::filesystem::remove(misordered);
}

// What a message quotes back is cut short: a 10 MB cell once made a 10 MB error.
TEST(CheckCli, AHugeCellIsQuotedCutShort) {
    const auto huge = temp_file("huge_cell.csv", "0F0," + std::string(100000, 'X') + "\n");
    const auto checked = run_pipelens("check " + huge.string());
    EXPECT_EQ(checked.exit_code, 2);
    EXPECT_EQ(checked.err, "pipelens: " + huge.string() + ":1: rank 0, cell 2: invalid action '" +
                               std::string(61, 'X') +
                               "...': does not start with a stage number (expected "
                               "[stage][kind][microbatch] such as 2F0, 1RECV_F3, 0UNSHARD or "
                               "(0F7;7B3)OVERLAP_F_B)\n");
    std::filesystem::remove(huge);
}

// PyTorch's _load_csv makes every line a rank, so a blank line is an idle rank: trailing, it
// made `check` pass as pp=3 and `simulate` report pp=3 v=0 with a wrong bubble; in the middle it
// moved rank 1's actions to rank 2. Both are refused, naming the line, before anything runs.
TEST(CheckCli, BlankLinesInAScheduleFileAreRefusedNamingTheLine) {
    const std::string rank0 = "0F0,0F1,0B0,0B1\r\n";
    const std::string rank1 = "1F0,1B0,1F1,1B1\r\n";
    const auto trailing = temp_file("trailing_blank.csv", rank0 + rank1 + "\r\n");
    const auto middle = temp_file("middle_blank.csv", rank0 + "\r\n" + rank1);
    const auto fine = temp_file("final_newline.csv", rank0 + rank1);
    const std::string trailing_error =
        "pipelens: " + trailing.string() +
        ":3: blank line after the last rank's row: PyTorch's csv.reader makes every line a rank, "
        "so this is rank 2 with no actions and the file is pp=3, not 2; delete it (one line end "
        "after the last row is fine)\n";
    for (const std::string command : {"check ", "simulate --schedule-file "}) {
        SCOPED_TRACE(command);
        const auto refused = run_pipelens(command + trailing.string());
        EXPECT_EQ(refused.exit_code, 2);
        EXPECT_EQ(refused.err, trailing_error);
        EXPECT_EQ(refused.out, "");
    }
    const auto moved = run_pipelens("check " + middle.string());
    EXPECT_EQ(moved.exit_code, 2);
    EXPECT_EQ(moved.err, "pipelens: " + middle.string() +
                             ":2: blank line: PyTorch's csv.reader makes every line a rank, so "
                             "this is rank 1 with no actions and the row below it becomes rank "
                             "2; delete it\n");
    const auto passed = run_pipelens("check " + fine.string());
    EXPECT_EQ(passed.exit_code, 0) << passed.err;
    EXPECT_TRUE(contains(passed.out, ": ok: pp=2, 2 stages, m=2, 8 actions")) << passed.out;
    for (const auto& path : {trailing, middle, fine})
        std::filesystem::remove(path);
}

// One mistyped number (5F2 for 1F2) used to print three "stage N is not run by any rank" lines
// and nothing about the cell: 5F2 is well-formed, and the reader took stage 5 as the pipeline's
// last. The reader now names the cell whose number lies above the gap.
TEST(CheckCli, AMistypedStageNamesItsCell) {
    const auto typo =
        temp_file("typo.csv", "0F0,0F1,0B0,0F2,0B1,0B2\r\n1F0,1B0,1F1,1B1,5F2,1B2\r\n");
    const auto checked = run_pipelens("check " + typo.string());
    EXPECT_EQ(checked.exit_code, 2);
    EXPECT_EQ(checked.err, "pipelens: " + typo.string() +
                               ":2: rank 1, cell 5: '5F2' names stage 5, but no action names "
                               "stages 2..4; stages are numbered from 0 without gaps, so is 5 a "
                               "typo?\n");
    std::filesystem::remove(typo);
}

std::string artifact(const std::string& name) {
    return std::string(PIPELENS_SOURCE_DIR) + "/tests/data/pytorch_artifacts/" + name;
}

// PyTorch's own artifact in its older notation (B = input backward, BW = full backward) gave 20
// "W runs before its input backward (I)" problems. It is recognised, said so, and checked.
TEST(CheckCli, PyTorchsOlderNotationIsRecognisedAndChecked) {
    const std::string legacy = artifact("legacy/zb1p_2rank_2stagep_compute.csv");
    const auto inferred = run_pipelens("check " + legacy);
    EXPECT_EQ(inferred.exit_code, 0) << inferred.err;
    EXPECT_EQ(inferred.out,
              legacy +
                  ": ok: pp=2, 4 stages, m=8, 96 actions (PyTorch's older notation, compute "
                  "only; lowers to 192 actions with 48 send/recv pairs); dry run completes\n");
    EXPECT_EQ(inferred.err,
              "pipelens: note: " + legacy +
                  " is in PyTorch's older action notation (line 1, cell 7: 2W0 follows 2B0 of the "
                  "same stage and microbatch, and no cell is an I): read B as the input backward "
                  "(today's I), W as the weight backward and BW as the full backward (today's B); "
                  "pass --notation current to read it as today's notation\n");
    const auto given = run_pipelens("check --notation legacy " + legacy);
    EXPECT_EQ(given.exit_code, 0) << given.err;
    EXPECT_EQ(given.err, "");
    EXPECT_EQ(given.out, inferred.out);
    const auto as_current = run_pipelens("check --notation current " + legacy);
    EXPECT_EQ(as_current.exit_code, 1);
    EXPECT_TRUE(contains(as_current.err,
                         "rank 0, step 5: 2W0 runs the weight backward of stage 2, microbatch 0 "
                         "before its input backward (I)"))
        << as_current.err;
    const std::string comms = artifact("legacy/zb1p_2rank_2stagep_comms.csv");
    const auto lowered = run_pipelens("check " + comms);
    EXPECT_EQ(lowered.exit_code, 0) << lowered.err;
    EXPECT_TRUE(contains(lowered.err, "(line 1, cell 12: 2BW0)")) << lowered.err;
    const auto bad = run_pipelens("check --notation old " + legacy);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_EQ(bad.err,
              "pipelens check: --notation: 'old' is not an action notation: auto (the default: "
              "inferred from the cells), current (F, I, W, B = full backward) or legacy (F, B = "
              "input backward, W, BW = full backward)\n");
}

// A schedule file in the older notation simulates exactly as its rewriting in today's does.
TEST(CheckCli, SimulateReadsTheOlderNotationAsItsRewriting) {
    const std::string legacy = artifact("legacy/zb1p_2rank_2stagep_compute.csv");
    const std::string current = artifact("current/zb1p_2rank_2stagep_compute.csv");
    const std::string costs = " --f 1ms --i 1ms --w 1ms";
    const auto old_run = run_pipelens("simulate --schedule-file " + legacy + costs);
    const auto new_run = run_pipelens("simulate --schedule-file " + current + costs);
    ASSERT_EQ(old_run.exit_code, 0) << old_run.err;
    ASSERT_EQ(new_run.exit_code, 0) << new_run.err;
    EXPECT_EQ(old_run.out, new_run.out);
    EXPECT_TRUE(contains(old_run.err,
                         "pipelens: note: " + legacy + " is in PyTorch's older action notation"))
        << old_run.err;
    EXPECT_EQ(new_run.err, "");
    const auto forced =
        run_pipelens("simulate --notation legacy --schedule-file " + legacy + costs);
    EXPECT_EQ(forced.out, new_run.out);
    EXPECT_EQ(forced.err, "");
    const auto without_file = run_pipelens("simulate --notation legacy");
    EXPECT_EQ(without_file.exit_code, 2);
    EXPECT_EQ(without_file.err,
              "pipelens: --notation is the notation of a schedule file: give one with "
              "--schedule-file (or [schedule] file)\n");
}

// simulate and sweep simulate a schedule file (run and explain run it: tests/cli/run_cli_test.cpp).
TEST(CheckCli, ScheduleFileHelpSaysTheFileIsSimulated) {
    for (const std::string command : {"simulate", "sweep"}) {
        const auto help = run_pipelens(command + " --help");
        EXPECT_TRUE(
            contains(help.out, "A PyTorch CSV schedule to simulate instead of a generated kind"))
            << command << help.out;
        EXPECT_TRUE(contains(help.out, "--notation")) << command << help.out;
    }
}

TEST(ScheduleCli, ZeroBubbleAutoSearchesWithTheGivenTimesAndLimit) {
    // F/I/W = 5/6/4, a transfer of 1, 2p memory: the authors' scheduler puts all eight forwards
    // of stage 0 before its first backward.
    const auto result = run_pipelens(
        "schedule --kind ZeroBubbleAuto --pp 4 --m 8 --f 5 --i 6 --w 4 --comm 1 "
        "--max-activations 2p --format json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["kind"], "ZeroBubbleAuto");
    EXPECT_EQ(json["ranks"]["0"].get<std::vector<std::string>>(),
              (std::vector<std::string>{"0F0", "0F1", "0F2", "0F3", "0F4", "0F5", "0F6", "0F7",
                                        "0I0", "0W0", "0I1", "0W1", "0I2", "0W2", "0I3", "0W3",
                                        "0I4", "0W4", "0I5", "0W5", "0I6", "0W6", "0I7", "0W7"}));
    const auto h2 = run_pipelens("schedule --kind ZeroBubbleH2 --pp 2 --m 3 --format csv");
    ASSERT_EQ(h2.exit_code, 0) << h2.err;
    EXPECT_EQ(h2.out,
              "0F0,0F1,0F2,0I0,0W0,0I1,0W1,0I2,0W2\r\n"
              "1F0,1I0,1F1,1I1,1F2,1I2,1W0,1W1,1W2\r\n");
}

TEST(ScheduleCli, DeferRecvLowersWithPyTorchsDeferredReceives) {
    const auto result =
        run_pipelens("schedule --kind 1F1B --pp 2 --m 2 --defer-recv --format json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["ranks"]["1"].get<std::vector<std::string>>(),
              (std::vector<std::string>{"1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1",
                                        "1B1", "1SEND_B1"}));
}

TEST(ScheduleCli, BadZeroBubbleInputsAreUsageErrors) {
    const auto zero =
        run_pipelens("schedule --kind ZeroBubbleAuto --pp 4 --m 8 --max-activations 0");
    EXPECT_EQ(zero.exit_code, 2);
    EXPECT_TRUE(contains(zero.err, "--max-activations: '0' is not a memory limit")) << zero.err;
    const auto other = run_pipelens("schedule --kind 1F1B --pp 4 --m 8 --f 5");
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_TRUE(contains(other.err, "1F1B takes none of them")) << other.err;
}

}  // namespace
}  // namespace pipelens
