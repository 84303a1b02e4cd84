// Sweep results (sim/sweep_results.hpp): the JSON both ways with the exact fields and the errors
// naming file and field, the CSV and the table as exact text, the subject naming a
// configuration, and shards merged back into exactly the whole grid or refused by name.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep_results.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::sim {
namespace {

SweepPoint simulated_point(std::size_t index, const std::string& schedule,
                           std::int64_t step_time_ns, double bubble_ratio,
                           std::int64_t peak_memory_bytes, int peak_memory_rank) {
    SweepPoint point;
    point.index = index;
    point.schedule = schedule;
    point.pp = 2;
    point.v = 1;
    point.m = 4;
    point.step_time_ns = step_time_ns;
    point.bubble_ratio = bubble_ratio;
    point.peak_memory_bytes = peak_memory_bytes;
    point.peak_memory_rank = peak_memory_rank;
    return point;
}

SweepPoint failed_point(std::size_t index, const std::string& error) {
    SweepPoint point;
    point.index = index;
    point.error = error;
    return point;
}

// Two schedules x two W costs; configuration 3 (1F1B, w = 2us) was not simulated. Ranked:
// 2 (15 us, 1 MiB) front, 0 (15 us, 2 MiB), 1 (21 us, 512 KiB) front, then 3.
std::vector<SweepPoint> all_points() {
    return {simulated_point(0, "GPipe", 15000, 0.25, 2 << 20, 0),
            simulated_point(1, "GPipe", 21000, 0.125, 512 << 10, 1),
            simulated_point(2, "1F1B", 15000, 0.25, 1 << 20, 0),
            failed_point(3, "hangs at step 3, \"RECV_F\"")};
}

std::vector<SweepAxis> two_axes() {
    return {{"schedule.kind", {"\"GPipe\"", "\"1F1B\""}, {"GPipe", "1F1B"}, "--sweep kind"},
            {"costs.w", {"\"1us\"", "\"2us\""}, {"1us", "2us"}, "--sweep w"}};
}

SweepResults results_of(const std::vector<std::size_t>& indices, SweepShard shard) {
    const std::vector<SweepPoint> points = all_points();
    SweepResults results{"[schedule]\npp = 2\n", two_axes(), 4, shard, {}};
    for (std::size_t index : indices)
        results.points.push_back(points[index]);
    rank_sweep(results.points);
    return results;
}

SweepResults whole() {
    return results_of({0, 1, 2, 3}, SweepShard{1, 1});
}

std::vector<std::size_t> ranked_indices(const SweepResults& results) {
    std::vector<std::size_t> indices;
    for (const SweepPoint& point : results.points)
        indices.push_back(point.index);
    return indices;
}

std::string from_json_error(const std::string& text) {
    return testing::thrown_message<SweepResultsError>(
        [&] { sweep_results_from_json(text, "r.json"); }, "no error");
}

using Shards = std::vector<std::pair<std::string, SweepResults>>;

std::string merge_error(const Shards& shards) {
    return testing::thrown_message<SweepMergeError>([&] { merge_sweep_results(shards); },
                                                    "no error");
}

TEST(SweepResults, JsonHoldsTheSweepAndEveryConfiguration) {
    const nlohmann::ordered_json json = sweep_results_json(whole());
    EXPECT_EQ(json["format"], "pipelens sweep");
    EXPECT_EQ(json["version"], 1);
    EXPECT_EQ(json["experiment"], "[schedule]\npp = 2\n");
    EXPECT_EQ(json["axes"].dump(),
              R"([{"key":"schedule.kind","values":["\"GPipe\"","\"1F1B\""],"labels":["GPipe",)"
              R"("1F1B"]},{"key":"costs.w","values":["\"1us\"","\"2us\""],"labels":["1us",)"
              R"("2us"]}])");
    EXPECT_EQ(json["grid_size"], 4);
    EXPECT_EQ(json["shard"], "1/1");
    ASSERT_EQ(json["configurations"].size(), 4u);
    EXPECT_EQ(json["configurations"][0].dump(),
              R"({"index":2,"values":{"schedule.kind":"1F1B","costs.w":"1us"},)"
              R"("schedule":"1F1B","pp":2,"v":1,"m":4,"microbatch_size":1,"step_time_ns":15000,)"
              R"("bubble_ratio":0.25,)"
              R"("peak_memory_bytes":1048576,"peak_memory_rank":0,"place":1,"pareto":true})");
    EXPECT_EQ(json["configurations"][3].dump(),
              R"({"index":3,"values":{"schedule.kind":"1F1B","costs.w":"2us"},)"
              R"("error":"hangs at step 3, \"RECV_F\""})");
}

TEST(SweepResults, JsonReadBackIsTheSameResults) {
    const SweepResults read =
        sweep_results_from_json(sweep_results_json(whole()).dump(1), "r.json");
    EXPECT_EQ(read.experiment_toml, "[schedule]\npp = 2\n");
    ASSERT_EQ(read.axes.size(), 2u);
    EXPECT_EQ(read.axes[1].key, "costs.w");
    EXPECT_EQ(read.axes[1].values, (std::vector<std::string>{"\"1us\"", "\"2us\""}));
    EXPECT_EQ(read.axes[1].labels, (std::vector<std::string>{"1us", "2us"}));
    EXPECT_EQ(read.grid_size, 4u);
    EXPECT_EQ(read.shard.index, 1u);
    EXPECT_EQ(read.shard.count, 1u);
    EXPECT_EQ(ranked_indices(read), (std::vector<std::size_t>{2, 0, 1, 3}));
    EXPECT_EQ(sweep_results_json(read), sweep_results_json(whole()));
}

TEST(SweepResults, ReadingNamesTheFileAndTheField) {
    EXPECT_EQ(from_json_error("{oops"), "r.json: not JSON (byte 2)");
    EXPECT_EQ(from_json_error("{\"format\": \"pipel"),
              "r.json: not JSON (byte 18, the end: a truncated file?)");
    EXPECT_EQ(from_json_error(R"({"step_time_ns": 3})"),
              "r.json: not a pipelens sweep's results (no \"format\": \"pipelens sweep\"); write "
              "them with pipelens sweep --json");
    nlohmann::ordered_json json = sweep_results_json(whole());
    json["version"] = 2;
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: version: version 2 is not the 1 this pipelens reads");
    json = sweep_results_json(whole());
    json["configurations"][0].erase("pp");
    EXPECT_EQ(from_json_error(json.dump()), "r.json: configurations[0].pp: missing");
    json = sweep_results_json(whole());
    json["configurations"][1]["index"] = 9;
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: configurations[1].index: 9 is outside the grid of 4");
    json = sweep_results_json(whole());
    json["axes"][0]["labels"] = {"GPipe"};
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: axes[0]: expected as many labels as values, at least one");
    json = sweep_results_json(whole());
    json["configurations"][0]["bubble_ratio"] = "a quarter";
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: configurations[0].bubble_ratio: expected a number");
    // A count past int once wrapped (pp 10^12 read back as -727379968).
    json = sweep_results_json(whole());
    json["configurations"][0]["pp"] = 1000000000000;
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: configurations[0].pp: expected an integer from 1 to 2147483647");
    json = sweep_results_json(whole());
    json["global_batch"] = 0;
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: global_batch: expected an integer from 1 to 2147483647");
}

// What contradicts the grid is refused, not ranked: figures filed under another configuration's
// values (an edited or mixed-up file), a grid size the axes do not make, a ratio past 1.
TEST(SweepResults, ReadingRefusesWhatContradictsTheGrid) {
    nlohmann::ordered_json json = sweep_results_json(whole());
    const std::size_t first = json["configurations"][0]["index"].get<std::size_t>();
    ASSERT_EQ(first, 2u);  // 1F1B, w = 1us
    json["configurations"][0]["values"]["costs.w"] = "2us";
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: configurations[0].values[\"costs.w\"]: \"2us\" where configuration 2 of "
              "the grid has \"1us\"");
    json["configurations"][0]["values"].erase("costs.w");
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: configurations[0].values[\"costs.w\"]: missing");
    json = sweep_results_json(whole());
    json["grid_size"] = 6;
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: grid_size: 6 where the axes make 4 configurations");
    json = sweep_results_json(whole());
    json["configurations"][1]["bubble_ratio"] = 1.5;
    EXPECT_EQ(from_json_error(json.dump()),
              "r.json: configurations[1].bubble_ratio: 1.5 is not a ratio from 0 to 1");
    // Values are read only as a check: a file without them reads as before.
    json = sweep_results_json(whole());
    for (auto& configuration : json["configurations"])
        configuration.erase("values");
    EXPECT_EQ(sweep_results_json(sweep_results_from_json(json.dump(), "r.json")),
              sweep_results_json(whole()));
}

// A configuration too large for the machine's memory says so in the file, so that `merge` can
// tell a grid of such configurations (exit 3) from one of wrong ones (exit 2).
TEST(SweepResults, AConfigurationTooLargeForMemoryIsReadBackAsSuch) {
    SweepResults results = whole();
    SweepPoint& unsimulated = results.points.back();
    ASSERT_FALSE(unsimulated.simulated());
    unsimulated.too_large = true;
    const nlohmann::ordered_json json = sweep_results_json(results);
    EXPECT_EQ(json["configurations"][3]["too_large"], true);
    EXPECT_TRUE(sweep_results_from_json(json.dump(), "r.json").points.back().too_large);
    EXPECT_FALSE(sweep_results_from_json(sweep_results_json(whole()).dump(), "r.json")
                     .points.back()
                     .too_large);
}

// The global batch decides every configuration's microbatch size, so it travels with the
// results; a file written before it did had none.
TEST(SweepResults, TheGlobalBatchIsReadBackAndAbsentIsNone) {
    SweepResults results = whole();
    results.global_batch = 64;
    nlohmann::ordered_json json = sweep_results_json(results);
    EXPECT_EQ(json["global_batch"], 64);
    EXPECT_EQ(sweep_results_from_json(json.dump(), "r.json").global_batch, 64);
    EXPECT_TRUE(sweep_results_json(whole())["global_batch"].is_null());
    json.erase("global_batch");
    EXPECT_EQ(sweep_results_from_json(json.dump(), "r.json").global_batch, 0);
}

// Ranked per sequence, each configuration's step is divided by its m x microbatch size, so the
// size travels with it and a merge ranks the same; a file written before it did had 1.
TEST(SweepResults, EachMicrobatchSizeIsReadBackAndRankedPerSequence) {
    SweepResults results = whole();
    results.ranking = SweepRanking::per_sequence;
    for (SweepPoint& point : results.points)
        point.microbatch_size = point.index == 0 ? 2 : 1;  // GPipe 1us: 15 us over 8 sequences
    rank_sweep(results.points, results.ranking);
    EXPECT_EQ(ranked_indices(results), (std::vector<std::size_t>{0, 2, 1, 3}));
    nlohmann::ordered_json json = sweep_results_json(results);
    EXPECT_EQ(json["ranked_by"], "time per sequence");
    const SweepResults read = sweep_results_from_json(json.dump(), "r.json");
    EXPECT_EQ(read.ranking, SweepRanking::per_sequence);
    EXPECT_EQ(ranked_indices(read), (std::vector<std::size_t>{0, 2, 1, 3}));
    EXPECT_EQ(read.points[0].microbatch_size, 2);
    json["configurations"][0].erase("microbatch_size");  // configuration 0's
    for (const SweepPoint& point : sweep_results_from_json(json.dump(), "r.json").points)
        EXPECT_EQ(point.microbatch_size, 1);
}

TEST(SweepResults, CsvIsOneLinePerConfigurationInRankedOrder) {
    EXPECT_EQ(sweep_results_csv(whole()),
              "place,pareto,index,schedule.kind,costs.w,schedule,pp,v,m,microbatch_size,"
              "step_time_ns,bubble_ratio,peak_memory_bytes,peak_memory_rank,error\n"
              "1,1,2,1F1B,1us,1F1B,2,1,4,1,15000,0.250000,1048576,0,\n"
              "2,0,0,GPipe,1us,GPipe,2,1,4,1,15000,0.250000,2097152,0,\n"
              "3,1,1,GPipe,2us,GPipe,2,1,4,1,21000,0.125000,524288,1,\n"
              ",,3,1F1B,2us,,,,,,,,,,\"hangs at step 3, \"\"RECV_F\"\"\"\n");
}

TEST(SweepResults, TableShowsTheTopThenWhatWasLeftOut) {
    EXPECT_EQ(sweep_results_table(whole(), 2),
              "place  front  schedule  pp  v  m  costs.w  step time  bubble  peak memory (rank)\n"
              "1      *      1F1B      2   1  4  1us      15.000 us  25.0%   1.0 MiB (0)\n"
              "2             GPipe     2   1  4  1us      15.000 us  25.0%   2.0 MiB (0)\n"
              "... 1 more (all of them in --csv and --json)\n"
              "1 configuration was not simulated, e.g. configuration 3 (schedule.kind=1F1B, "
              "costs.w=2us): hangs at step 3, \"RECV_F\"\n");
}

TEST(SweepResults, SubjectNamesTheScheduleAndTheOtherAxes) {
    const SweepResults results = whole();
    EXPECT_EQ(sweep_point_subject(results, results.points[0]), "1F1B pp=2 v=1 m=4 (costs.w=1us)");
    EXPECT_EQ(sweep_point_subject(results, results.points[3]),
              "configuration 3 (schedule.kind=1F1B, costs.w=2us)");
}

TEST(SweepResults, ShardsMergeIntoExactlyTheWholeGrid) {
    const SweepResults merged =
        merge_sweep_results({{"two.json", results_of({1, 3}, SweepShard{2, 2})},
                             {"one.json", results_of({0, 2}, SweepShard{1, 2})}});
    EXPECT_EQ(merged.shard.index, 1u);
    EXPECT_EQ(merged.shard.count, 1u);
    EXPECT_EQ(ranked_indices(merged), (std::vector<std::size_t>{2, 0, 1, 3}));
    EXPECT_EQ(sweep_results_json(merged), sweep_results_json(whole()));
}

TEST(SweepResults, ShardsThatDoNotMakeAWholeAreRefusedByName) {
    const SweepResults one = results_of({0, 2}, SweepShard{1, 2});
    const SweepResults two = results_of({1, 3}, SweepShard{2, 2});
    EXPECT_EQ(merge_error({{"one.json", one}}), "shard 2/2 missing");
    EXPECT_EQ(merge_error({{"one.json", one}, {"again.json", one}, {"two.json", two}}),
              "one.json and again.json are both shard 1/2");
    SweepResults other = two;
    other.experiment_toml = "[schedule]\npp = 4\n";
    EXPECT_EQ(merge_error({{"one.json", one}, {"other.json", other}}),
              "other.json is not a shard of the same sweep as one.json: they differ in experiment");
    other = two;
    other.axes[1].values = {"\"1us\"", "\"3us\""};
    other.shard.count = 3;
    EXPECT_EQ(merge_error({{"one.json", one}, {"other.json", other}}),
              "other.json is not a shard of the same sweep as one.json: they differ in axes and "
              "shard count (3 against 2)");
    other = two;
    other.global_batch = 128;
    EXPECT_EQ(merge_error({{"one.json", one}, {"other.json", other}}),
              "other.json is not a shard of the same sweep as one.json: they differ in global "
              "batch (128 sequences against none)");
    SweepResults misplaced = results_of({0, 1}, SweepShard{1, 2});
    EXPECT_EQ(merge_error({{"one.json", misplaced}, {"two.json", two}}),
              "one.json: configuration 1 does not belong to shard 1/2");
    EXPECT_EQ(merge_error({{"one.json", results_of({0}, SweepShard{1, 2})}, {"two.json", two}}),
              "one.json: shard 1/2 holds 1 of its 2 configurations");
    EXPECT_THROW(merge_sweep_results({}), std::invalid_argument);
}

}  // namespace
}  // namespace pipelens::sim
