// `pipelens sweep` and `pipelens merge` as a user and a job array run them: real processes, the
// files they write (JSON, CSV, PNG, SVG, traces), shards joined back into exactly the whole
// sweep, and the errors of bad axes and of shards that do not make a whole.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"

namespace pipelens {
namespace {

using testing::read_file;
using testing::run_pipelens;

// GPipe's closed form holds at every point: step (m + pp - 1) x (2 us + W).
constexpr const char* kGrid =
    "sweep --f 1us --i 1us --held-activation-bytes 1MiB --sweep "
    "kind=GPipe,1F1B,ZBVZeroBubble "
    "--sweep pp=2,4 --sweep m=4,8,16 --sweep w=1us,2us";

class SweepCli : public ::testing::Test {
  protected:
    void SetUp() override {
        directory_ = std::filesystem::temp_directory_path() /
                     ("pipelens_sweep_" + std::to_string(::getpid()) + "_" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(directory_);
        std::filesystem::create_directories(directory_);
    }
    void TearDown() override { std::filesystem::remove_all(directory_); }
    std::string path(const std::string& name) const { return (directory_ / name).string(); }

    std::filesystem::path directory_;
};

TEST_F(SweepCli, WritesTheTableJsonCsvAndBothPictures) {
    const auto result =
        run_pipelens(std::string(kGrid) + " --json " + path("r.json") + " --csv " + path("r.csv") +
                     " --png " + path("r.png") + " --svg " + path("r.svg") + " --top 3");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.substr(0, result.out.find(" in ")),
              "sweep of 36 configurations (3 schedule.kind x 2 schedule.pp x 3 schedule.m x 2 "
              "costs.w): 36 run");
    EXPECT_NE(result.out.find("configurations/s), 36 simulated\n"), std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("place  front  schedule"), std::string::npos);
    EXPECT_NE(result.out.find("... 33 more"), std::string::npos);
    const nlohmann::json json = nlohmann::json::parse(read_file(path("r.json")));
    EXPECT_EQ(json["grid_size"], 36);
    EXPECT_EQ(json["shard"], "1/1");
    ASSERT_EQ(json["configurations"].size(), 36u);
    for (const nlohmann::json& point : json["configurations"])
        if (point["schedule"] == "GPipe" && point["values"]["costs.w"] == "1us") {
            EXPECT_EQ(point["step_time_ns"].get<int>(),
                      (point["m"].get<int>() + point["pp"].get<int>() - 1) * 3000);
        }
    const std::string csv = read_file(path("r.csv"));
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 37);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "place,pareto,index,schedule.kind,schedule.pp,schedule.m,costs.w,schedule,pp,v,m,"
              "microbatch_size,step_time_ns,bubble_ratio,peak_memory_bytes,peak_memory_rank,"
              "error");
    // The PNG's header: signature, then IHDR with the width and height (1400 x 620).
    const std::string png = read_file(path("r.png"));
    ASSERT_GT(png.size(), 24u);
    EXPECT_EQ(png.substr(1, 3), "PNG");
    EXPECT_EQ(png.substr(16, 8), std::string("\0\0\x05\x78\0\0\x02\x6c", 8));
    const std::string svg = read_file(path("r.svg"));
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("the Pareto front"), std::string::npos);
}

// A kind axis over an experiment that names a schedule file replaces the file, keeping its pp
// and m (the bundled PyTorch CSV is pp=4 v=2 m=8); it once crashed (SIGSEGV) on the conflict.
TEST_F(SweepCli, AKindAxisReplacesTheExperimentsScheduleFile) {
    const auto result =
        run_pipelens(std::string("sweep ") + PIPELENS_SOURCE_DIR +
                     "/assets/examples/pytorch_csv.toml --sweep kind=1F1B,ZBVZeroBubble "
                     "--json " +
                     path("kinds.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const nlohmann::json json = nlohmann::json::parse(read_file(path("kinds.json")));
    ASSERT_EQ(json["configurations"].size(), 2u);
    for (const nlohmann::json& point : json["configurations"]) {
        EXPECT_FALSE(point.contains("error")) << point.dump();
        EXPECT_EQ(point["pp"], 4) << point.dump();
        EXPECT_EQ(point["m"], 8) << point.dump();
        EXPECT_EQ(point["v"], point["schedule"] == "1F1B" ? 1 : 2) << point.dump();
    }
}

TEST_F(SweepCli, ShardsMergedAreExactlyTheWholeSweepAndTheirTracesJoin) {
    ASSERT_EQ(
        run_pipelens(std::string(kGrid) + " --threads 1 --json " + path("whole.json")).exit_code,
        0);
    std::string merge = "merge --json " + path("merged.json") + " --out " + path("merged.db");
    for (int shard = 1; shard <= 3; ++shard) {
        const std::string name = std::to_string(shard) + "_part";
        const auto part =
            run_pipelens(std::string(kGrid) + " --shard " + std::to_string(shard) + "/3 --json " +
                         path(name + ".json") + " --out " + path(name + ".db") + " --record 2");
        ASSERT_EQ(part.exit_code, 0) << part.err;
        EXPECT_NE(part.err.find("recorded the 2 best as runs 1, 2 in"), std::string::npos)
            << part.err;
        merge += fmt::format(" {} {}", path(name + ".json"), path(name + ".db"));
    }
    const auto merged = run_pipelens(merge);
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_NE(merged.out.find("merged 3 shards of a sweep of 36 configurations"),
              std::string::npos);
    const nlohmann::json whole = nlohmann::json::parse(read_file(path("whole.json")));
    const nlohmann::json joined = nlohmann::json::parse(read_file(path("merged.json")));
    EXPECT_EQ(joined, whole);
    const auto summary = run_pipelens("summary " + path("merged.db"));
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_NE(summary.out.find("\n   6  sim   finished"), std::string::npos) << summary.out;
    EXPECT_EQ(run_pipelens("summary " + path("merged.db") + " --run 6").exit_code, 0);
    EXPECT_NE(run_pipelens("summary " + path("merged.db") + " --run 7").exit_code, 0);

    // Beside results files the traces are those shards' own: a shard's trace missing, given
    // twice, or a trace no sweep recorded, once went into --out without a word.
    std::string results;
    for (int shard = 1; shard <= 3; ++shard)
        results += " " + path(std::to_string(shard) + "_part.json");
    ASSERT_EQ(run_pipelens("simulate --out " + path("other.db")).exit_code, 0);
    std::filesystem::copy_file(path("1_part.db"), path("1_copy.db"));
    for (const auto& [traces, why] : std::vector<std::pair<std::string, std::string>>{
             {" 1_part.db 2_part.db",
              "no trace holds the runs of shard 3/3 (" + path("3_part.json") + ")"},
             {" 1_part.db 2_part.db 3_part.db other.db",
              path("other.db") + ": run 1 (1F1B) was not recorded by a sweep"},
             {" 1_part.db 1_copy.db 2_part.db 3_part.db",
              path("1_part.db") + " and " + path("1_copy.db") +
                  " both hold the runs of shard 1/3"}}) {
        std::string command = "merge" + results + " --out " + path("refused.db");
        for (std::size_t at = 1; at < traces.size();) {
            const std::size_t end = traces.find(' ', at);
            command += " " + path(traces.substr(at, end - at));
            at = end == std::string::npos ? traces.size() : end + 1;
        }
        const auto refused = run_pipelens(command);
        EXPECT_EQ(refused.exit_code, 1) << traces;
        EXPECT_NE(refused.err.find(why), std::string::npos) << refused.err;
        EXPECT_FALSE(std::filesystem::exists(path("refused.db"))) << traces;
    }
}

// Every input trace is read whole before anything is copied: a damaged second trace once left
// the first one's runs in --out (exit 2 after copying), and a damaged run was copied on.
TEST_F(SweepCli, MergeChecksEveryTraceBeforeCopyingAny) {
    for (const std::string name : {"good.db", "damaged.db"})
        ASSERT_EQ(run_pipelens("simulate --out " + path(name)).exit_code, 0);
    ASSERT_EQ(testing::edit_trace(path("damaged.db"),
                                  "UPDATE actions SET kind = 999 WHERE rank = 0 AND step = 0"),
              1);
    const auto result = run_pipelens("merge " + path("good.db") + " " + path("damaged.db") +
                                     " --out " + path("joined.db"));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + path("damaged.db") +
                              ": trace is corrupt: run 1 rank 0 step 0: action kind 999 is not a "
                              "pipeline action\n");
    EXPECT_FALSE(std::filesystem::exists(path("joined.db")));

    // One trace named twice (here once through a link) would copy its runs twice.
    std::filesystem::create_symlink(path("good.db"), path("again.db"));
    const auto twice = run_pipelens("merge " + path("good.db") + " " + path("again.db") +
                                    " --out " + path("joined.db"));
    EXPECT_EQ(twice.exit_code, 2);
    EXPECT_EQ(twice.err, "pipelens merge: " + path("good.db") + " and " + path("again.db") +
                             " are the same trace: its runs would be copied twice\n");
    EXPECT_FALSE(std::filesystem::exists(path("joined.db")));
}

TEST_F(SweepCli, ShardsThatDoNotMakeAWholeAreRefusedByName) {
    for (int shard = 1; shard <= 2; ++shard)
        ASSERT_EQ(run_pipelens(std::string(kGrid) + " --shard " + std::to_string(shard) +
                               "/3 --json " + path(std::to_string(shard) + "_of_3.json"))
                      .exit_code,
                  0);
    ASSERT_EQ(run_pipelens("sweep --sweep pp=2,4 --json " + path("other.json")).exit_code, 0);
    auto result = run_pipelens("merge " + path("1_of_3.json") + " " + path("2_of_3.json"));
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.err, "pipelens merge: shard 3/3 missing\n");
    result = run_pipelens("merge " + path("1_of_3.json") + " " + path("1_of_3.json"));
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("are both shard 1/3"), std::string::npos) << result.err;
    result = run_pipelens("merge " + path("1_of_3.json") + " " + path("other.json"));
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("other.json is not a shard of the same sweep as"), std::string::npos)
        << result.err;
    std::ofstream(path("plain.json")) << "{\"step_time_ns\": 3}";
    result = run_pipelens("merge " + path("plain.json"));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("plain.json: not a pipelens sweep's results"), std::string::npos);
    EXPECT_EQ(result.err.rfind("pipelens merge: ", 0), 0u) << result.err;
    // An empty file is neither kind: it was read as JSON ("not JSON (byte 1, the end)").
    std::ofstream(path("empty.db")).flush();
    result = run_pipelens("merge " + path("empty.db") + " --out " + path("out.db"));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens merge: " + path("empty.db") +
                              ": is empty (0 bytes): neither a trace nor a sweep's results file\n");
    std::filesystem::create_directories(path("a_directory"));
    result = run_pipelens("merge " + path("a_directory") + " --out " + path("out.db"));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens merge: " + path("a_directory") +
                              ": is a directory, not a trace or a sweep's results file\n");
}

TEST_F(SweepCli, ABadAxisStopsBeforeAnySimulatingWithOneLine) {
    auto result = run_pipelens("sweep --sweep costs.ff=1ms");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: --sweep costs.ff=1ms: costs.ff: unknown key\n");
    result = run_pipelens("sweep --f 1us");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("nothing to sweep"), std::string::npos);
    result = run_pipelens("sweep --sweep pp=2 --shard 4/3");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--shard: expected I/N"), std::string::npos);
    // A trace that cannot be written is refused before the grid runs, not after it.
    result = run_pipelens("sweep --sweep m=4,8 --out /nonexistent/dir/best.db");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err,
              "pipelens: /nonexistent/dir/best.db: cannot create trace: directory "
              "/nonexistent/dir does not exist\n");
    // The second of two flags for one key once silently replaced the first.
    result = run_pipelens("sweep --sweep pp=2 --sweep pp=4");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens sweep: --sweep pp=2 and --sweep pp=4 both sweep schedule.pp: "
              "give all its values in one --sweep\n");
}

// A grid none of whose configurations simulates is a failed sweep, not exit 0: the default
// experiment's four per-stage costs fit no pp but 4.
TEST_F(SweepCli, AGridOfWhichNothingSimulatesExitsTwo) {
    const auto result = run_pipelens("sweep --sweep pp=2,3");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.out.find("2 configurations were not simulated, e.g. configuration 0 "
                              "(schedule.pp=2): default experiment: costs.f: has 4 values"),
              std::string::npos)
        << result.out;
    EXPECT_EQ(result.err,
              "pipelens sweep: none of the 2 configurations could be simulated (why: above)\n");
}

// The runs --out records are the configurations ranked: with --global-batch each microbatch
// carries global_batch / m sequences there too (the runs were once simulated with one).
TEST_F(SweepCli, TheRecordedRunsAreTheConfigurationsRankedWithAGlobalBatch) {
    const auto result = run_pipelens(
        "sweep --sweep kind=1F1B --sweep pp=4,8 --sweep m=8,64 --costs-per model --f 64us --i "
        "64us --w 64us --global-batch 64 --json " +
        path("ranked.json") + " --out " + path("best.db"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const nlohmann::json ranked = nlohmann::json::parse(read_file(path("ranked.json")));
    EXPECT_EQ(ranked["global_batch"], 64);
    std::vector<std::string> rows;
    for (const auto& configuration : ranked["configurations"])
        rows.push_back(fmt::format("{}|{}|{}", configuration["pp"].get<int>(),
                                   configuration["m"].get<int>(),
                                   configuration["step_time_ns"].get<std::int64_t>()));
    EXPECT_EQ(testing::query_trace(path("best.db"),
                                   "SELECT group_concat(row, ';') FROM (SELECT pp || '|' || m || "
                                   "'|' || step_time_ns AS row FROM runs ORDER BY id)"),
              fmt::format("{}", fmt::join(rows, ";")));
    // (m + pp - 1) x 8 sequences x (F + I + W of one sequence on a stage): 15 x 8 x 24 us.
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[1], "8|8|2880000");
}

// An output that cannot be written stops the command before the grid runs or any trace is
// copied: a shard's hours of simulation were once lost at the end to a missing directory.
TEST_F(SweepCli, OutputsThatCannotBeWrittenAreRefusedBeforeAnyWork) {
    const std::string missing = "/nonexistent/dir/results.json";
    auto result =
        run_pipelens("sweep --sweep m=4,8 --csv " + path("ok.csv") + " --json " + missing);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err,
              "pipelens: " + missing + ": cannot write the file: No such file or directory\n");
    EXPECT_FALSE(std::filesystem::exists(path("ok.csv")));
    ASSERT_EQ(
        run_pipelens("sweep --sweep m=4,8 --json " + path("r.json") + " --out " + path("r.db"))
            .exit_code,
        0);
    result = run_pipelens("merge " + path("r.json") + " " + path("r.db") + " --out " +
                          path("all.db") + " --json " + missing);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_FALSE(std::filesystem::exists(path("all.db")));
}

// A merge run twice, or retried after a failure, once copied every run twice into --out.
// Options that only results files (or only traces) feed need those inputs: a gate over nothing
// once passed without a word.
TEST_F(SweepCli, MergeRefusesATraceThatHoldsRunsAndOptionsWithoutTheirInputs) {
    ASSERT_EQ(
        run_pipelens("sweep --sweep m=4,8 --json " + path("r.json") + " --out " + path("r.db"))
            .exit_code,
        0);
    const std::string merge = "merge " + path("r.json") + " " + path("r.db") + " --out ";
    ASSERT_EQ(run_pipelens(merge + path("all.db")).exit_code, 0);
    auto result = run_pipelens(merge + path("all.db"));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens merge: --out " + path("all.db") +
                              " already holds 2 runs; merging into it would put the shards' runs "
                              "beside them (a merge run twice copies every run twice): name a new "
                              "file, or remove it first\n");
    EXPECT_EQ(testing::query_trace(path("all.db"), "SELECT count(*) FROM runs"), "2");
    result =
        run_pipelens("merge " + path("r.db") + " --out " + path("gated.db") + " --max-bubble 1%");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens merge: a gate needs sweep results files (pipelens sweep --shard I/N "
              "--json) among the inputs; only traces were given\n");
    result = run_pipelens("merge " + path("r.json") + " --out " + path("none.db"));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens merge: --out copies the runs of input traces; none was given (the "
              "shards' --out files)\n");
    EXPECT_FALSE(std::filesystem::exists(path("gated.db")));
    EXPECT_FALSE(std::filesystem::exists(path("none.db")));
}

// A shard whose part of the grid simulates nothing is a configuration's outcome, not a failed
// job-array task; the merge judges the whole grid. A grid of configurations all too large for
// the machine is exit 3, as `simulate` says of one. The runs a shard records say its shard.
TEST_F(SweepCli, AShardThatSimulatesNothingSucceedsAndPlacesAreTheShards) {
    std::string merge = "merge";
    for (int shard = 1; shard <= 2; ++shard) {
        const std::string name = path(fmt::format("{}.json", shard));
        const auto part =
            run_pipelens(fmt::format("sweep --sweep pp=2,4 --shard {}/2 --json {} "
                                     "--out {}",
                                     shard, name, path(fmt::format("{}.db", shard))));
        EXPECT_EQ(part.exit_code, 0) << part.err;
        merge += " " + name;
        if (shard == 1) {
            EXPECT_EQ(part.err,
                      "pipelens sweep: none of shard 1/2's 1 configurations could be simulated "
                      "(why: above); pipelens merge ranks the whole grid\n");
        }
    }
    EXPECT_EQ(run_pipelens(merge).exit_code, 0);
    EXPECT_NE(testing::query_trace(path("2.db"), "SELECT config FROM runs")
                  .find("sweep shard 2/2 place 1: 1F1B pp=4 v=1 m=8"),
              std::string::npos);
    const auto result =
        run_pipelens("sweep --schedule GPipe --f 1 --b 2 --sweep pp=20000 --sweep m=20000,25000");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err,
              "pipelens sweep: none of the 2 configurations could be simulated: each is too "
              "large for this machine's memory (why: above)\n");
}

// A grid whose results cannot be held is refused before its first configuration (10^7 once ran
// 38 s before it ran out of memory), pointing at --shard.
TEST_F(SweepCli, AGridWhoseResultsCannotBeHeldIsRefusedBeforeItRuns) {
    std::string grid;
    for (const char* key : {"pp", "m", "f", "w", "i", "b", "activation_bytes"})
        grid += fmt::format(" --sweep {}=1,2,3,4,5,6,7,8,9,10", key);
    const auto result = testing::run_command("sh -c \"ulimit -v 2000000; exec " +
                                             std::string(PIPELENS_BINARY) + " sweep" + grid + "\"");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err.rfind("pipelens sweep: 10000000 configurations need at least 2.0 GiB "
                               "to hold their results, and ",
                               0),
              0u)
        << result.err;
    EXPECT_NE(result.err.find("split the grid with --shard I/N"), std::string::npos);
}

// Each swept kind sets its own v, so a --v beside a kind axis would be dropped without a word.
TEST_F(SweepCli, AVFlagASweptKindWouldReplaceIsRefused) {
    const auto result = run_pipelens(
        "sweep --v 4 --m 8 --costs-per model --f 1ms --sweep kind=Interleaved1F1B,LoopedBFS");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens sweep: --v 4 would be replaced by each swept kind's own v: give --sweep "
              "v=4 in its place to keep it for every kind\n");
    EXPECT_EQ(run_pipelens("sweep --m 8 --costs-per model --f 1ms --sweep "
                           "kind=Interleaved1F1B,LoopedBFS --sweep v=4")
                  .exit_code,
              0);
}

// Configurations that each fit the memory alone but not side by side are simulated again alone:
// the grid's figures never depend on the thread count (two threads once lost the whole grid).
TEST_F(SweepCli, ConfigurationsThatFitOnlyAloneAreSimulatedAlone) {
    const auto result = testing::run_command(
        "sh -c \"ulimit -v 1600000; exec " + std::string(PIPELENS_BINARY) +
        " sweep --sweep kind=GPipe,1F1B --sweep pp=512 --sweep m=4096 --f 1 --b 2 --threads 2 "
        "--json " +
        path("alone.json") + "\"");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const nlohmann::json ranked = nlohmann::json::parse(read_file(path("alone.json")));
    for (const auto& configuration : ranked["configurations"])
        EXPECT_EQ(configuration["step_time_ns"], 13821000) << configuration;
}

TEST_F(SweepCli, AFilesSweepTableAndGatesOnEveryConfiguration) {
    std::ofstream(path("grid.toml")) << "[schedule]\nkind = \"GPipe\"\npp = 4\nm = 8\n"
                                        "[costs]\nf = \"1us\"\ni = \"1us\"\nw = \"1us\"\n"
                                        "[sweep]\nschedule.m = [4, 8]\n";
    const auto result = run_pipelens("sweep " + path("grid.toml") +
                                     " --max-step-time 30us --junit " + path("gates.xml"));
    EXPECT_EQ(result.exit_code, 1);  // m=4: 21 us passes, m=8: 33 us fails
    EXPECT_EQ(result.err,
              "pipelens: GPipe pp=4 v=1 m=8: gate failed: step time 33.000 us exceeds "
              "--max-step-time 30.000 us by 3.000 us (10.0%)\n");
    const std::string junit = read_file(path("gates.xml"));
    EXPECT_NE(junit.find("tests=\"2\" failures=\"1\""), std::string::npos) << junit;
}

// A calibrated file's [jitter] is drawn by `simulate`, not by a grid: the ranking says which step
// it ranks by, and only where there are draws it does not take.
TEST(SweepJitterCli, AGridOfAJitteredExperimentSaysItRanksTheStepOfTheCosts) {
    const std::string body =
        "[schedule]\nkind = \"1F1B\"\npp = 2\nm = 4\n[costs]\nf = 1\ni = 1\n"
        "w = 1\n";
    const std::string note =
        "note: ranked by the step of the costs; [jitter]'s draws are not "
        "taken here";
    auto result = run_pipelens(
        "sweep " +
        testing::temp_file("noisy_sweep.toml", body + "[jitter]\nquantiles = [0.5, 1.5]\n")
            .string() +
        " --sweep kind=1F1B,GPipe");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find(note), std::string::npos) << result.out;
    result = run_pipelens("sweep " + testing::temp_file("quiet_sweep.toml", body).string() +
                          " --sweep kind=1F1B,GPipe");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.find("[jitter]"), std::string::npos) << result.out;
}

// A transformer's microbatch size as an axis: beside --global-batch, which sets every
// microbatch to N/m sequences, two rows were one configuration under two labels (both on the
// front), so it is refused; without it the batch is m x the size, and the heading once said the
// batch stayed fixed and ranked the raw steps. Ranked per sequence, m = 16 ties at either size.
TEST_F(SweepCli, AMicrobatchSizeAxisRanksPerSequenceAndIsRefusedBesideAGlobalBatch) {
    std::ofstream(path("tr.toml")) << "[schedule]\nkind = \"1F1B\"\npp = 4\nm = 8\n"
                                      "[transformer]\nlayers = 16\nhidden = 2048\nheads = 16\n"
                                      "sequence = 2048\nmicrobatch_size = 1\ndevice_tflops = 400\n";
    const std::string sweep =
        "sweep " + path("tr.toml") + " --sweep transformer.microbatch_size=1,2";
    const auto refused = run_pipelens(sweep + " --global-batch 16");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_EQ(refused.out, "");
    EXPECT_EQ(refused.err,
              "pipelens sweep: transformer.microbatch_size is swept, and --global-batch 16 sets "
              "every microbatch to 16 / m sequences, so its values would label configurations "
              "that are the same: sweep m (schedule.m) for other microbatch sizes, or leave out "
              "--global-batch\n");
    const auto ranked = run_pipelens(sweep + " --sweep m=8,16 --json " + path("r.json"));
    ASSERT_EQ(ranked.exit_code, 0) << ranked.err;
    EXPECT_NE(ranked.out.find("\nranked by time per sequence (the step over m x microbatch "
                              "size), the grid not saying what stays fixed: m microbatches of a "
                              "fixed size make the batch grow with m (give --global-batch); "
                              "transformer.microbatch_size makes the batch m x the microbatch "
                              "size (give --global-batch and sweep m in its place)\n"),
              std::string::npos)
        << ranked.out;
    const nlohmann::json json = nlohmann::json::parse(read_file(path("r.json")));
    EXPECT_EQ(json["ranked_by"], "time per sequence");
    std::vector<std::string> rows;
    for (const auto& configuration : json["configurations"])
        rows.push_back(fmt::format("m={} b={} {} {}", configuration["m"].get<int>(),
                                   configuration["microbatch_size"].get<int>(),
                                   configuration["step_time_ns"].get<std::int64_t>(),
                                   configuration["pareto"].get<bool>() ? "front" : "-"));
    EXPECT_EQ(rows, (std::vector<std::string>{"m=16 b=1 137095355 front", "m=16 b=2 274190710 -",
                                              "m=8 b=1 79370995 -", "m=8 b=2 158741990 -"}));
}

}  // namespace
// One file can drive both jobs of a CI, the sweep and the gate: simulate runs its base
// experiment, saying that the [sweep] table is not its to run.
TEST_F(SweepCli, SimulateRunsTheBaseExperimentOfAFileWithASweepTable) {
    const auto file = testing::temp_file(
        "simulate_sweep_table.toml",
        "[schedule]\nkind = \"1F1B\"\npp = 4\nm = 8\n[sweep]\nschedule.m = [8, 16]\n");
    const auto result = run_pipelens("simulate " + file.string() + " --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(nlohmann::json::parse(result.out)["step_time_ns"], 33000);
    EXPECT_EQ(result.err, "pipelens: note: " + file.string() +
                              " sweeps 1 key in its [sweep] table, which is for pipelens sweep; "
                              "this is its base experiment\n");
}

}  // namespace pipelens
