// import_files, what `pipelens import` and a drop on the viewer both do with a set of files: one
// format for all, each read by its importer, the run recorded; the stages reported in order;
// flight-recorder dumps analysed and recorded with their report; a file that fails to read
// leaves no trace behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/import_files.hpp"
#include "engine/import/imported_run.hpp"
#include "tests/temp_directory.hpp"
#include "tests/thrown_message.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::import {
namespace {

const std::string kData = PIPELENS_SOURCE_DIR "/tests/data/";

std::string text_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ImportFilesTest : public testing::TempDirectoryTest {
  protected:
    ImportFilesTest() : TempDirectoryTest("import_files") {}
    std::string out() const { return (directory_ / "out.db").string(); }
};

TEST_F(ImportFilesTest, TheFormatIsTheOneAllFilesShare) {
    const std::vector<std::string> profiler = {kData + "pytorch_profiler/gpipe_rank0.json",
                                               kData + "pytorch_profiler/gpipe_rank1.json"};
    EXPECT_EQ(detect_common_format(profiler), ImportFormat::pytorch_profiler);
    const std::string megatron =
        kData + "megatron/1f1b_pp2_m3/event_times_PP2_VPP1_TPxCPxDP_rank_0_pp_rank_0_rank_0.json";
    EXPECT_EQ(testing::required_message<ImportError>([&] {
                  detect_common_format({profiler[0], megatron});
              }),
              profiler[0] + " is pytorch-profiler but " + megatron +
                  " is megatron-timers; import one kind of file at a time (or give --format)");
    EXPECT_EQ(testing::required_message<ImportError>([&] { detect_common_format({}); }),
              "no files to import");
}

TEST_F(ImportFilesTest, ATimelineIsReadThenRecordedInThatOrder) {
    std::vector<ImportStage> stages;
    const ImportResult result = import_files(
        {kData + "pytorch_profiler/gpipe_rank0.json", kData + "pytorch_profiler/gpipe_rank1.json"},
        ImportFormat::pytorch_profiler, out(), {},
        [&](ImportStage stage) { stages.push_back(stage); });
    EXPECT_EQ(stages, (std::vector<ImportStage>{ImportStage::reading, ImportStage::recording}));
    EXPECT_EQ(result.format, ImportFormat::pytorch_profiler);
    EXPECT_EQ(result.run_id, 1);
    EXPECT_EQ(result.file_count, 2u);
    EXPECT_FALSE(result.flight_recorder);
    EXPECT_TRUE(result.generated_kind);  // GPipe's order
    EXPECT_EQ(result.compute.action_count(), 8u);
    EXPECT_FALSE(result.compute.has_communication);
    const traces::TraceReader reader(out());
    EXPECT_EQ(reader.run(1).schedule, "GPipe");
    EXPECT_EQ(reader.runs().size(), 1u);
}

TEST_F(ImportFilesTest, TheRecoveredScheduleIsWrittenWhenAsked) {
    const std::string csv = (directory_ / "schedule.csv").string();
    import_files(
        {kData + "pytorch_profiler/gpipe_rank0.json", kData + "pytorch_profiler/gpipe_rank1.json"},
        ImportFormat::pytorch_profiler, out(), {std::nullopt, csv});
    EXPECT_EQ(text_of(csv), "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B0,1B1\r\n");
}

TEST_F(ImportFilesTest, FlightRecorderDumpsAreRecordedWithTheirReport) {
    const std::string dumps = kData + "flight_recorder/recv_recv_cycle/json/";
    const ImportResult result =
        import_files({dumps + "nccl_trace_rank_0.json", dumps + "nccl_trace_rank_1.json"},
                     ImportFormat::flight_recorder, out());
    EXPECT_EQ(result.run_id, 1);
    EXPECT_EQ(result.file_count, 2u);
    ASSERT_TRUE(result.flight_recorder);
    EXPECT_TRUE(result.flight_recorder->hang);
    EXPECT_EQ(traces::TraceReader(out()).run(1).status, traces::RunStatus::failed);
}

TEST_F(ImportFilesTest, AFileThatFailsToReadWritesNothing) {
    const std::string bad =
        write("bad.json", R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}, x]})");
    std::vector<ImportStage> stages;
    EXPECT_EQ(testing::required_message<ImportError>([&] {
                  import_files({bad}, ImportFormat::pytorch_profiler, out(), {},
                               [&](ImportStage stage) { stages.push_back(stage); });
              }),
              bad + ": traceEvents[1] is not an object at byte 62 (line 1)");
    EXPECT_EQ(stages, (std::vector<ImportStage>{ImportStage::reading}));
    EXPECT_FALSE(std::filesystem::exists(out()));
}

// PyTorch's clean Gloo dumps (tests/data/pytorch/flight_recorder/) as a rank whose flight recorder
// was off writes them: no entries.
class DisabledRecorderTest : public ImportFilesTest {
  protected:
    std::string dump(int rank, bool recorded) const {
        const std::string name = "rank_" + std::to_string(rank) + ".json";
        nlohmann::json dump = nlohmann::json::parse(
            text_of(kData + "pytorch/flight_recorder/gloo_clean_json/" + name));
        if (!recorded) {
            dump["entries"] = nlohmann::json::array();
            dump["pg_config"] = nlohmann::json::object();
            dump["pg_status"] = nlohmann::json::object();
        }
        return write((recorded ? "recorded/" : "off/") + name, dump.dump());
    }
    static std::string off_hint() {
        return "the flight recorder was off (TORCH_FR_BUFFER_SIZE unset or 0, PyTorch's default): "
               "set TORCH_FR_BUFFER_SIZE (TORCH_NCCL_TRACE_BUFFER_SIZE in older PyTorch) to the "
               "number of ops to keep, such as 2000, in every rank's environment, and dump again";
    }
};

// Dumps that recorded nothing show neither a hang nor its absence: refused (they once read "no
// hang and no mismatch: every op completed and the ranks agree"), and nothing is written.
TEST_F(DisabledRecorderTest, DumpsThatRecordedNothingAreRefused) {
    const std::vector<std::string> off = {dump(0, false), dump(1, false)};
    EXPECT_EQ(testing::required_message<ImportError>(
                  [&] { import_files(off, ImportFormat::flight_recorder, out()); }),
              off[0] + ", " + off[1] +
                  ": none of the flight-recorder dumps holds an op (no entries), so they can show "
                  "neither a hang nor its absence: " +
                  off_hint());
    EXPECT_EQ(testing::required_message<ImportError>(
                  [&] { import_files({off[1]}, ImportFormat::flight_recorder, out()); }),
              off[1] +
                  ": the flight-recorder dump holds no op (no entries), so it can show neither a "
                  "hang nor its absence: " +
                  off_hint());
    EXPECT_FALSE(std::filesystem::exists(out()));
}

// One rank's recorder off: that rank is read as one without a dump, and a note says why.
TEST_F(DisabledRecorderTest, ARankThatRecordedNothingIsReadAsOneWithoutADump) {
    const std::string off = dump(1, false);
    const ImportResult result =
        import_files({dump(0, true), off}, ImportFormat::flight_recorder, out());
    EXPECT_EQ(result.file_count, 2u);
    ASSERT_TRUE(result.flight_recorder);
    const FlightRecorderReport& report = *result.flight_recorder;
    ASSERT_EQ(report.ranks.size(), 1u);
    EXPECT_EQ(report.ranks[0].rank, 0);
    EXPECT_TRUE(report.findings.empty());
    ASSERT_GE(report.notes.size(), 2u);
    EXPECT_EQ(report.notes[0], "rank 1 (" + off +
                                   "): its dump holds no op, so it is read as a rank without a "
                                   "dump: " +
                                   off_hint());
    EXPECT_EQ(report.notes[1],
              "process group '0' (default_pg): rank(s) 1 have no dump, so their side of its ops "
              "is unknown");
}

TEST_F(ImportFilesTest, FlightRecorderFilesHoldNoTimelineForAnotherFormat) {
    const std::string dumps = kData + "flight_recorder/recv_recv_cycle/json/";
    // Forced as Megatron timers, a dump is refused by that reader, naming the file.
    EXPECT_NE(testing::required_message<ImportError>([&] {
                  import_files({dumps + "nccl_trace_rank_0.json"}, ImportFormat::megatron_timers,
                               out());
              }).find(dumps + "nccl_trace_rank_0.json"),
              std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(out()));
}

}  // namespace
}  // namespace pipelens::import
