// `pipelens import` as a user runs it on PyTorch profiler traces: the run and its simulated twin
// recorded, the recovered schedule written for `check`, and bad input refused with exit 2, one
// line naming the file, and no trace left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::fresh_trace;
using testing::run_pipelens;

std::string profiler_fixture(const std::string& name) {
    return std::string(PIPELENS_SOURCE_DIR) + "/tests/data/pytorch_profiler/" + name;
}

std::string both_ranks() {
    return profiler_fixture("runtime_1f1b_rank0.json") + " " +
           profiler_fixture("runtime_1f1b_rank1.json.gz");
}

TEST(ImportCli, ProfilerTracesBecomeARunWithItsSimulatedTwin) {
    const auto trace = fresh_trace("import_cli");
    const auto csv = testing::process_temp_path("import.csv");
    const auto result = run_pipelens("import " + both_ranks() + " --out " + trace.string() +
                                     " --simulate --schedule-csv " + csv.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("as run 1 in"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("run 1 (imported): 1F1B pp=2 v=1 m=2"), std::string::npos);
    EXPECT_NE(result.out.find("step time 97.000 us"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("run 2 (simulated"), std::string::npos) << result.out;
    EXPECT_EQ(testing::read_file(csv), "0F0,0F1,0B0,0B1\r\n1F0,1B0,1F1,1B1\r\n");

    const auto summary = run_pipelens("summary " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_NE(summary.out.find("2 runs"), std::string::npos) << summary.out;
    // The recovered schedule is a schedule like any other.
    const auto check = run_pipelens("check " + csv.string());
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(ImportCli, BadInputIsOneLineExitTwoAndNoTrace) {
    const auto trace = fresh_trace("import_cli_bad");
    const std::string plain = profiler_fixture("no_pp_ranges.json");
    auto result = run_pipelens("import " + plain + " --out " + trace.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find(plain + ": no pipeline action ranges"), std::string::npos)
        << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_FALSE(std::filesystem::exists(trace));

    result = run_pipelens("import " + both_ranks() + " --format nonsense --out " + trace.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--format nonsense"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(trace));
}

std::string data(const std::string& path) {
    return std::string(PIPELENS_SOURCE_DIR) + "/tests/data/" + path;
}

TEST(ImportCli, FlightRecorderHangExitsOneWithTheWaitCycle) {
    const auto trace = fresh_trace("import_cli_fr");
    const std::string dumps = data("flight_recorder/recv_recv_cycle/pickle/");
    const auto result = run_pipelens("import " + dumps + "nccl_trace_rank_0 " + dumps +
                                     "nccl_trace_rank_1 --out " + trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_NE(result.out.find("wait cycle rank 0 -> rank 1 -> rank 0"), std::string::npos)
        << result.out;
    EXPECT_NE(result.err.find("the dumps show a hang"), std::string::npos) << result.err;
    const auto summary = run_pipelens("summary " + trace.string() + " --critical-path");
    EXPECT_NE(summary.out.find("failed"), std::string::npos) << summary.out;
    // The path's ops are named as the dumps name them, not as pipeline actions.
    EXPECT_NE(summary.out.find("  nccl:recv 0<-1 [pg 0, p2p #1]"), std::string::npos)
        << summary.out;
    EXPECT_EQ(summary.out.find("RECV_F"), std::string::npos) << summary.out;

    const auto clean = fresh_trace("import_cli_fr_clean");
    const std::string ok = data("flight_recorder/p2p_clean/json/");
    const auto fine = run_pipelens("import " + ok + "nccl_trace_rank_0.json " + ok +
                                   "nccl_trace_rank_1.json --out " + clean.string());
    EXPECT_EQ(fine.exit_code, 0) << fine.out << fine.err;
    // Collectives and transfers only: the dumps' span is no step, and nothing computed is no
    // 0% bubble (both once printed as a step's figures).
    const auto clean_summary = run_pipelens("summary " + clean.string());
    EXPECT_EQ(clean_summary.exit_code, 0) << clean_summary.err;
    EXPECT_NE(clean_summary.out.find("\nno step: a flight recorder's dumps hold collectives and "
                                     "transfers, no computation\n"),
              std::string::npos)
        << clean_summary.out;
    EXPECT_EQ(clean_summary.out.find("0.0%"), std::string::npos) << clean_summary.out;
    const auto clean_json =
        nlohmann::json::parse(run_pipelens("summary --json " + clean.string()).out);
    EXPECT_TRUE(clean_json["runs"][0]["step_time_ns"].is_null());
    EXPECT_TRUE(clean_json["runs"][0]["bubble_ratio"].is_null());

    // Rank 0 skipped all_reduce #1 and went on to #2 (a completed op a rank has nothing of,
    // and nothing after, is only its dump ending early): no hang and no type/size/dtype
    // mismatch, but rank 0 is missing from a collective rank 1 posted. That finding once came
    // with exit 0.
    nlohmann::json rank0 = nlohmann::json::parse(std::ifstream(ok + "nccl_trace_rank_0.json"));
    for (nlohmann::json& entry : rank0["entries"])
        if (entry["profiling_name"] == "nccl:all_reduce")
            entry["collective_seq_id"] = 2;
    const auto dropped = testing::temp_file("nccl_trace_rank_0.json", rank0.dump());
    const auto missing = fresh_trace("import_cli_fr_missing");
    const auto found = run_pipelens("import " + dropped.string() + " " + ok +
                                    "nccl_trace_rank_1.json --out " + missing.string());
    EXPECT_EQ(found.exit_code, 1) << found.out << found.err;
    EXPECT_NE(found.out.find("missing_rank: process group '0' (default_pg) collective #1 "
                             "(nccl:all_reduce): rank(s) 0 never posted it; rank(s) 1 did"),
              std::string::npos)
        << found.out;
    EXPECT_EQ(found.err,
              "pipelens import: the dumps show 1 finding (ranks that disagree on what "
              "was posted)\n");
    std::filesystem::remove(dropped);
}

// PyTorch's clean Gloo dumps (tests/data/pytorch/flight_recorder/gloo_clean_json/), edited by
// `edit` for each rank, written where temp_file puts them.
std::vector<std::string> gloo_dumps(const std::string& name,
                                    const std::function<void(nlohmann::json&, int)>& edit) {
    std::vector<std::string> files;
    for (const int rank : {0, 1}) {
        const std::string file = "rank_" + std::to_string(rank) + ".json";
        nlohmann::json dump = nlohmann::json::parse(
            std::ifstream(data("pytorch/flight_recorder/gloo_clean_json/" + file)));
        edit(dump, rank);
        files.push_back(testing::temp_file(name + "_" + file, dump.dump()).string());
    }
    return files;
}

// Dumps of ranks whose flight recorder was off hold no entries: no verdict can come of them,
// where they once read "no hang and no mismatch" with exit 0. Refused as nothing to import.
TEST(ImportCli, FlightRecorderDumpsThatRecordedNothingAreRefused) {
    const auto trace = fresh_trace("import_cli_fr_off");
    const std::vector<std::string> off = gloo_dumps("recorder_off", [](nlohmann::json& dump, int) {
        dump["entries"] = nlohmann::json::array();
        dump["pg_config"] = nlohmann::json::object();
        dump["pg_status"] = nlohmann::json::object();
    });
    const auto result =
        run_pipelens("import " + off[0] + " " + off[1] + " --out " + trace.string());
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err,
              "pipelens import: " + off[0] + ", " + off[1] +
                  ": none of the flight-recorder dumps holds an op (no entries), so they can show "
                  "neither a hang nor its absence: the flight recorder was off "
                  "(TORCH_FR_BUFFER_SIZE unset or 0, PyTorch's default): set TORCH_FR_BUFFER_SIZE "
                  "(TORCH_NCCL_TRACE_BUFFER_SIZE in older PyTorch) to the number of ops to keep, "
                  "such as 2000, in every rank's environment, and dump again (read as "
                  "flight-recorder)\n");
    EXPECT_FALSE(std::filesystem::exists(trace));
}

// A Gloo all_reduce rank 0 retired and rank 1 never posted: Gloo retires an op that timed out
// as well as one that ran, so it is a finding (exit 1), not rank 1's dump ending early (exit 0).
TEST(ImportCli, AGlooOpOneRankNeverPostedIsAFinding) {
    const auto trace = fresh_trace("import_cli_fr_gloo");
    const std::vector<std::string> dumps =
        gloo_dumps("gloo_one_sided", [](nlohmann::json& dump, int rank) {
            if (rank != 0)
                return;
            nlohmann::json fourth = dump["entries"].back();
            fourth["record_id"] = 3;
            fourth["collective_seq_id"] = 4;
            fourth["op_id"] = 6;
            dump["entries"].push_back(fourth);
        });
    const auto result =
        run_pipelens("import " + dumps[0] + " " + dumps[1] + " --out " + trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_NE(result.out.find("\nfindings:\n  missing_rank: process group '0' (default_pg) "
                              "collective #4 (gloo:all_reduce): rank(s) 1 never posted it; "
                              "rank(s) 0 did: Gloo retires an op whether it ran or failed (timed "
                              "out waiting), so the ranks that retired it do not show that "
                              "rank(s) 1 took part: a possible hang, unless the dump of rank(s) 1 "
                              "was taken before they posted it"),
              std::string::npos)
        << result.out;
    EXPECT_EQ(result.out.find("no hang and no mismatch"), std::string::npos) << result.out;
    EXPECT_EQ(result.err,
              "pipelens import: the dumps show 1 finding (ranks that disagree on what was "
              "posted)\n");
}

// A pickle of well-formed small values, one in almost every byte, is refused once what it holds
// passes half the memory there is (exit 3), as a JSON document is, not read until memory ends.
TEST(ImportCli, APickleWhoseValuesOutgrowTheMemoryIsTooLarge) {
    // PROTO 2, EMPTY_DICT, MARK, BINUNICODE "entries" (4-byte length 7), EMPTY_LIST.
    std::string pickle = std::string("\x80\x02}(X\x07\x00\x00\x00", 9) + "entries]";
    for (int batch = 0; batch < 3000; ++batch)
        pickle += "(" + std::string(1000, ']') + "e";
    pickle += "u.";
    const auto file = testing::temp_file("many_values_rank_0", pickle);
    const auto trace = fresh_trace("import_cli_many_values");
    const auto result =
        testing::run_command("sh -c \"ulimit -v 600000; exec " + std::string(PIPELENS_BINARY) +
                             " import " + file.string() + " --out " + trace.string() + "\"");
    EXPECT_EQ(result.exit_code, 3) << result.err;
    EXPECT_NE(result.err.find(file.string() + ": byte "), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("values so far need about"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(trace));
    std::filesystem::remove(file);
}

// A file larger than a text input may be is refused by its size before a byte is read, whatever
// format it is forced to (a sparse 2 GiB file was read to the 1 GiB cap first: 1 GB of memory).
TEST(ImportCli, AnInputLargerThanATextInputMayBeIsRefusedUnread) {
    const auto file = testing::process_temp_path("import_sparse_rank_0.json");
    std::filesystem::remove(file);
    { std::ofstream create(file); }
    std::filesystem::resize_file(file, std::uintmax_t{2} << 30);
    const auto trace = fresh_trace("import_cli_sparse");
    const auto result = testing::run_command(
        "sh -c \"ulimit -v 600000; exec " + std::string(PIPELENS_BINARY) +
        " import --format flight-recorder " + file.string() + " --out " + trace.string() + "\"");
    EXPECT_EQ(result.exit_code, 3) << result.err;
    EXPECT_NE(result.err.find(file.string() + ": is 2147483648 bytes, more than a text input may "
                                              "be (1073741824)"),
              std::string::npos)
        << result.err;
    EXPECT_FALSE(std::filesystem::exists(trace));
    std::filesystem::remove(file);
}

// A dump of a rank no trace can hold (a rank key past the limit, or a name ending in a timestamp)
// is refused naming the file, and the trace it was imported into keeps its runs readable: such a
// run once made every later read of the whole trace fail as corrupt.
TEST(ImportCli, ADumpOfARankNoTraceHoldsIsRefusedAndTheTraceStaysReadable) {
    const auto trace = fresh_trace("import_cli_fr_rank");
    const std::string ok = data("flight_recorder/p2p_clean/json/");
    ASSERT_EQ(run_pipelens("import " + ok + "nccl_trace_rank_0.json " + ok +
                           "nccl_trace_rank_1.json --out " + trace.string())
                  .exit_code,
              0);
    nlohmann::json dump = nlohmann::json::parse(std::ifstream(ok + "nccl_trace_rank_0.json"));
    dump["rank"] = 2000000000;
    const auto keyed = testing::temp_file("huge_rank.json", dump.dump());
    auto result = run_pipelens("import " + keyed.string() + " --out " + trace.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err.rfind("pipelens import: " + keyed.string() +
                                   ": `rank` is 2000000000, which is not a rank of a job pipelens "
                                   "can hold (at most 1048576 ranks)",
                               0),
              0u)
        << result.err;
    dump.erase("rank");
    const auto named = testing::temp_file("fr_dump_1732051234.json", dump.dump());
    result = run_pipelens("import " + named.string() + " --out " + trace.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find(named.string() +
                              ": the dump has no `rank` key and the number its name ends in is "
                              "not a rank of a job pipelens can hold"),
              std::string::npos)
        << result.err;
    const auto summary = run_pipelens("summary " + trace.string());
    EXPECT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_NE(summary.out.find(": 1 run\n"), std::string::npos) << summary.out;
    std::filesystem::remove(keyed);
    std::filesystem::remove(named);
}

// An action range without "ts" was placed at time 0 (a 97 us step read as 5 ms), one with a
// negative "dur" taken as empty: both are refused naming the file, the byte and the range.
TEST(ImportCli, AnActionRangeWithoutItsTimesIsRefused) {
    const std::string profiles = data("pytorch_profiler/");
    const nlohmann::json original =
        nlohmann::json::parse(std::ifstream(profiles + "skewed_1f1b_rank0.json"));
    const auto refused = [&](const std::function<void(nlohmann::json&)>& damage) {
        nlohmann::json profile = original;
        for (nlohmann::json& event : profile["traceEvents"])
            if (event.value("name", "") == "PP:0F1")
                damage(event);
        const auto file = testing::temp_file("times_rank0.json", profile.dump());
        const auto trace = fresh_trace("import_cli_times");
        const auto result = run_pipelens("import " + file.string() + " " + profiles +
                                         "skewed_1f1b_rank1.json --out " + trace.string());
        EXPECT_EQ(result.exit_code, 2) << result.err;
        EXPECT_FALSE(std::filesystem::exists(trace));
        std::filesystem::remove(file);
        return result.err;
    };
    const std::string why =
        ": a pipeline action's range needs its start and duration (read as "
        "pytorch-profiler)\n";
    EXPECT_NE(refused([](nlohmann::json& event) {
                  event.erase("ts");
              }).find("range \"PP:0F1\" has no \"ts\"" + why),
              std::string::npos);
    EXPECT_NE(refused([](nlohmann::json& event) {
                  event.erase("dur");
              }).find("range \"PP:0F1\" has no \"dur\"" + why),
              std::string::npos);
    EXPECT_NE(refused([](nlohmann::json& event) {
                  event["dur"] = -10;
              }).find("range \"PP:0F1\" has a negative \"dur\"" + why),
              std::string::npos);
    // Times near the int64 limits wrapped: the step read as 10 us, the other actions at -9.2e15 us.
    const std::string far = "\"PP:0F1\" lies more than 146 years from the trace's zero";
    EXPECT_NE(refused([](nlohmann::json& event) { event["ts"] = -9223372036854770.0; }).find(far),
              std::string::npos);
    EXPECT_NE(refused([](nlohmann::json& event) { event["dur"] = 9223372036854770.0; }).find(far),
              std::string::npos);
}

// A single-stage schedule's actions are read from operators (PyTorch 2.11's Schedule1F1B marks
// none): one of those without its duration, or with a negative one, is refused as an action
// range is. It was read as an empty span: a RECV that lost when its data arrived.
TEST(ImportCli, AnOperatorASingleStageActionIsReadFromNeedsItsTimes) {
    const std::string folder = data("pytorch/profiler/1F1B_pp2_v1_m4_cpu/");
    const std::string rank1 = testing::process_temp_path("single_stage_rank1.json").string();
    ASSERT_EQ(std::system(("gzip -dc " + folder + "rank1.pt.trace.json.gz > " + rank1).c_str()), 0);
    const nlohmann::json original = nlohmann::json::parse(std::ifstream(rank1));
    for (const bool erase : {true, false}) {
        nlohmann::json profile = original;
        for (nlohmann::json& event : profile["traceEvents"])
            if (event.value("name", "") == "c10d::send") {
                if (erase)
                    event.erase("dur");
                else
                    event["dur"] = -5;
                break;
            }
        const auto file = testing::temp_file("single_stage_damaged_rank1.json", profile.dump());
        const auto trace = fresh_trace("import_cli_operator_times");
        const auto result = run_pipelens("import " + folder + "rank0.pt.trace.json.gz " +
                                         file.string() + " --out " + trace.string());
        EXPECT_EQ(result.exit_code, 2) << result.err;
        EXPECT_NE(result.err.find(std::string("range \"c10d::send\" ") +
                                  (erase ? "has no \"dur\"" : "has a negative \"dur\"") +
                                  ": an operator a single-stage schedule's action is read from "
                                  "needs its start and duration"),
                  std::string::npos)
            << result.err;
        EXPECT_FALSE(std::filesystem::exists(trace));
        std::filesystem::remove(file);
    }
    std::filesystem::remove(rank1);
}

// Gzip inputs: one cut short is refused by name (a cut CSV was recorded as a broken schedule),
// and a few kilobytes that decompress into millions of JSON values are refused as too large for
// the memory there is, instead of aborting the process when memory ran out.
TEST(ImportCli, TruncatedAndExplodingGzipInputsAreRefused) {
    const auto directory = testing::temp_file("gzip_inputs", "").string() + "_dir";
    std::filesystem::create_directories(directory);
    const std::string csv = directory + "/cut.csv.gz";
    const std::string make_csv = "gzip -c " + data("pytorch/schedules/1F1B_pp4_v1_m8_compute.csv") +
                                 " | head -c 120 > " + csv;
    ASSERT_EQ(std::system(make_csv.c_str()), 0);
    const auto trace = fresh_trace("import_cli_gzip");
    ASSERT_EQ(run_pipelens("simulate --out " + trace.string()).exit_code, 0);
    const auto cut =
        run_pipelens("import " + csv + " --format pipelining-csv --out " + trace.string());
    EXPECT_EQ(cut.exit_code, 2) << cut.err;
    EXPECT_NE(cut.err.find(csv + ": the gzip stream ends early"), std::string::npos) << cut.err;
    // Without --format the few bytes that decompress cannot tell the format: the cut is what is
    // said (it was "not a format pipelens can import").
    const std::string early = directory + "/cut_rank_0.gz";
    ASSERT_EQ(std::system(("head -c 30 " + csv + " > " + early).c_str()), 0);
    const auto guessed = run_pipelens("import " + early + " --out " + trace.string());
    EXPECT_EQ(guessed.exit_code, 2) << guessed.err;
    EXPECT_NE(guessed.err.find(early + ": the gzip stream ends early, after "), std::string::npos)
        << guessed.err;

    const std::string bomb = directory + "/bomb_rank_0.json.gz";
    const std::string make_bomb =
        "{ printf '{\"version\":\"2.10\",\"pg_config\":{},\"x\":['; yes '[],' | head -n "
        "20000000; printf '[]],\"entries\":[]}'; } | gzip -1 > " +
        bomb;
    ASSERT_EQ(std::system(make_bomb.c_str()), 0);
    const auto exploded = testing::run_command(
        "bash -c 'ulimit -v 1000000; exec " + std::string(PIPELENS_BINARY) + " import " + bomb +
        " --format flight-recorder --out " + trace.string() + "'");
    EXPECT_EQ(exploded.exit_code, 3) << exploded.err;
    EXPECT_NE(exploded.err.find(bomb + ": its JSON holds 20000010 values"), std::string::npos)
        << exploded.err;
    EXPECT_EQ(testing::query_trace(trace, "SELECT count(*) FROM runs"), "1");  // kept as it was
    std::filesystem::remove_all(directory);
}

// The profiler trace at `path` without its events named `name`, as JSON text.
std::string without_event(const std::string& path, const std::string& name) {
    nlohmann::json profile = nlohmann::json::parse(std::ifstream(path));
    auto& events = profile["traceEvents"];
    events.erase(std::remove_if(
                     events.begin(), events.end(),
                     [&](const nlohmann::json& event) { return event.value("name", "") == name; }),
                 events.end());
    return profile.dump();
}

// A forward the trace lost leaves a schedule no pipeline runs: once exit 0, with a CSV that
// `check` refused. The run is recorded as read; the verdict is exit 1 with the problems.
TEST(ImportCli, ASchedulePipelinesCannotRunIsRecordedAndExitsOne) {
    const std::string profiles = data("pytorch_profiler/");
    const auto file = testing::temp_file(
        "lost_rank0.json", without_event(profiles + "skewed_1f1b_rank0.json", "PP:0F0"));
    const auto trace = fresh_trace("import_cli_lost");
    const auto result = run_pipelens("import " + file.string() + " " + profiles +
                                     "skewed_1f1b_rank1.json --out " + trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(result.err.rfind("pipelens import: the schedule the files show is not one a "
                               "pipeline can run (run 1 is recorded as read): schedule check "
                               "failed",
                               0),
              0u)
        << result.err;
    EXPECT_NE(result.err.find("before its forward"), std::string::npos) << result.err;
    EXPECT_EQ(run_pipelens("summary " + trace.string() + " --run 1").exit_code, 0);
    std::filesystem::remove(file);

    // A lost SEND is checked as `check` checks it, from a profiler trace or a CSV with its
    // communication: both once came with exit 0 ("consistent with every send/recv").
    const auto unsent = testing::temp_file(
        "unsent_rank0.json", without_event(profiles + "skewed_1f1b_rank0.json", "PP:0SEND_F1"));
    std::ifstream csv_file(data("pipelining/1f1b_pp2_m4_comms.csv"));
    std::string csv((std::istreambuf_iterator<char>(csv_file)), {});
    csv.replace(csv.find("0SEND_F1,"), 9, "");
    const auto unsent_csv = testing::temp_file("unsent.csv", csv);
    for (const std::string& files :
         {unsent.string() + " " + profiles + "skewed_1f1b_rank1.json", unsent_csv.string()}) {
        const auto lost = fresh_trace("import_cli_unsent");
        const auto checked = run_pipelens("import " + files + " --out " + lost.string());
        EXPECT_EQ(checked.exit_code, 1) << files << checked.err;
        EXPECT_NE(checked.err.find("  - rank 0 runs 0F1 but never sends it: 0SEND_F1 is "
                                   "missing\n"),
                  std::string::npos)
            << checked.err;
    }
    std::filesystem::remove(unsent);
    std::filesystem::remove(unsent_csv);
}

TEST(ImportCli, MegatronTimersAndPipeliningDumps) {
    const auto trace = fresh_trace("import_cli_megatron");
    const std::string directory = data("megatron/1f1b_pp2_m3/");
    const auto megatron = run_pipelens(
        "import " + directory + "event_times_PP2_VPP1_TPxCPxDP_rank_0_pp_rank_0_rank_0.json " +
        directory + "event_times_PP2_VPP1_TPxCPxDP_rank_0_pp_rank_1_rank_1.json --out " +
        trace.string());
    ASSERT_EQ(megatron.exit_code, 0) << megatron.err;
    EXPECT_NE(megatron.out.find("(megatron-timers)"), std::string::npos) << megatron.out;
    // Gzipped with its name kept, as every importer reads .gz (the name was refused).
    const std::string gzipped = testing::process_temp_path("megatron_gz").string();
    std::filesystem::create_directories(gzipped);
    const std::string rank1 = "event_times_PP2_VPP1_TPxCPxDP_rank_0_pp_rank_1_rank_1.json";
    const std::string make = "gzip -c " + directory + rank1 + " > " + gzipped + "/" + rank1 + ".gz";
    ASSERT_EQ(std::system(make.c_str()), 0);
    const auto from_gzip =
        run_pipelens("import " + directory +
                     "event_times_PP2_VPP1_TPxCPxDP_rank_0_pp_rank_0_rank_0.json " + gzipped + "/" +
                     rank1 + ".gz --out " + testing::process_temp_path("megatron_gz.db").string());
    EXPECT_EQ(from_gzip.exit_code, 0) << from_gzip.err;
    std::filesystem::remove_all(gzipped);
    const auto dump = run_pipelens("import " + data("pipelining/1f1b_pp2_m4_comms.json") +
                                   " --out " + trace.string());
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    EXPECT_NE(dump.out.find("(pipelining-chrometrace) as run 2"), std::string::npos) << dump.out;
    EXPECT_NE(dump.out.find("step time 20.000 us"), std::string::npos) << dump.out;
}

// PyTorch 2.11's Schedule1F1B prints its last rank's forwards numbered from 1 (rank 1 at pp=2
// m=4: 1F1, 1B0, ..., 1F4, 1B3) while that rank runs 1F0 first: `import`, `check` and
// `simulate --schedule-file` read the table as the runtime's order, 1F1B m=4, and say so.
TEST(ImportCli, PyTorchsPrintedOneFOneBTableIsReadAsTheOrderItsRuntimeRuns) {
    const std::string table = data("pytorch/schedules/1F1B_pp2_v1_m4_compute.csv");
    const auto trace = fresh_trace("import_cli_printed_1f1b");
    const auto imported = run_pipelens("import " + table + " --out " + trace.string());
    ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    EXPECT_NE(imported.out.find("run 1 (imported): 1F1B pp=2 v=1 m=4\n"), std::string::npos)
        << imported.out;
    const std::string note =
        "the last rank's forwards are numbered 1 to 4 and its backwards 0 to 3, as PyTorch's "
        "Schedule1F1B prints that rank (its pipeline_order)";
    EXPECT_NE(imported.out.find(note), std::string::npos) << imported.out;
    const auto checked = run_pipelens("check " + table);
    EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
    EXPECT_NE(checked.err.find(note), std::string::npos) << checked.err;
    const auto simulated = run_pipelens("simulate --schedule-file " + table + " --f 1 --i 1 --w 1");
    EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
    EXPECT_NE(simulated.out.find("bubble ratio 20.0%"), std::string::npos) << simulated.out;
}

TEST(ImportCli, AScheduleNoKindGeneratesIsSimulatedFromItsCsv) {
    // 1F1B's shape, but rank 1 runs B1 before B0: no generated kind has this order.
    const auto dump = testing::process_temp_path("odd.csv");
    std::ofstream(dump) << "0F0,0F1,,,,0B0,0B1\r\n,1F0,1F1,1B1,1B0\r\n";
    const auto trace = fresh_trace("import_cli_odd");
    const auto result =
        run_pipelens("import " + dump.string() + " --out " + trace.string() + " --simulate");
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::string csv = trace.string() + ".run1.schedule.csv";
    EXPECT_NE(result.out.find("matches no generated kind: simulated from " + csv),
              std::string::npos)
        << result.out;
    EXPECT_EQ(testing::read_file(csv), "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B1,1B0\r\n");
    // Unit costs fitted to unit steps: the simulation reproduces the dump's 7 steps.
    const std::size_t simulated = result.out.find("run 2 (simulated");
    ASSERT_NE(simulated, std::string::npos) << result.out;
    EXPECT_NE(result.out.find("step time 7.000 us", simulated), std::string::npos) << result.out;
    std::filesystem::remove(csv);
}

}  // namespace
}  // namespace pipelens
