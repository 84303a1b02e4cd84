// The schedules pipelens wrote for PyTorch to run (tests/data/pytorch/pipelens_schedules/) and
// what PyTorch 2.11 made of them (tests/data/pytorch/pipelens_runs/results.json, written on the
// GPU machine by scripts/device/pytorch_fixtures.py part d). The committed CSVs must be what
// today's `pipelens schedule` writes with the commands in that folder's README, or the results
// would judge files pipelens no longer makes; and the results must say PyTorch's runtime ran
// each of them to the gradients of its own Schedule1F1B, except the lowering without the FSDP
// actions, where PyTorch skips the 1/m gradient scaling that REDUCE_GRAD does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(PIPELENS_SOURCE_DIR) / "tests" / "data" / "pytorch";
const fs::path kSchedules = kData / "pipelens_schedules";

// The README's command lines, as typed from the repository root with D= the folder.
std::vector<std::string> readme_commands() {
    std::ifstream readme(kSchedules / "README");
    std::vector<std::string> commands;
    const std::string prefix = "build/app/cli/pipelens schedule ";
    for (std::string line; std::getline(readme, line);) {
        const auto start = line.find(prefix);
        if (start != std::string::npos)
            commands.push_back(line.substr(start + prefix.size()));
    }
    return commands;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

TEST(PyTorchRanPipelensSchedules, TheCommittedCsvsAreWhatPipelensWritesToday) {
    const std::vector<std::string> commands = readme_commands();
    ASSERT_EQ(commands.size(), 9u) << "the README lists the commands that made the CSVs";
    const fs::path fresh =
        fs::temp_directory_path() / ("pipelens_pytorch_ran_" + std::to_string(::getpid()));
    fs::remove_all(fresh);
    fs::create_directories(fresh);
    for (const std::string& arguments : commands) {
        const auto result = testing::run_pipelens("schedule " + replaced(arguments, "$D", fresh));
        ASSERT_EQ(result.exit_code, 0) << arguments << "\n" << result.err;
    }
    std::set<std::string> committed;
    for (const auto& entry : fs::directory_iterator(kSchedules))
        if (entry.path().extension() == ".csv")
            committed.insert(entry.path().filename().string());
    std::set<std::string> written;
    for (const auto& entry : fs::directory_iterator(fresh)) {
        const std::string name = entry.path().filename().string();
        written.insert(name);
        EXPECT_EQ(testing::read_file(entry.path()), testing::read_file(kSchedules / name)) << name;
    }
    EXPECT_EQ(written, committed);
    fs::remove_all(fresh);
}

TEST(PyTorchRanPipelensSchedules, PyTorchsRuntimeMatchedItsOwn1F1BOnEveryCsv) {
    std::ifstream file(kData / "pipelens_runs" / "results.json");
    if (!file)
        GTEST_SKIP() << "no PyTorch-written fixtures yet (made by "
                        "scripts/device/pytorch_fixtures.py on the GPU machine)";
    const nlohmann::json runs = nlohmann::json::parse(file);
    ASSERT_TRUE(runs["reference"]["ok"].get<bool>()) << runs["reference"].dump();
    EXPECT_EQ(runs["reference"]["schedule"], "Schedule1F1B");
    std::set<std::string> judged;
    for (const nlohmann::json& run : runs["results"]) {
        const std::string csv = run["csv"];
        judged.insert(csv);
        ASSERT_TRUE(run["ok"].get<bool>()) << csv << ": " << run["error"].dump();
        EXPECT_TRUE(run["losses_match"].get<bool>()) << csv;
        if (csv == "ZeroBubbleH2_pp4_v1_m8_comms_nofsdp.csv") {
            // No REDUCE_GRAD, so PyTorch never divides by the 8 microbatches.
            EXPECT_FALSE(run["grads_match"].get<bool>()) << csv;
            EXPECT_EQ(run["grad_norm_ratio"].get<double>(), 8.0) << csv;
        } else {
            EXPECT_TRUE(run["grads_match"].get<bool>()) << csv;
            EXPECT_EQ(run["max_abs_grad_diff"].get<double>(), 0.0) << csv;
        }
    }
    std::set<std::string> committed;
    for (const auto& entry : fs::directory_iterator(kSchedules))
        if (entry.path().extension() == ".csv")
            committed.insert(entry.path().filename().string());
    EXPECT_EQ(judged, committed) << "results.json judges exactly the committed CSVs";
}

}  // namespace
}  // namespace pipelens
