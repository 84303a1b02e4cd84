// `pipelens run --torch-profile DIR`: LibTorch's profile of each rank's recorded steps, written
// as Chrome traces whose actions are marked as PyTorch's pipelining marks its own, so that
// `pipelens import` reads them back as the same run; and the refusal where ranks are threads.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

nlohmann::json read_json(const std::filesystem::path& path) {
    std::ifstream file(path);
    return nlohmann::json::parse(file);
}

struct Range {
    double start_us = 0;
    double end_us = 0;
    std::int64_t thread = 0;
};

// The profile's "PP:<action>" ranges, by name, in time order.
std::map<std::string, std::vector<Range>> action_ranges(const nlohmann::json& profile) {
    std::map<std::string, std::vector<Range>> ranges;
    for (const auto& event : profile["traceEvents"]) {
        const std::string name = event["name"];
        if (name.rfind("PP:", 0) == 0)
            ranges[name].push_back({event["ts"].get<double>(),
                                    event["ts"].get<double>() + event["dur"].get<double>(),
                                    event["tid"].get<std::int64_t>()});
    }
    return ranges;
}

// Operators named `op` that lie inside one of `ranges` on the same thread.
int operators_inside(const nlohmann::json& profile, const std::string& op,
                     const std::vector<Range>& ranges) {
    int inside = 0;
    for (const auto& event : profile["traceEvents"]) {
        if (event["name"] != op)
            continue;
        const double start = event["ts"].get<double>();
        const double end = start + event["dur"].get<double>();
        for (const Range& range : ranges)
            if (event["tid"].get<std::int64_t>() == range.thread && start >= range.start_us &&
                end <= range.end_us)
                ++inside;
    }
    return inside;
}

TEST(RunCliGloo, TorchProfileMarksEachActionOfTheRecordedStepsAndImportsAsTheSameRun) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const auto directory = testing::process_temp_path("torch_profile");
    std::filesystem::remove_all(directory);
    const auto trace = testing::fresh_trace("torch_profile_run");
    const auto run = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --model mlp --layers 4 --hidden 32 --batch 16 "
        "--steps 2 --warmup 1 --transport gloo --nproc 2 --json --torch-profile " +
        directory.string() + " --out " + trace.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto report = nlohmann::json::parse(run.out);
    const std::vector<std::string> files = {(directory / "rank0.json").string(),
                                            (directory / "rank1.json").string()};
    EXPECT_EQ(report["torch_profiles"], files);

    for (int rank = 0; rank < 2; ++rank) {
        const nlohmann::json profile = read_json(files[rank]);
        EXPECT_EQ(profile["distributedInfo"],
                  nlohmann::json({{"backend", "gloo"}, {"rank", rank}, {"world_size", 2}}));
        const auto ranges = action_ranges(profile);
        // 1F1B pp=2 m=4: each rank runs 4 F, 4 B, 4 sends and 4 receives a step; the two
        // recorded steps are profiled, the warm-up step is not.
        std::size_t marked = 0;
        for (const auto& [name, list] : ranges)
            marked += list.size();
        EXPECT_EQ(marked, 32u) << files[rank];
        const std::string forward = "PP:" + std::to_string(rank) + "F0";
        ASSERT_EQ(ranges.count(forward), 1u) << files[rank];
        EXPECT_EQ(ranges.at(forward).size(), 2u);
        // Its `mlp` stage (two of the model's four layers) runs four linear products (addmm) a
        // forward, all inside the forward's range: 8 over the two steps.
        EXPECT_EQ(operators_inside(profile, "aten::addmm", ranges.at(forward)), 8) << files[rank];
    }

    const auto imported = testing::fresh_trace("torch_profile_import");
    const auto import =
        run_pipelens("import " + files[0] + " " + files[1] + " --out " + imported.string());
    ASSERT_EQ(import.exit_code, 0) << import.err;
    const auto summary =
        nlohmann::json::parse(run_pipelens("summary --json " + imported.string()).out)["runs"][0];
    EXPECT_EQ(summary["schedule"], "1F1B");
    EXPECT_EQ(summary["pp"], 2);
    EXPECT_EQ(summary["m"], 4);
    EXPECT_EQ(summary["actions"], 32);  // one step: the last, as import takes by default
    // No timing is compared: the import's step is the last one, the report's figures are medians
    // over both, and two steps of a loaded machine differ by more than the markers' placement
    // (which the operators inside each forward's range check).
}

TEST(RunCli, TorchProfileRefusesRanksThatAreThreadsOfOneProcess) {
    const auto directory = testing::process_temp_path("torch_profile_threads");
    std::filesystem::remove_all(directory);
    const auto run = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp --torch-profile " +
                                  directory.string());
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("--torch-profile: LibTorch's profiler runs once per process, and "
                           "--transport local runs the 2 ranks as threads of one; give "
                           "--transport gloo --nproc 2"),
              std::string::npos)
        << run.err;
    EXPECT_FALSE(std::filesystem::exists(directory));
}

TEST(RunCli, TorchProfileIntoAFileIsRefusedNamingIt) {
    const auto file = testing::process_temp_path("torch_profile_a_file");
    std::ofstream(file) << "not a directory\n";
    const auto run = run_pipelens("run --schedule 1F1B --pp 1 --m 2 --model mlp --torch-profile " +
                                  file.string());
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("--torch-profile: " + file.string() + " is not a directory"),
              std::string::npos)
        << run.err;
}

TEST(RunCli, TorchProfileOfOneRankHoldingTwoStages) {
    const auto parent = testing::process_temp_path("torch_profile_one_rank");
    std::filesystem::remove_all(parent);
    const auto directory = parent / "profiles" / "empty";  // made with its parents
    const auto run = run_pipelens(
        "run --schedule Interleaved1F1B --pp 1 --v 2 --m 4 --model mlp --layers 4 --hidden 32 "
        "--batch 16 --torch-profile " +
        directory.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("LibTorch's profile of the recorded steps, per rank: " +
                           (directory / "rank0.json").string()),
              std::string::npos)
        << run.out;
    const auto ranges = action_ranges(read_json(directory / "rank0.json"));
    std::size_t marked = 0;
    for (const auto& [name, list] : ranges)
        marked += list.size();
    EXPECT_EQ(marked, 16u);  // 2 stages x 4 microbatches x (F, B), one recorded step
    EXPECT_EQ(ranges.count("PP:1B3"), 1u);
}

// A profile that cannot be written (a file size limit standing for a full disk) is said by its
// rank and neither listed as written nor left behind cut off; the run's report is still whole.
TEST(RunCli, ATorchProfileThatCannotBeWrittenIsNotListedOrLeftBehind) {
    const auto directory = testing::process_temp_path("torch_profile_full");
    std::filesystem::remove_all(directory);
    const auto run = testing::run_command(
        "sh -c \"ulimit -f 16; trap '' XFSZ; exec " + std::string(PIPELENS_BINARY) +
        " run --schedule Interleaved1F1B --pp 1 --v 2 --m 4 --model mlp --layers 4 --hidden 32 "
        "--batch 16 --torch-profile " +
        directory.string() + "\"");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("pipelens: rank 0: --torch-profile: cannot write " +
                           (directory / "rank0.json").string() + "\n"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(run.out.find("LibTorch's profile"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("\nloss "), std::string::npos) << run.out;
    EXPECT_FALSE(std::filesystem::exists(directory / "rank0.json"));
    std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace pipelens
