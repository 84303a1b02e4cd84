// Flight-recorder dumps of PyTorch's Gloo backend: the dumps PyTorch 2.11 wrote
// (tests/data/pytorch/flight_recorder/, scripts/device/pytorch_fixtures.py part c) read and
// analysed with exact expected values, and the two rules they need in hand-written form: the
// one unnamed group of pg_config stands for the one group the entries name that it does not
// list (anything less clear stays an error), and a retired Gloo entry counts as completed on its
// rank, though not as proof that its group's other ranks posted it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/import/flight_recorder_analysis.hpp"
#include "engine/import/flight_recorder_dump.hpp"
#include "engine/import/flight_recorder_import.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/schedule/action.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/thrown_message.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::import {
namespace {

const std::string kCases =
    std::string(PIPELENS_SOURCE_DIR) + "/tests/data/pytorch/flight_recorder/";

std::vector<FlightRecorderDump> read_case(const std::string& folder) {
    const std::string suffix = folder.ends_with("_json") ? ".json" : "";
    return read_flight_recorder_dumps(
        {kCases + folder + "/rank_1" + suffix, kCases + folder + "/rank_0" + suffix});
}

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::vector<std::string> kGlooCases = {"gloo_clean", "gloo_clean_json", "gloo_hang",
                                             "gloo_hang_json"};

std::string gloo_note(int rank) {
    return "rank " + std::to_string(rank) +
           ": a Gloo dump: its entries stay 'scheduled' (Gloo records no events), so a retired "
           "one counts as completed on this rank, though Gloo retires an op that failed too; only "
           "collectives are recorded (2 op id(s) have no entry: sends or receives), so a hang in "
           "a send or recv does not show";
}
std::string naming_note(int rank) {
    return "rank " + std::to_string(rank) +
           ": pg_config lists a group without a name (ranks [0, 1]), as Gloo registers a group "
           "before naming it; its entries' group '0' (default_pg) is taken to be that one";
}

// Every Gloo dump: pg_config's one group is unnamed, the entries name group '0'; three
// all_reduces, op ids 3 to 5 (1 and 2 were the unrecorded send and recv), all retired.
TEST(FlightRecorderGlooDumps, TheUnnamedGroupIsTheEntriesGroup) {
    for (const std::string& folder : kGlooCases) {
        SCOPED_TRACE(folder);
        const std::vector<FlightRecorderDump> dumps = read_case(folder);
        ASSERT_EQ(dumps.size(), 2u);
        for (int rank = 0; rank < 2; ++rank) {
            const FlightRecorderDump& dump = dumps[static_cast<std::size_t>(rank)];
            EXPECT_EQ(dump.rank, rank);
            EXPECT_EQ(dump.version, "2.10");
            ASSERT_EQ(dump.pg_config.size(), 1u);
            EXPECT_EQ(dump.pg_config[0].name, "0");
            EXPECT_EQ(dump.pg_config[0].desc, "default_pg");
            EXPECT_EQ(dump.pg_config[0].ranks, (std::vector<int>{0, 1}));
            EXPECT_EQ(dump.notes, (std::vector<std::string>{naming_note(rank)}));
            ASSERT_EQ(dump.entries.size(), 3u);
            for (std::size_t i = 0; i < 3; ++i) {
                const FlightRecorderEntry& entry = dump.entries[i];
                EXPECT_EQ(entry.profiling_name, "gloo:all_reduce");
                EXPECT_EQ(entry.group, 0);
                EXPECT_EQ(entry.pg_name, "0");
                EXPECT_EQ(entry.collective_seq_id, static_cast<std::int64_t>(i) + 1);
                EXPECT_EQ(entry.op_id, static_cast<std::int64_t>(i) + 3);
                EXPECT_EQ(entry.state, EntryState::scheduled);
                EXPECT_TRUE(entry.retired);
                EXPECT_EQ(entry.input_sizes, (std::vector<std::vector<std::int64_t>>{{16}}));
            }
            EXPECT_EQ(effective_states(dump), std::vector<EntryState>(3, EntryState::completed));
        }
    }
}

// Clean and hung runs analyse the same: every all_reduce matched and completed on both ranks.
// The hung run's receives (both ranks irecv first, then time out: the script's notes) are Gloo
// p2p ops, which its flight recorder does not record, so its dumps carry no trace of them and
// pipelens says so instead of inventing a hang.
TEST(FlightRecorderGlooDumps, CleanAndHungRunsShowNoHangAndSayWhy) {
    for (const std::string& folder : kGlooCases) {
        SCOPED_TRACE(folder);
        const FlightRecorderReport report = analyse_flight_recorder(read_case(folder));
        EXPECT_FALSE(report.hang);
        EXPECT_FALSE(report.mismatch);
        EXPECT_TRUE(report.findings.empty());
        EXPECT_TRUE(report.transfers.empty());
        ASSERT_EQ(report.ranks.size(), 2u);
        for (int rank = 0; rank < 2; ++rank) {
            const RankSummary& summary = report.ranks[static_cast<std::size_t>(rank)];
            EXPECT_EQ(summary.rank, rank);
            EXPECT_EQ(summary.ops, 3);
            EXPECT_EQ(summary.completed, 3);
            EXPECT_EQ(summary.last_completed_step, 2);
            EXPECT_EQ(summary.last_completed, "gloo:all_reduce [pg 0, #3]");
            EXPECT_EQ(summary.first_pending_step, -1);
        }
        EXPECT_EQ(report.notes, (std::vector<std::string>{naming_note(0), naming_note(1),
                                                          gloo_note(0), gloo_note(1)}));
    }
    for (const int rank : {0, 1})
        EXPECT_NE(file_text(kCases + "notes/gloo_hang_note_" + std::to_string(rank) + ".json")
                      .find("Timed out waiting 5000ms for recv operation to complete"),
                  std::string::npos);
    // PyTorch's fr_trace stopped on these dumps, looking group '0' up in pg_config.
    for (const std::string name : {"gloo_clean", "gloo_hang"})
        EXPECT_NE(file_text(kCases + "fr_trace_" + name + ".txt").find("KeyError: ('0', 0)"),
                  std::string::npos);
}

// The clean Gloo run as a pipelens run: finished, one REDUCE_GRAD per all_reduce (stage = pg
// id 0, microbatch = seq id), each ending where it began since Gloo records no completion time.
TEST(FlightRecorderGlooDumps, ACleanRunImportsAsAFinishedRunOfAllReduces) {
    const auto dumps = read_case("gloo_clean");
    const auto path = testing::fresh_trace("flight_recorder_gloo_clean");
    std::int64_t run_id = 0;
    {
        traces::TraceWriter writer(path);
        run_id = record_flight_recorder(writer, dumps, analyse_flight_recorder(dumps));
    }
    traces::TraceReader reader(path);
    EXPECT_EQ(reader.run(run_id).status, traces::RunStatus::finished);
    EXPECT_EQ(reader.run(run_id).pp, 2);
    EXPECT_TRUE(reader.errors(run_id).empty());
    EXPECT_TRUE(reader.pairs(run_id).empty());
    const auto actions = reader.actions(run_id);
    ASSERT_EQ(actions.size(), 6u);
    // time_created_ns less the earliest (rank 1's first all_reduce), as PyTorch wrote them.
    const std::vector<std::int64_t> starts = {100'707, 543'192, 970'631, 0, 541'090, 957'029};
    for (std::size_t i = 0; i < actions.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(actions[i].rank, static_cast<int>(i / 3));
        EXPECT_EQ(actions[i].step, static_cast<int>(i % 3));
        EXPECT_EQ(actions[i].kind, static_cast<std::uint8_t>(ActionKind::reduce_grad));
        EXPECT_EQ(actions[i].stage, 0);
        EXPECT_EQ(actions[i].microbatch, static_cast<int>(i % 3) + 1);
        EXPECT_EQ(actions[i].bytes, 16 * 4);
        EXPECT_EQ(actions[i].start_ns, starts[i]);
        EXPECT_EQ(actions[i].end_ns, starts[i]);
    }
}

// A one-rank dump whose entries are Gloo all_reduces, one per character of `group_names`
// naming its group, with op ids 1, 2, ... and all retired.
std::string dump_text(const std::string& pg_config, const std::string& group_names) {
    std::string entries;
    for (std::size_t i = 0; i < group_names.size(); ++i)
        entries += fmt::format(
            R"({}{{"record_id": {}, "process_group": ["{}", "pg"], "collective_seq_id": {}, )"
            R"("op_id": {}, "profiling_name": "gloo:all_reduce", "time_created_ns": 1, )"
            R"("state": "scheduled", "retired": true}})",
            i == 0 ? "" : ", ", i, group_names[i], i + 1, i + 1);
    return fmt::format(R"({{"version": "2.10", "rank": 0, "pg_config": {}, "entries": [{}]}})",
                       pg_config, entries);
}

std::string read_error(const std::string& text) {
    return testing::thrown_message<ImportError>([&] { parse_flight_recorder_dump(text, "x.json"); },
                                                "no error");
}

TEST(FlightRecorderGlooDumps, OnlyAnUnambiguousUnnamedGroupIsNamed) {
    const std::string unnamed = R"({"": {"name": "", "desc": "", "ranks": "[0, 2]"}})";
    // One unnamed group, one unlisted name: named after it, its description taken too.
    const FlightRecorderDump dump = parse_flight_recorder_dump(dump_text(unnamed, "77"), "x.json");
    ASSERT_EQ(dump.pg_config.size(), 1u);
    EXPECT_EQ(dump.pg_config[0].name, "7");
    EXPECT_EQ(dump.pg_config[0].desc, "pg");
    EXPECT_EQ(dump.entries[1].group, 0);
    EXPECT_EQ(dump.notes, (std::vector<std::string>{
                              "rank 0: pg_config lists a group without a name (ranks [0, 2]), as "
                              "Gloo registers a group before naming it; its entries' group '7' "
                              "(pg) is taken to be that one"}));
    // Beside a listed group, the unnamed one still stands for the one unlisted name.
    const std::string named_and_unnamed = R"({"3": {"name": "3", "desc": "PP", "ranks": "[0]"}, )"
                                          R"("": {"name": "", "desc": "DP", "ranks": "[0, 1]"}})";
    const FlightRecorderDump both =
        parse_flight_recorder_dump(dump_text(named_and_unnamed, "35"), "x.json");
    const auto group_of = [&](std::size_t entry) {
        const ProcessGroupConfig& group =
            both.pg_config.at(static_cast<std::size_t>(both.entries[entry].group));
        return group.name + " " + group.desc;
    };
    EXPECT_EQ(group_of(0), "3 PP");
    EXPECT_EQ(group_of(1), "5 DP");
    // Two unlisted names for one unnamed group: which is which cannot be told.
    EXPECT_EQ(read_error(dump_text(unnamed, "45")),
              "x.json: entry 0: `process_group` is '4', which the dump's pg_config does not "
              "list (its one unnamed group cannot be told apart: the entries name '4', '5')");
    // No unnamed group: an unlisted name is an inconsistent dump, as before.
    EXPECT_EQ(
        read_error(dump_text(R"({"0": {"name": "0", "desc": "pg", "ranks": "[0, 1]"}})", "01")),
        "x.json: entry 1: `process_group` is '1', which the dump's pg_config does not list");
    // Nothing unlisted: nothing is renamed and nothing is noted.
    const FlightRecorderDump listed = parse_flight_recorder_dump(
        dump_text(R"({"0": {"name": "0", "desc": "pg", "ranks": "[0, 1]"}})", "0"), "x.json");
    EXPECT_TRUE(listed.notes.empty());
}

// PyTorch's clean Gloo dumps with a fourth all_reduce on rank 0 only: retired, as Gloo retires an
// op that timed out waiting for rank 1 as well as one that ran. It is a finding, where it was
// once explained away as rank 1's dump ending before it (a note, no finding, exit 0).
TEST(FlightRecorderGlooDumps, ARetiredGlooOpARankNeverPostedIsAFinding) {
    std::vector<std::string> files;
    for (const int rank : {0, 1}) {
        nlohmann::json dump = nlohmann::json::parse(
            file_text(kCases + "gloo_clean_json/rank_" + std::to_string(rank) + ".json"));
        nlohmann::json& entries = dump.at("entries");
        if (rank == 0) {
            nlohmann::json fourth = entries.back();
            fourth["record_id"] = 3;
            fourth["collective_seq_id"] = 4;
            fourth["op_id"] = 6;
            fourth["time_created_ns"] =
                fourth["time_created_ns"].get<std::int64_t>() + 1'000'000'000;
            entries.push_back(fourth);
        }
        files.push_back(
            testing::process_temp_path("gloo_one_sided_rank_" + std::to_string(rank) + ".json")
                .string());
        std::ofstream(files.back()) << dump.dump();
    }
    const FlightRecorderReport report = analyse_flight_recorder(read_flight_recorder_dumps(files));
    ASSERT_EQ(report.findings.size(), 1u) << report.text();
    const FlightRecorderFinding& finding = report.findings[0];
    EXPECT_EQ(finding.kind, "missing_rank");
    EXPECT_EQ(finding.ranks, (std::vector<int>{1}));
    EXPECT_EQ(finding.seq_id, 4);
    EXPECT_EQ(finding.message,
              "process group '0' (default_pg) collective #4 (gloo:all_reduce): rank(s) 1 never "
              "posted it; rank(s) 0 did: Gloo retires an op whether it ran or failed (timed out "
              "waiting), so the ranks that retired it do not show that rank(s) 1 took part: a "
              "possible hang, unless the dump of rank(s) 1 was taken before they posted it");
    EXPECT_FALSE(report.hang);
    for (const std::string& note : report.notes)
        EXPECT_EQ(note.find("dump ends before"), std::string::npos) << note;
    EXPECT_EQ(report.text().find("no hang and no mismatch"), std::string::npos) << report.text();
    for (const std::string& file : files)
        std::filesystem::remove(file);
}

TEST(FlightRecorderGlooDumps, OnlyARetiredGlooEntryCountsAsCompleted) {
    FlightRecorderDump dump = parse_flight_recorder_dump(
        dump_text(R"({"0": {"name": "0", "desc": "pg", "ranks": "[0, 1]"}})", "000"), "x.json");
    dump.entries[1].retired = false;      // still running: no sign of completion
    dump.entries[2].op.backend = "nccl";  // NCCL's state comes from its events, not `retired`
    EXPECT_EQ(effective_states(dump),
              (std::vector<EntryState>{EntryState::completed, EntryState::scheduled,
                                       EntryState::scheduled}));
}

}  // namespace
}  // namespace pipelens::import
