// PyTorch's schedule CSV: exact output, round trips for every family (compute-only and with
// communication), records split as csv.reader splits them (CRLF, LF or CR; quotes only at a
// cell's start), idle cells as _dump_csv writes them, rows without actions and numbering gaps
// refused naming file:line, and PyTorch's older action notation (its own test artifacts).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens {
namespace {

TEST(ScheduleCsv, WritesOneRowPerRankWithCrlf) {
    const Schedule schedule = generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2});
    EXPECT_EQ(format_schedule_csv(schedule), "0F0,0F1,0B0,0B1\r\n1F0,1B0,1F1,1B1\r\n");
}

TEST(ScheduleCsv, EveryFamilyRoundTripsWithAndWithoutCommunication) {
    for (ScheduleKind kind : all_schedule_kinds()) {
        const int v = is_multi_stage(kind) ? 2 : 1;
        const Schedule compute = generate_schedule({kind, 3, v, 6});
        const Schedule lowered = lower(compute);
        for (const Schedule* original : {&compute, &lowered}) {
            SCOPED_TRACE(std::string(schedule_kind_name(kind)) +
                         (original->has_communication ? " with comms" : " compute only"));
            const Schedule loaded = parse_schedule_csv(format_schedule_csv(*original), "x.csv");
            EXPECT_TRUE(same_actions(*original, loaded));
            EXPECT_EQ(loaded.stage_to_rank, original->stage_to_rank);
            EXPECT_EQ(loaded.rank_count, 3);
            EXPECT_EQ(loaded.stage_count, 3 * v);
            EXPECT_EQ(loaded.microbatch_count, 6);
            EXPECT_EQ(loaded.has_communication, original->has_communication);
            EXPECT_EQ(loaded.pair_count, original->pair_count);
            for (const auto& actions : loaded.ranks)
                for (const Action& action : actions)
                    if (is_communication(action.kind)) {
                        EXPECT_NE(action.link, kNoPair);
                    }
        }
    }
}

TEST(ScheduleCsv, ReadsIdleCellsAndQuotes) {
    const Schedule schedule =
        parse_schedule_csv("0F0,,0F1,0B0,,0B1\r\n,1F0,\"1B0\",1F1,1B1\n", "upstream.csv");
    EXPECT_EQ(schedule.rank_count, 2);
    EXPECT_EQ(schedule.stage_count, 2);
    EXPECT_EQ(schedule.microbatch_count, 2);
    EXPECT_EQ(schedule.stage_to_rank, (std::vector<int>{0, 1}));
    ASSERT_EQ(schedule.ranks[0].size(), 4u);
    ASSERT_EQ(schedule.ranks[1].size(), 4u);
    EXPECT_EQ(schedule.text(schedule.ranks[1][1]), "1B0");
    EXPECT_EQ(schedule.name, "upstream");
}

// csv.reader ends a line at \r\n, \n or a lone \r, and a final line end adds no record.
// A spreadsheet's UTF-8 byte order mark was read as part of the first action ("invalid
// action '\xEF\xBB\xBF0F0'").
TEST(ScheduleCsv, AByteOrderMarkIsNotPartOfTheFirstAction) {
    const Schedule marked = parse_schedule_csv(
        "\xEF\xBB\xBF"
        "0F0,0B0\r\n1F0,1B0\r\n",
        "bom.csv");
    EXPECT_EQ(format_schedule_csv(marked), "0F0,0B0\r\n1F0,1B0\r\n");
    // Read, but said: PyTorch's _load_csv keeps the mark on the first cell and refuses it.
    const ScheduleCsvReading reading = parse_schedule_csv_as(
        "\xEF\xBB\xBF"
        "0F0,0B0\r\n1F0,1B0\r\n",
        "bom.csv", std::nullopt);
    EXPECT_EQ(reading.note("bom.csv"),
              "bom.csv opens with a UTF-8 byte order mark, read past here; PyTorch's _load_csv "
              "keeps it on the first cell and refuses the file (Invalid action string): save it "
              "without one");
    EXPECT_EQ(parse_schedule_csv_as("0F0,0B0\r\n1F0,1B0\r\n", "plain.csv", std::nullopt)
                  .note("plain.csv"),
              "");
}

TEST(ScheduleCsv, EveryLineEndPythonAcceptsGivesTheSameRanks) {
    const std::string rows[] = {"0F0,0F1,0B0,0B1", "1F0,1B0,1F1,1B1"};
    for (const std::string end : {"\r\n", "\n", "\r"})
        for (const bool final_end : {true, false}) {
            SCOPED_TRACE(fmt::format("line end of {} bytes, final {}", end.size(), final_end));
            const Schedule schedule =
                parse_schedule_csv(rows[0] + end + rows[1] + (final_end ? end : ""), "ends.csv");
            EXPECT_EQ(schedule.rank_count, 2);
            EXPECT_EQ(schedule.stage_count, 2);
            EXPECT_EQ(schedule.ranks[1].size(), 4u);
        }
}

std::string file_error(const std::string& text) {
    return testing::thrown_message<ScheduleFileError>(
        [&] { parse_schedule_csv(text, "sched.csv"); }, "accepted");
}

void expect_file_error(const std::string& text, const std::string& fragment) {
    try {
        parse_schedule_csv(text, "bad.csv");
        FAIL() << "accepted: " << text;
    } catch (const ScheduleFileError& error) {
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
}

TEST(ScheduleCsv, BrokenFilesNameFileLineRankCellAndToken) {
    expect_file_error("0F0,0B0\n1F0,1Q0,1B0\n",
                      "bad.csv:2: rank 1, cell 2: invalid action '1Q0': unknown action kind");
    expect_file_error("0F0,F0\n", "bad.csv:1: rank 0, cell 2: invalid action 'F0'");
    // PyTorch's pattern takes a forward without its microbatch; no rank can run one. Alone in
    // a file it was "the schedule has no microbatches" (and a missing --m to simulate).
    expect_file_error("0F\n",
                      "bad.csv:1: rank 0, cell 1: invalid action '0F': 0F has no "
                      "microbatch index");
    expect_file_error("0F0,\"0B0\n", "bad.csv:1: unterminated quoted cell");
    expect_file_error("", "bad.csv: the schedule file is empty");
    expect_file_error("0F0,99999F99999\n",
                      "bad.csv:1: rank 0, cell 2: '99999F99999' names stage 99999, but no action "
                      "names stages 1..99998");
    // A quote inside a cell is a character, as csv.reader keeps it; PyTorch rejects the token.
    expect_file_error("0F0,0\"B\"0\n", "bad.csv:1: rank 0, cell 2: invalid action '0\"B\"0'");
    // A quoted cell may span lines (this one is blank, so idle, as str.strip() leaves nothing);
    // the next record starts on the line after it.
    expect_file_error("0F0,\"\n\",0B0\n1F0,1X0\n",
                      "bad.csv:3: rank 1, cell 2: invalid action '1X0'");
}

// PyTorch's _load_csv makes every csv.reader record a rank, and csv.reader gives a blank line as
// an empty record: a blank line at the end is an extra idle rank, one in the middle shifts every
// later row down a rank. No rank of a valid schedule is idle, so each is refused where it is.
TEST(ScheduleCsv, RowsWithoutActionsAreRefusedNamingTheLine) {
    const std::string rank0 = "0F0,0F1,0B0,0B1";
    const std::string rank1 = "1F0,1B0,1F1,1B1";
    EXPECT_EQ(parse_schedule_csv(rank0 + "\r\n" + rank1 + "\r\n", "one_end.csv").rank_count, 2);
    const std::string trailing =
        "sched.csv:3: blank line after the last rank's row: PyTorch's csv.reader makes every "
        "line a rank, so this is rank 2 with no actions and the file is pp=3, not 2; delete it "
        "(one line end after the last row is fine)";
    EXPECT_EQ(file_error(rank0 + "\r\n" + rank1 + "\r\n\r\n"), trailing);
    EXPECT_EQ(file_error(rank0 + "\n" + rank1 + "\n\n"), trailing);
    EXPECT_EQ(file_error(rank0 + "\n" + rank1 + "\n\n\n\n"),
              "sched.csv:3: blank line after the last rank's row: PyTorch's csv.reader makes "
              "every line a rank, so this is rank 2 with no actions and the file is pp=5, not 2; "
              "delete it (one line end after the last row is fine)");
    EXPECT_EQ(file_error(rank0 + "\n\n" + rank1 + "\n"),
              "sched.csv:2: blank line: PyTorch's csv.reader makes every line a rank, so this is "
              "rank 1 with no actions and the row below it becomes rank 2; delete it");
    EXPECT_EQ(file_error(rank0 + "\r\n \t\r\n" + rank1 + "\r\n0F2\r\n"),
              "sched.csv:2: blank line: PyTorch's csv.reader makes every line a rank, so this is "
              "rank 1 with no actions and the rows below it become ranks 2..3; delete it");
    EXPECT_EQ(file_error(rank0 + "\n,,\n" + rank1 + "\n"),
              "sched.csv:2: rank 1's row has only empty cells: every rank runs at least one "
              "stage, so its row needs at least one action");
    EXPECT_EQ(file_error("\n"), "sched.csv:1: blank line and no actions anywhere");
}

// The shape comes from the highest numbers named, so one mistyped number used to add stages
// that "no rank runs" (5F2 for 1F2 made stages 2..4) with no word of the cell. The cell is named.
TEST(ScheduleCsv, ANumberAboveAGapNamesItsCell) {
    EXPECT_EQ(file_error("0F0,0F1,0B0,0F2,0B1,0B2\n1F0,1B0,1F1,1B1,5F2,1B2\n"),
              "sched.csv:2: rank 1, cell 5: '5F2' names stage 5, but no action names stages "
              "2..4; stages are numbered from 0 without gaps, so is 5 a typo?");
    EXPECT_EQ(file_error("0F0,,0F1,0B0,0F2,0B1,0B2\n1F0,1B0,1F1,1B1,1F9,1B2\n"),
              "sched.csv:2: rank 1, cell 5: '1F9' names microbatch 9, but no action names "
              "microbatches 3..8; microbatches are numbered from 0 without gaps, so is 9 a typo?");
    EXPECT_EQ(file_error("0F0,0B0\n2F0,2B0\n"),
              "sched.csv:2: rank 1, cell 1: '2F0' names stage 2, but no action names stage 1; "
              "stages are numbered from 0 without gaps, so is 2 a typo? (2 actions name stage 2)");
    EXPECT_EQ(file_error("0F0,(0F1;3B0)OVERLAP_F_B\n1F0,1B0\n"),
              "sched.csv:1: rank 0, cell 2: '(0F1;3B0)OVERLAP_F_B' names stage 3, but no action "
              "names stage 2; stages are numbered from 0 without gaps, so is 3 a typo?");
}

// A few bytes naming a huge stage or microbatch once cost gigabytes in the check; such a file
// cannot be valid, and the parser says why before sizing anything by those numbers.
TEST(ScheduleCsv, NumbersBeyondWhatTheFileCanCoverAreRefused) {
    expect_file_error("0F0\n1F133333333\n",
                      "bad.csv:2: rank 1, cell 1: '1F133333333' names microbatch 133333333, but "
                      "no action names microbatches 1..133333332");
    expect_file_error("0F0,0B0\n1F0,1B0\n5000000F0\n",
                      "bad.csv:3: rank 2, cell 1: '5000000F0' names stage 5000000, but no action "
                      "names stages 2..4999999");
    expect_file_error("0228306779B\n",  // found by fuzzing: no microbatch, so no table product
                      "bad.csv:1: rank 0, cell 1: invalid action '0228306779B': 228306779B has "
                      "no microbatch index");
    std::string square;  // stages 0..299 and microbatches 0..299, but not every pair
    for (int index = 0; index < 300; ++index)
        square += fmt::format("0F{},{}F0\n", index, index);
    expect_file_error(square,
                      "bad.csv: 300 stages x 300 microbatches need 90000 forwards (F), one per "
                      "stage and microbatch, but the schedule has only 600");
}

std::string artifact(const std::string& name) {
    return std::string(PIPELENS_SOURCE_DIR) + "/tests/data/pytorch_artifacts/" + name;
}

// PyTorch's test artifact zb1p_2rank_2stagep was first written in its older notation and later
// rewritten in today's; read each in its notation, the two are one schedule.
TEST(ScheduleCsvNotation, PyTorchsOlderArtifactsReadAsTheirRewrittenTwins) {
    for (const std::string kind : {"compute", "comms"}) {
        SCOPED_TRACE(kind);
        const std::string name = "zb1p_2rank_2stagep_" + kind + ".csv";
        const ScheduleCsvReading legacy = read_schedule_csv_as(artifact("legacy/" + name), {});
        const ScheduleCsvReading current = read_schedule_csv_as(artifact("current/" + name), {});
        EXPECT_EQ(legacy.notation, ActionNotation::legacy);
        EXPECT_EQ(current.notation, ActionNotation::current);
        EXPECT_TRUE(current.legacy_evidence.empty());
        EXPECT_TRUE(same_actions(legacy.schedule, current.schedule));
        EXPECT_EQ(legacy.schedule.stage_to_rank, (std::vector<int>{0, 1, 0, 1}));
        EXPECT_EQ(legacy.schedule.microbatch_count, 8);
        EXPECT_EQ(legacy.schedule.has_communication, kind == "comms");
        const ScheduleCsvReading given =
            read_schedule_csv_as(artifact("legacy/" + name), ActionNotation::legacy);
        EXPECT_TRUE(given.legacy_evidence.empty());  // given, not inferred: nothing to note
        EXPECT_TRUE(same_actions(given.schedule, current.schedule));
    }
    const std::string compute = artifact("legacy/zb1p_2rank_2stagep_compute.csv");
    EXPECT_EQ(read_schedule_csv_as(compute, {}).note(compute),
              compute +
                  " is in PyTorch's older action notation (line 1, cell 7: 2W0 follows 2B0 of the "
                  "same stage and microbatch, and no cell is an I): read B as the input backward "
                  "(today's I), W as the weight backward and BW as the full backward (today's B); "
                  "pass --notation current to read it as today's notation");
    EXPECT_EQ(
        read_schedule_csv_as(artifact("legacy/zb1p_2rank_2stagep_comms.csv"), {}).legacy_evidence,
        "line 1, cell 12: 2BW0");
}

TEST(ScheduleCsvNotation, TokensOfTheOtherNotationAreNamed) {
    const auto error = [](const std::string& text, std::optional<ActionNotation> notation) {
        try {
            parse_schedule_csv_as(text, "mixed.csv", notation);
        } catch (const ScheduleFileError& failure) {
            return std::string(failure.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(error("0F0,0I0,0W0\n1F0,1BW0\n", std::nullopt),
              "mixed.csv: mixes PyTorch's two action notations: line 2, cell 2: 1BW0 is the older "
              "notation's full backward but line 1, cell 2: 0I0 is only in today's; read it with "
              "--notation current or --notation legacy to be told which cells do not fit");
    EXPECT_EQ(error("0F0,0BW0\n", ActionNotation::current),
              "mixed.csv:1: rank 0, cell 2: invalid action '0BW0': BW is the full backward in "
              "PyTorch's older notation (today's B); read the file in the older notation, or "
              "write B (expected [stage][kind][microbatch] such as 2F0, 1RECV_F3, 0UNSHARD or "
              "(0F7;7B3)OVERLAP_F_B)");
    EXPECT_EQ(error("0F0,0I0,0W0\n", ActionNotation::legacy),
              "mixed.csv:1: rank 0, cell 2: invalid action '0I0': I is today's input backward; "
              "PyTorch's older notation has no I (its B is the input backward, BW the full one), "
              "so this file is in today's notation (expected [stage][kind][microbatch] such as "
              "2F0, 1RECV_F3, 0UNSHARD or (0F7;7B3)OVERLAP_F_B)");
    // Without a B then W of one stage and microbatch, B is today's full backward.
    const ScheduleCsvReading plain =
        parse_schedule_csv_as("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", "plain.csv", std::nullopt);
    EXPECT_EQ(plain.notation, ActionNotation::current);
    EXPECT_EQ(plain.schedule.ranks[0][2].kind, ActionKind::full_backward);
    EXPECT_EQ(parse_notation_choice("auto"), std::nullopt);
    EXPECT_EQ(parse_notation_choice("legacy"), ActionNotation::legacy);
    EXPECT_THROW(parse_notation_choice("old"), ScheduleFileError);
}

TEST(ScheduleCsv, FilesRoundTripOnDisk) {
    const auto path = std::filesystem::temp_directory_path() / "pipelens_csv_test.csv";
    const Schedule lowered = lower(generate_schedule({ScheduleKind::interleaved_1f1b, 2, 2, 4}));
    write_schedule_csv(lowered, path.string());
    EXPECT_TRUE(same_actions(lowered, read_schedule_csv(path.string())));
    std::filesystem::remove(path);
    try {
        read_schedule_csv("/nonexistent/dir/schedule.csv");
        FAIL();
    } catch (const ScheduleFileError& error) {
        EXPECT_STREQ(error.what(),
                     "cannot open schedule file '/nonexistent/dir/schedule.csv': No such file or "
                     "directory");
    }
    try {  // a control byte in the name is shown, not written to the terminal
        read_schedule_csv("/nonexistent/no\x01such.csv");
        FAIL();
    } catch (const ScheduleFileError& error) {
        EXPECT_STREQ(error.what(),
                     "cannot open schedule file '/nonexistent/no\\x01such.csv': No such file or "
                     "directory");
    }
}

}  // namespace
}  // namespace pipelens
