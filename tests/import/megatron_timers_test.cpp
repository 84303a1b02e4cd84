// Megatron PP-timer import against the fixtures of tests/data/megatron (made by
// make_event_times.py in the patch's own file and key form): exact actions, order and ns times
// per rank, the schedule's shape, the run recorded into a real SQLite trace and read back, and
// one clear ImportError naming the file for every kind of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "engine/import/megatron_timers.hpp"
#include "tests/import/imported_steps.hpp"
#include "tests/temp_directory.hpp"
#include "tests/thrown_message.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::import {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(PIPELENS_SOURCE_DIR) / "tests" / "data" / "megatron";

using testing::Step;
using testing::steps_of;

std::vector<std::string> files_in(const fs::path& directory) {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(directory))
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<std::string> texts_of(const ImportedRun& run, int rank) {
    std::vector<std::string> texts;
    for (const Step& step : steps_of(run, rank))
        texts.push_back(std::get<0>(step));
    return texts;
}

// A fresh directory per test for traces and hand-made bad files, removed afterwards.
class MegatronTimersTest : public testing::TempDirectoryTest {
  protected:
    MegatronTimersTest() : TempDirectoryTest("megatron") {}
    static std::string rank_file(int pp_rank, int pp = 2, int replica = 0) {
        return "event_times_PP" + std::to_string(pp) + "_VPP1_TPxCPxDP_rank_" +
               std::to_string(replica) + "_pp_rank_" + std::to_string(pp_rank) + "_rank_" +
               std::to_string(pp_rank) + ".json";
    }
    // A valid one-microbatch rank file: F0 [0, 1.5) ms, B0 [1.5, 4.0000005) ms.
    static std::string one_microbatch() {
        return R"({"forward-0-start": 0, "forward-0-end": 1.5, "backward-0-start": 1.5, )"
               R"("backward-0-end": 4.0000005, "total-execution-time": 4.1})";
    }
    // The ImportError's message for reading `files`; fails the test if none is thrown.
    static std::string error_of(const std::vector<std::string>& files) {
        return testing::required_message<ImportError>([&] { read_megatron_timers(files); });
    }
};

TEST(MegatronMilliseconds, ConvertsTheDecimalTextExactlyToTheNearestNanosecond) {
    EXPECT_EQ(milliseconds_text_to_ns("0.0"), 0);
    EXPECT_EQ(milliseconds_text_to_ns("12"), 12'000'000);
    EXPECT_EQ(milliseconds_text_to_ns("0.0308799985051155"), 30'880);
    EXPECT_EQ(milliseconds_text_to_ns("1.0317440032958984"), 1'031'744);
    EXPECT_EQ(milliseconds_text_to_ns("18.1200008392334"), 18'120'001);
    EXPECT_EQ(milliseconds_text_to_ns("3.0720000993460417e-05"), 31);  // Python's repr form
    EXPECT_EQ(milliseconds_text_to_ns("1E-6"), 1);
    EXPECT_EQ(milliseconds_text_to_ns("1e3"), 1'000'000'000);
    EXPECT_EQ(milliseconds_text_to_ns("2.5e+2"), 250'000'000);
    EXPECT_EQ(milliseconds_text_to_ns("0.0000005"), 1);  // halves round away from zero
    EXPECT_EQ(milliseconds_text_to_ns("0.0000004999"), 0);
    EXPECT_EQ(milliseconds_text_to_ns("-0.0000005"), -1);
    EXPECT_EQ(milliseconds_text_to_ns("9223372036854.775807"), 9'223'372'036'854'775'807);
    EXPECT_EQ(milliseconds_text_to_ns("9223372036854.775808"), std::nullopt);  // past int64
    EXPECT_EQ(milliseconds_text_to_ns("1e300"), std::nullopt);
    EXPECT_EQ(milliseconds_text_to_ns("1e-300"), 0);
    for (const char* bad : {"", "-", "abc", "1.", ".5", "1e", "1e+", "1.5x", "NaN"})
        EXPECT_EQ(milliseconds_text_to_ns(bad), std::nullopt) << bad;
}

TEST_F(MegatronTimersTest, ReadsOneF1BRunWithExactTimesInStartOrder) {
    const ImportedRun run = read_megatron_timers(files_in(kData / "1f1b_pp2_m3"));
    EXPECT_EQ(run.format, "megatron-timers");
    EXPECT_FALSE(run.unit_steps);
    EXPECT_EQ(run.schedule.name, "Megatron-1F1B");
    EXPECT_EQ(run.schedule.rank_count, 2);
    EXPECT_EQ(run.schedule.stages_per_rank, 1);
    EXPECT_EQ(run.schedule.microbatch_count, 3);
    EXPECT_EQ(run.schedule.stage_count, 2);
    EXPECT_EQ(run.schedule.stage_to_rank, (std::vector<int>{0, 1}));
    ASSERT_EQ(run.sources.size(), 2u);
    EXPECT_NE(run.sources[1].find("_pp_rank_1_"), std::string::npos);
    // Megatron's 1F1B: rank 0 warms up with pp - 1 - rank = 1 forward. The times are the
    // fixture's float32 milliseconds rounded to ns (0.800000011920929 ms -> 800000 ns).
    EXPECT_EQ(steps_of(run, 0), (std::vector<Step>{{"0F0", 0, 800'000},
                                                   {"0F1", 800'000, 1'600'000},
                                                   {"0B0", 3'410'000, 5'010'000},
                                                   {"0F2", 5'010'000, 5'810'000},
                                                   {"0B1", 5'960'000, 7'560'000},
                                                   {"0B2", 8'510'000, 10'110'000}}));
    EXPECT_EQ(steps_of(run, 1), (std::vector<Step>{{"1F0", 825'900, 1'675'900},
                                                   {"1B0", 1'675'900, 3'375'900},
                                                   {"1F1", 3'375'900, 4'225'900},
                                                   {"1B1", 4'225'900, 5'925'900},
                                                   {"1F2", 5'925'900, 6'775'900},
                                                   {"1B2", 6'775'900, 8'475'900}}));
    EXPECT_FALSE(run.schedule.has_communication);
    EXPECT_TRUE(run.errors.empty());
    ASSERT_FALSE(run.notes.empty());
    EXPECT_NE(run.notes.front().find("barrier"), std::string::npos);
}

TEST_F(MegatronTimersTest, ReadsInterleavedChunksAsStagesChunkTimesPpPlusRank) {
    const ImportedRun run = read_megatron_timers(files_in(kData / "interleaved_pp2_v2_m4"));
    EXPECT_EQ(run.schedule.name, "Megatron-Interleaved1F1B");
    EXPECT_EQ(run.schedule.rank_count, 2);
    EXPECT_EQ(run.schedule.stages_per_rank, 2);
    EXPECT_EQ(run.schedule.microbatch_count, 4);
    EXPECT_EQ(run.schedule.stage_count, 4);
    EXPECT_EQ(run.schedule.stage_to_rank, (std::vector<int>{0, 1, 0, 1}));
    // Megatron's interleaved order, microbatches in groups of pp per chunk: rank 0 warms up
    // with (pp - 1 - rank) * 2 + (v - 1) * pp = 4 forwards, rank 1 with 2.
    EXPECT_EQ(texts_of(run, 0),
              (std::vector<std::string>{"0F0", "0F1", "2F0", "2F1", "0F2", "2B0", "0F3", "2B1",
                                        "2F2", "0B0", "2F3", "0B1", "2B2", "2B3", "0B2", "0B3"}));
    EXPECT_EQ(texts_of(run, 1),
              (std::vector<std::string>{"1F0", "1F1", "3F0", "3B0", "3F1", "3B1", "1F2", "1B0",
                                        "1F3", "1B1", "3F2", "3B2", "3F3", "3B3", "1B2", "1B3"}));
    const std::vector<Step> rank0 = steps_of(run, 0);
    const std::vector<Step> rank1 = steps_of(run, 1);
    EXPECT_EQ(rank0.front(), Step("0F0", 0, 800'000));
    EXPECT_EQ(rank0[12], Step("2B2", 16'320'000, 18'120'001));  // 18.1200008392334 ms
    EXPECT_EQ(rank0.back(), Step("0B3", 22'730'000, 24'330'000));
    EXPECT_EQ(rank1[12], Step("3F3", 16'285'900, 17'235'901));  // 17.23590087890625 ms
    EXPECT_EQ(rank1[14], Step("1B2", 19'135'900, 20'835'899));
    EXPECT_EQ(rank1.back(), Step("1B3", 20'995'899, 22'695'900));
}

TEST_F(MegatronTimersTest, RecordsTheRunIntoATraceWithStepTimeBubblesAndActionRows) {
    const fs::path trace = directory_ / "megatron.db";
    std::int64_t run_id = 0;
    {
        traces::TraceWriter writer(trace);
        run_id = record_imported_run(writer, read_megatron_timers(files_in(kData / "1f1b_pp2_m3")));
    }
    traces::TraceReader reader(trace);
    const traces::RunRecord run = reader.run(run_id);
    EXPECT_EQ(run.kind, traces::RunKind::real);
    EXPECT_EQ(run.status, traces::RunStatus::finished);
    EXPECT_EQ(run.schedule, "Megatron-1F1B");
    EXPECT_EQ(run.pp, 2);
    EXPECT_EQ(run.v, 1);
    EXPECT_EQ(run.m, 3);
    EXPECT_NE(run.config.find("megatron-timers"), std::string::npos);
    // The earliest start (rank 0's F0, at 0 already) is the run's zero; rank 0's last B ends it.
    EXPECT_EQ(run.step_time_ns, 10'110'000);

    const std::vector<traces::RankRecord> ranks = reader.ranks(run_id);
    ASSERT_EQ(ranks.size(), 2u);
    // Rank 0: 3 F of 0.8 ms and 3 B of 1.6 ms busy; rank 1: 3 of 0.85 and 3 of 1.7.
    EXPECT_EQ(ranks[0].busy_ns, 7'200'000);
    EXPECT_EQ(ranks[0].bubble_ns, 10'110'000 - 7'200'000);
    EXPECT_EQ(ranks[0].warmup_ns, 0);
    EXPECT_EQ(ranks[0].cooldown_ns, 0);
    EXPECT_EQ(ranks[1].busy_ns, 7'650'000);
    EXPECT_EQ(ranks[1].bubble_ns, 10'110'000 - 7'650'000);
    EXPECT_EQ(ranks[1].warmup_ns, 825'900);
    EXPECT_EQ(ranks[1].cooldown_ns, 10'110'000 - 8'475'900);
    EXPECT_DOUBLE_EQ(ranks[1].bubble_ratio, 2'460'000.0 / 10'110'000.0);

    const std::vector<traces::ActionRecord> actions = reader.actions(run_id);
    ASSERT_EQ(actions.size(), 12u);
    const traces::ActionRecord& second_on_rank1 = actions[7];
    EXPECT_EQ(second_on_rank1.rank, 1);
    EXPECT_EQ(second_on_rank1.step, 1);
    EXPECT_EQ(second_on_rank1.label, "1B0");
    EXPECT_EQ(second_on_rank1.lane, traces::ActionLane::compute);
    EXPECT_EQ(second_on_rank1.stage, 1);
    EXPECT_EQ(second_on_rank1.microbatch, 0);
    EXPECT_EQ(second_on_rank1.start_ns, 1'675'900);
    EXPECT_EQ(second_on_rank1.end_ns, 3'375'900);
    EXPECT_EQ(actions[5].label, "0B2");
    EXPECT_EQ(actions[5].end_ns, 10'110'000);
    EXPECT_TRUE(reader.pairs(run_id).empty());
    EXPECT_TRUE(reader.errors(run_id).empty());
}

TEST_F(MegatronTimersTest, SetsAsideOtherDataParallelCopiesAndReadsIntegerMilliseconds) {
    const std::vector<std::string> files{write(rank_file(0, 1, 1), one_microbatch()),
                                         write(rank_file(0, 1, 0), one_microbatch())};
    const ImportedRun run = read_megatron_timers(files);
    EXPECT_EQ(run.sources, std::vector<std::string>{files[1]});
    EXPECT_EQ(steps_of(run, 0),
              (std::vector<Step>{{"0F0", 0, 1'500'000}, {"0B0", 1'500'000, 4'000'001}}));
    EXPECT_TRUE(std::any_of(run.notes.begin(), run.notes.end(), [](const std::string& note) {
        return note.find("1 file(s) of other tensor/context/data-parallel ranks") !=
               std::string::npos;
    }));
}

TEST_F(MegatronTimersTest, AStartWithoutItsEndNamesTheFileAndKey) {
    const std::string file =
        write(rank_file(0, 1), R"({"forward-0-start": 0.5,)"
                               R"( "backward-0-start": 1, "backward-0-end": 2})");
    const std::string message = error_of({file});
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find("\"forward-0-start\" has no \"forward-0-end\""), std::string::npos)
        << message;
}

TEST_F(MegatronTimersTest, AnEndBeforeItsStartNamesTheFileAndKey) {
    const std::string file =
        write(rank_file(0, 1), R"({"forward-0-start": 2.0, "forward-0-end": 1.5, )"
                               R"("backward-0-start": 2.5, "backward-0-end": 3})");
    const std::string message = error_of({file});
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find("\"forward-0\" ends (1.500000 ms) before it starts (2.000000 ms)"),
              std::string::npos)
        << message;
}

TEST_F(MegatronTimersTest, OverlappingPassesOnOneRankAreRefusedByName) {
    const std::string file =
        write(rank_file(0, 1), R"({"forward-0-start": 0.5, "forward-0-end": 2.0, )"
                               R"("backward-0-start": 1.25, "backward-0-end": 3})");
    EXPECT_EQ(error_of({file}),
              file +
                  ": \"backward-0\" (1.250000 to 3.000000 ms) overlaps \"forward-0\" "
                  "(0.500000 to 2.000000 ms); one rank runs one pass at a time");
    // Touching is not overlapping: the backward may start the instant the forward ends.
    const std::string touching =
        write(rank_file(0, 1), R"({"forward-0-start": 0.5, "forward-0-end": 2.0, )"
                               R"("backward-0-start": 2.0, "backward-0-end": 3})");
    EXPECT_EQ(read_megatron_timers({touching}).timings[0].size(), 2u);
}

TEST_F(MegatronTimersTest, APassBeforeTheRanksStartEventIsRefused) {
    const std::string file =
        write(rank_file(0, 1), R"({"forward-0-start": -0.25, "forward-0-end": 1.0, )"
                               R"("backward-0-start": 1.5, "backward-0-end": 3})");
    EXPECT_EQ(error_of({file}), file +
                                    ": \"forward-0\" starts at -0.250000 ms, before the "
                                    "rank's own start event (0 ms)");
}

TEST_F(MegatronTimersTest, AMissingRankNamesTheFileItExpects) {
    const std::string file = write(rank_file(0), one_microbatch());
    const std::string message = error_of({file});
    EXPECT_NE(message.find("no file for pipeline rank 1 of 2"), std::string::npos) << message;
    EXPECT_NE(message.find("event_times_PP2_VPP*_TPxCPxDP_rank_0_pp_rank_1_rank_*.json"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(file), std::string::npos) << message;
}

TEST_F(MegatronTimersTest, TwoFilesClaimingOneRankNameBoth) {
    const std::string first = write("a/" + rank_file(0, 1), one_microbatch());
    const std::string second = write("b/" + rank_file(0, 1), one_microbatch());
    const std::string message = error_of({first, second});
    EXPECT_NE(message.find(first), std::string::npos) << message;
    EXPECT_NE(message.find(second), std::string::npos) << message;
    EXPECT_NE(message.find("both hold pipeline rank 0"), std::string::npos) << message;
}

TEST_F(MegatronTimersTest, NonJsonNamesTheFileAndByte) {
    const std::string file = write(rank_file(0, 1), R"({"forward-0-start": 0.5, oops})");
    const std::string message = error_of({file});
    EXPECT_NE(message.find(file + ": not valid JSON (byte 26)"), std::string::npos) << message;
    const std::string empty = write("e/" + rank_file(0, 1), "");
    EXPECT_NE(error_of({empty}).find(empty + ": not valid JSON"), std::string::npos);
}

TEST_F(MegatronTimersTest, WrongShapesOfJsonNameTheFileAndKey) {
    const std::string text_value = write("s/" + rank_file(0, 1), R"({"forward-0-start": "0.5"})");
    EXPECT_NE(error_of({text_value}).find(text_value + ": key \"forward-0-start\" holds a string"),
              std::string::npos);
    const std::string array = write("a/" + rank_file(0, 1), "[1, 2]");
    EXPECT_NE(error_of({array}).find(array + ": expected one JSON object"), std::string::npos);
    const std::string twice =
        write("t/" + rank_file(0, 1), R"({"forward-0-start": 0, "forward-0-start": 1})");
    EXPECT_NE(error_of({twice}).find(twice + ": key \"forward-0-start\" appears twice"),
              std::string::npos);
    const std::string odd_key = write("k/" + rank_file(0, 1), R"({"forward-x-start": 0})");
    EXPECT_NE(error_of({odd_key}).find(odd_key + ": key \"forward-x-start\""), std::string::npos);
    const std::string no_timers = write("n/" + rank_file(0, 1), R"({"total-execution-time": 3})");
    EXPECT_NE(error_of({no_timers}).find(no_timers + ": no forward-/backward- timer keys"),
              std::string::npos);
}

TEST_F(MegatronTimersTest, AFileNameWithoutItsRankIsRefusedByName) {
    const std::string file = write("rank0_times.json", one_microbatch());
    const std::string message = error_of({file});
    EXPECT_NE(message.find(file + ": cannot tell its pipeline rank"), std::string::npos) << message;
}

TEST_F(MegatronTimersTest, AMicrobatchMissingOnOneRankNamesThatFileAndKey) {
    const std::string full = write(rank_file(0), R"({"forward-0-start": 0, "forward-0-end": 1,)"
                                                 R"( "backward-0-start": 3, "backward-0-end": 5,)"
                                                 R"( "forward-1-start": 1, "forward-1-end": 2,)"
                                                 R"( "backward-1-start": 5, "backward-1-end": 7})");
    const std::string short_rank = write(rank_file(1), one_microbatch());
    const std::string message = error_of({full, short_rank});
    EXPECT_NE(message.find(short_rank + ": no \"forward-1-start\""), std::string::npos) << message;
}

TEST_F(MegatronTimersTest, NoFilesIsAnError) {
    EXPECT_THROW(read_megatron_timers({}), ImportError);
    const std::string missing = (directory_ / rank_file(0, 1)).string();
    EXPECT_NE(error_of({missing}).find(missing + ": cannot open"), std::string::npos);
}

}  // namespace
}  // namespace pipelens::import
