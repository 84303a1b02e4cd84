// Profiler traces as PyTorch really writes them (tests/data/hta/: files from
// HolisticTraceAnalysis's test data, see MANIFEST there): each is recognised by its content
// without --format, a distributed run's trace (pg_config inside distributedInfo, a leading
// newline) is not taken for a flight-recorder dump, and a trace of any global rank is read as
// that rank. With the pipeline fixtures of tests/data/pytorch_profiler/ relabelled as global
// ranks 4 and 12, the import orders them, and the recorded run keeps their global ranks.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/import/chrome_trace_stream.hpp"
#include "engine/import/flight_recorder_dump.hpp"
#include "engine/import/import_format.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/thrown_message.hpp"
#include "traces/file_kind.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::import {
namespace {

using traces::file_kind_of_head;
using traces::FileKind;

std::string data(const std::string& name) {
    return std::string(PIPELENS_SOURCE_DIR) + "/tests/data/" + name;
}

const std::string kRank34 = data("hta/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");

std::string temp_path(const std::string& name) {
    return testing::process_temp_path(name).string();
}

std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = temp_path(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

TEST(FormatDetection, EachHtaTraceIsAProfilerTraceByItsContent) {
    for (const char* name :
         {"hta/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", "hta/base.json.gz",
          "hta/inference_rank_1.json.gz", "hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz"})
        EXPECT_EQ(detect_format(data(name)), ImportFormat::pytorch_profiler) << name;
    // An execution trace is PyTorch's too, but not a timeline pipelens imports.
    const std::string et = data("hta/benchmark_simple_add_et.json.gz");
    const std::string refused =
        testing::thrown_message<ImportError>([&] { detect_format(et); }, "no error");
    EXPECT_EQ(refused.rfind(et + ": not a format pipelens can import", 0), 0u) << refused;
}

TEST(FormatDetection, TopLevelMembersDecideNotNestedOnes) {
    EXPECT_EQ(
        file_kind_of_head("\n{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"rank\": 3, "
                          "\"pg_config\": [{\"pg_name\": \"0\", \"ranks\": [0]}]},\n"
                          "  \"traceEvents\": ["),
        FileKind::pytorch_profiler);
    EXPECT_EQ(file_kind_of_head("{\"distributedInfo\": {\"pg_config\": []}, \"traceEvents\": []}"),
              FileKind::pytorch_profiler);
    EXPECT_EQ(file_kind_of_head("{\"version\": \"2.10\", \"pg_config\": {\"0\": {}}}"),
              FileKind::flight_recorder);
    // A head cut inside a long first member still shows that member's name.
    EXPECT_EQ(file_kind_of_head("{\"entries\": [{\"profiling_name\": \"nccl:send 0->1\""),
              FileKind::flight_recorder);
    EXPECT_EQ(file_kind_of_head("{\"x\": {\"traceEvents\": []}, \"y\": {\"pg_config\": 1}}"),
              FileKind::unknown);
    EXPECT_EQ(file_kind_of_head("[{\"ph\": \"X\", \"name\": \"PP:0F0\", \"ts\": 1}]"),
              FileKind::pytorch_profiler);
    EXPECT_EQ(file_kind_of_head("[[-1, 1, 37888, 7], [-1, 1, 512, 7]]"), FileKind::unknown);
    EXPECT_EQ(file_kind_of_head("[[stages]]  # one per stage\nlayers = 2\n"),
              FileKind::experiment_toml);
    EXPECT_EQ(file_kind_of_head("{\"key \\\"q\\\"\": 1, \"forward-0-start\": 0.5}"),
              FileKind::megatron_timers);
}

TEST(HtaTraces, DistributedTraceIsNotTakenForAFlightRecorderDump) {
    // Kineto began the file with a newline; distributedInfo holds pg_config.
    ASSERT_EQ(traces::file_kind_of(kRank34), FileKind::pytorch_profiler);
    const ChromeTraceHeader header = read_chrome_trace(kRank34, [](const ChromeEvent&) {});
    EXPECT_EQ(header.rank, 34);
    EXPECT_EQ(header.world_size, 300);
    EXPECT_EQ(header.backend, "gloo");
    EXPECT_EQ(header.event_count, 30u);
    ASSERT_EQ(header.process_groups.size(), 11u);
    EXPECT_EQ(header.process_groups[0].name, "0");
    EXPECT_EQ(header.process_groups[0].desc, "default_pg");
    ASSERT_EQ(header.process_groups[0].ranks.size(), 300u);
    EXPECT_EQ(header.process_groups[0].ranks[34], 34);
}

TEST(HtaTraces, OneRankOfALargeJobIsReadAsItsGlobalRank) {
    // It holds no pipeline actions: the import gets as far as saying so, naming rank 34.
    const std::string message =
        testing::thrown_message<ImportError>([] { read_pytorch_profiler({kRank34}); }, "no error");
    EXPECT_EQ(message.rfind(kRank34 + ": no pipeline action ranges among the 30 events of global "
                                      "rank 34 (",
                            0),
              0u)
        << message;
    EXPECT_EQ(message.find("missing"), std::string::npos) << message;
    const std::string by_name = data("hta/inference_rank_1.json.gz");
    const std::string named =
        testing::thrown_message<ImportError>([&] { read_pytorch_profiler({by_name}); }, "no error");
    EXPECT_NE(named.find("events of global rank 1 ("), std::string::npos) << named;
}

// A pipeline fixture as global rank `rank` of a larger job: its distributedInfo replaced, and
// the newline Kineto writes first.
std::string as_global_rank(const std::string& fixture, int rank, const std::string& pg_config) {
    std::string text = read_input_file(data("pytorch_profiler/" + fixture));
    if (const std::size_t info = text.find("\"distributedInfo\""); info != std::string::npos)
        text.erase(info, text.find("}, ", info) + 3 - info);
    nlohmann::json info = {{"backend", "nccl"}, {"rank", rank}, {"world_size", 32}};
    if (!pg_config.empty())
        info["pg_config"] = nlohmann::json::parse(pg_config);
    text.insert(text.find('{') + 1, "\"distributedInfo\": " + info.dump() + ", ");
    const std::string stem = fixture.substr(0, fixture.find(".json"));
    return write_temp(stem + "_as_global_" + std::to_string(rank) + ".json", "\n" + text);
}

nlohmann::json recorded_config(ImportedRun run, const std::string& name) {
    const auto path = testing::fresh_trace(name);
    std::int64_t run_id = 0;
    {
        traces::TraceWriter writer(path);
        run_id = record_imported_run(writer, std::move(run));
    }
    return nlohmann::json::parse(traces::TraceReader(path).run(run_id).config);
}

TEST(ProfilerRanks, RanksFourAndTwelveImportInOrderAndKeepTheirGlobalRanks) {
    const std::string twelve = as_global_rank("runtime_1f1b_rank1.json.gz", 12, "");
    const std::string four = as_global_rank("runtime_1f1b_rank0.json", 4, "");
    const ImportedRun run = read_pytorch_profiler({twelve, four});
    EXPECT_EQ(run.global_ranks, (std::vector<int>{4, 12}));
    EXPECT_EQ(run.sources, (std::vector<std::string>{four, twelve}));
    EXPECT_EQ(run.schedule.name, "1F1B");
    EXPECT_EQ(run.schedule.text(run.schedule.ranks.at(0).at(0)), "0F0");
    EXPECT_EQ(run.schedule.text(run.schedule.ranks.at(1).at(0)), "1RECV_F0");
    ASSERT_FALSE(run.notes.empty());
    EXPECT_EQ(run.notes.front(),
              "pipeline ranks 0..1 are global ranks 4, 12 (by global rank: no process group of "
              "exactly these ranks)");
    EXPECT_EQ(recorded_config(run, "global_4_12")["global_ranks"], nlohmann::json({4, 12}));
}

TEST(ProfilerRanks, APgConfigPipelineGroupOrdersTheRanksAndIsNamed) {
    const std::string groups =
        R"([{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 32, "ranks": [0, 1, 2, 3, 4, 5,
            6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
            28, 29, 30, 31]},
           {"pg_name": "2", "pg_desc": "mesh_pp", "pg_size": 2, "ranks": [4, 12]}])";
    const std::string four = as_global_rank("runtime_1f1b_rank0.json", 4, groups);
    const std::string twelve = as_global_rank("runtime_1f1b_rank1.json.gz", 12, groups);
    ASSERT_EQ(detect_format(four), ImportFormat::pytorch_profiler);
    const ImportedRun run = read_pytorch_profiler({twelve, four});
    EXPECT_EQ(run.global_ranks, (std::vector<int>{4, 12}));
    EXPECT_EQ(run.notes.front(),
              "pipeline ranks 0..1 are global ranks 4, 12 (in the order of process group '2' "
              "(mesh_pp) of ranks 4, 12)");
    EXPECT_EQ(run.schedule.rank_count, 2);
    EXPECT_EQ(recorded_config(run, "global_pg")["global_ranks"], nlohmann::json({4, 12}));

    const std::string again = as_global_rank("runtime_1f1b_rank1.json.gz", 4, groups);
    const std::string twice = testing::thrown_message<ImportError>(
        [&] {
            read_pytorch_profiler({four, again});
        },
        "no error");
    ASSERT_NE(again, four);
    EXPECT_EQ(twice, four + " and " + again + " both hold global rank 4");
}

TEST(HtaTraces, GzipFlightRecorderDumpIsReadLikeAPlainOne) {
    const std::string plain = data("flight_recorder/p2p_clean/json/nccl_trace_rank_1.json");
    const std::string text = read_input_file(plain);
    const std::string packed = temp_path("nccl_trace_rank_1.json.gz");
    gzFile out = gzopen(packed.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    gzclose(out);
    EXPECT_EQ(detect_format(packed), ImportFormat::flight_recorder);
    const FlightRecorderDump dump = read_flight_recorder_dump(packed);
    EXPECT_EQ(dump.rank, read_flight_recorder_dump(plain).rank);
    EXPECT_EQ(dump.entries.size(), read_flight_recorder_dump(plain).entries.size());
}

}  // namespace
}  // namespace pipelens::import
