// PyTorch's schedule CSV: exact output, round trips for every family (compute-only and with
// communication), idle cells and CRLF as _dump_csv writes them, and errors naming the cell.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"

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

TEST(ScheduleCsv, ReadsIdleCellsBlankLinesAndQuotes) {
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
    const Schedule with_idle_rank = parse_schedule_csv("0F0,0B0\r\n\r\n", "idle.csv");
    EXPECT_EQ(with_idle_rank.rank_count, 2);
    EXPECT_TRUE(with_idle_rank.ranks[1].empty());
}

void expect_file_error(const std::string& text, const std::string& fragment) {
    try {
        parse_schedule_csv(text, "bad.csv");
        FAIL() << "accepted: " << text;
    } catch (const ScheduleFileError& error) {
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
}

TEST(ScheduleCsv, BrokenFilesNameFileRowCellAndToken) {
    expect_file_error("0F0,0B0\n1F0,1Q0,1B0\n",
                      "bad.csv: row 2 (rank 1), cell 2: invalid action '1Q0': unknown action kind");
    expect_file_error("0F0,F0\n", "bad.csv: row 1 (rank 0), cell 2: invalid action 'F0'");
    expect_file_error("0F0,\"0B0\n", "bad.csv: row 1 (rank 0): unterminated quoted cell");
    expect_file_error("", "bad.csv: the schedule file is empty");
    expect_file_error(",,\n", "bad.csv: the schedule has no actions");
    expect_file_error("0F0,99999F99999\n", "more than 268435456 stage-microbatches");
}

// A few bytes naming a huge stage or microbatch once cost gigabytes in the check; such a file
// cannot be valid, and the parser says why before sizing anything by those numbers.
TEST(ScheduleCsv, NumbersBeyondWhatTheFileCanCoverAreRefused) {
    expect_file_error("0F0\n1F133333333\n",
                      "bad.csv: the schedule names microbatch 133333333 but uses only 2 distinct "
                      "microbatch numbers; microbatches must be numbered 0..M-1 without gaps");
    expect_file_error("0F0,0B0\n1F0,1B0\n5000000F0\n",
                      "bad.csv: the schedule names stage 5000000 but uses only 3 distinct stage "
                      "numbers; stages must be numbered 0..N-1 without gaps");
    expect_file_error("0228306779B\n",  // found by fuzzing: no microbatch, so no table product
                      "bad.csv: the schedule names stage 228306779 but uses only 1 distinct stage "
                      "numbers");
    std::string square;  // stages 0..299 and microbatches 0..299, but not every pair
    for (int index = 0; index < 300; ++index)
        square += fmt::format("0F{},{}F0\n", index, index);
    expect_file_error(square,
                      "bad.csv: 300 stages x 300 microbatches need 90000 forwards (F), one per "
                      "stage and microbatch, but the schedule has only 600");
    // Small tables still reach the static check, whose messages name the actions.
    EXPECT_EQ(parse_schedule_csv("0F0,0B0\n2F0,2B0\n", "gap.csv").stage_count, 3);
    EXPECT_EQ(parse_schedule_csv("0F0,0F300,0B0\n", "gap.csv").microbatch_count, 301);
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
        EXPECT_STREQ(error.what(), "cannot open schedule file '/nonexistent/dir/schedule.csv'");
    }
}

}  // namespace
}  // namespace pipelens
