// `pipelens calibrate` as a user runs it on traces that need no LibTorch: imported real runs and
// simulations side by side. Only real runs are calibrated from (the latest by default), a trace
// of simulations alone is refused naming its runs, and a run without a profile says what its
// I/W split rests on, in the text and the JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::fresh_trace;
using testing::run_pipelens;

std::string data(const std::string& path) {
    return std::string(PIPELENS_SOURCE_DIR) + "/tests/data/" + path;
}

inline constexpr const char* kAssumption =
    "I and W not measured on stages 0, 1 (no profile, and the run's backward ran whole): B is "
    "split by assumption, I = B / 2, W = B - I; predictions of schedules that split the backward "
    "(the zero-bubble kinds) rest on that split; `pipelens run --profile` measures it";

// A real run imported from PyTorch profiler traces, then PyTorch's own schedule dump (unit steps:
// its simulation, recorded as one): the default is the real run, not the later simulation.
TEST(CalibrateCli, TakesTheLatestRealRunNotALaterImportedSimulation) {
    const auto trace = fresh_trace("calibrate_cli_default");
    auto result = run_pipelens("import " + data("pytorch_profiler/runtime_1f1b_rank0.json") + " " +
                               data("pytorch_profiler/runtime_1f1b_rank1.json.gz") + " --out " +
                               trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    result = run_pipelens("import " + data("pipelining/1f1b_pp2_m4_comms.json") + " --out " +
                          trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;

    result = run_pipelens("calibrate " + trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.rfind("calibrated from run 1 (1F1B pp=2 v=1 m=2)\n", 0), 0u) << result.out;
    EXPECT_NE(result.out.find(std::string("\n  assumption: ") + kAssumption + "\n"),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("% in sample (the costs were fitted to this run)\n"),
              std::string::npos)
        << result.out;
    // How much the ranks computed side by side, measured and simulated: shares of their
    // computing time.
    const auto figures =
        nlohmann::json::parse(run_pipelens("calibrate " + trace.string() + " --json").out);
    for (const char* side : {"measured", "simulated"}) {
        const double share = figures["computing_side_by_side"][side].get<double>();
        EXPECT_GE(share, 0.0) << side;
        EXPECT_LE(share, 1.0) << side;
    }

    // A prediction from the calibrated file carries the assumption in its title.
    const std::string calibrated = trace.string() + ".toml";
    ASSERT_EQ(run_pipelens("calibrate " + trace.string() + " --out " + calibrated).exit_code, 0);
    result = run_pipelens("simulate " + calibrated + " --m 8");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("; no profile: I and W assumed, I = B / 2, W = B - I)\n"),
              std::string::npos)
        << result.out;
    std::filesystem::remove(calibrated);

    result = run_pipelens("calibrate --json " + trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["run_id"], 1);
    EXPECT_EQ(json["i_w_source"], "assumed");
    EXPECT_EQ(json["i_w_assumed_stages"], nlohmann::json::parse("[0, 1]"));
    EXPECT_EQ(json["i_w_assumption"], "I = B / 2, W = B - I");
    EXPECT_EQ(json["warnings"], nlohmann::json::array({kAssumption}));

    // Named explicitly, the simulation is still not a measurement.
    result = run_pipelens("calibrate " + trace.string() + " --run 2");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                              ": run 2 (sim 1F1B pp=2 v=1 m=4) is a simulation, and a simulation "
                              "measures nothing: calibrate takes real runs (this trace's: 1)\n");
    EXPECT_EQ(result.out, "");
}

// A rank whose records carry no memory (rank 1 of this profiler pair sampled none) was "measured
// 0 B"; it is not measured: "-", JSON null, as `summary` shows it.
TEST(CalibrateCli, ARankNothingSampledHasNoMeasuredPeakNotZero) {
    const auto trace = fresh_trace("calibrate_no_memory");
    ASSERT_EQ(
        run_pipelens("import " + data("pytorch_profiler/gpu_1f1b_rank0.json") + " " +
                     data("pytorch_profiler/gpu_1f1b_rank1.json") + " --out " + trace.string())
            .exit_code,
        0);
    const auto text = run_pipelens("calibrate " + trace.string());
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("  rank 1 peak memory: measured - (not simulated"), std::string::npos)
        << text.out;
    EXPECT_EQ(text.out.find("  rank 0 peak memory: measured - "), std::string::npos) << text.out;
    const auto json =
        nlohmann::json::parse(run_pipelens("calibrate " + trace.string() + " --json").out);
    ASSERT_EQ(json["peak_memory_bytes"].size(), 2u);
    EXPECT_GT(json["peak_memory_bytes"][0]["measured"].get<std::int64_t>(), 0);
    EXPECT_TRUE(json["peak_memory_bytes"][1]["measured"].is_null());
}

TEST(CalibrateCli, ATraceOfSimulationsAloneIsRefusedNamingItsRuns) {
    const auto trace = fresh_trace("calibrate_cli_simulations");
    for (const std::string schedule : {"GPipe", "1F1B"})
        ASSERT_EQ(run_pipelens("simulate --schedule " + schedule + " --pp 2 --m 4 --out " +
                               trace.string())
                      .exit_code,
                  0);
    const std::string out = trace.string() + ".toml";
    const auto result = run_pipelens("calibrate " + trace.string() + " --out " + out);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                              ": no real run to calibrate from: runs 1 (sim GPipe pp=2 v=1 m=4), "
                              "2 (sim 1F1B pp=2 v=1 m=4) are simulations, and a simulation "
                              "measures nothing; record a real run into this trace with "
                              "`pipelens run ... --out` (with --profile to measure I and W)\n");
    EXPECT_FALSE(std::filesystem::exists(out));
    // A run named twice would count twice in every median.
    const auto twice = run_pipelens("calibrate " + trace.string() + " --run 1,2,1");
    EXPECT_EQ(twice.exit_code, 2);
    EXPECT_EQ(twice.err,
              "pipelens: --run names run 1 twice; each run counts once in the medians\n");
    // A stray comma or an empty value names no run: refused, not read as the rest or as run 0.
    const auto stray = run_pipelens("calibrate " + trace.string() + " --run 1,");
    EXPECT_EQ(stray.exit_code, 2);
    EXPECT_EQ(stray.err,
              "pipelens calibrate: --run: '1,' has an empty entry (list runs as 1,2,3); see "
              "pipelens calibrate --help\n");
    const auto empty = run_pipelens("calibrate " + trace.string() + " --run ''");
    EXPECT_EQ(empty.exit_code, 2);
    EXPECT_EQ(empty.err,
              "pipelens calibrate: --run: an empty value names no run; see pipelens calibrate "
              "--help\n");
}

}  // namespace
}  // namespace pipelens
