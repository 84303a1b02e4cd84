// `pipelens calibrate` on real runs, as a user runs it: profile a run, calibrate from it and
// simulate another stage count; calibrate from repeats of one configuration; take the real run
// and not a later simulation, saying what I and W rest on; refuse a profile whose weight
// gradient takes longer than the whole backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;

using testing::run_pipelens;

TEST(RunCli, ProfileCalibrateAndSimulateAnotherStageCount) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    for (const std::string transport : {"", " --transport gloo --nproc 2"}) {
        SCOPED_TRACE(transport);
        const auto trace = fresh_trace("profile");
        auto result = run_pipelens(
            "run --schedule 1F1B --pp 2 --m 4 --model mlp --layers 4 --hidden 256 --no-reference "
            "--steps 5 --profile --out " +
            trace.string() + transport);
        ASSERT_EQ(result.exit_code, 0) << result.err;
        testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
        // Every layer and stage has its four compute times, timed after warm-up at least
        // three times; every stage its OVERLAP_F_B; the link three message sizes.
        EXPECT_EQ(raw.value("SELECT count(DISTINCT layer) FROM profile WHERE layer >= 0 AND "
                            "quantity IN ('F', 'I', 'W', 'B') AND samples >= 3"),
                  "4");
        EXPECT_EQ(raw.value("SELECT count(*) FROM profile WHERE layer = -1 AND stage >= 0 AND "
                            "quantity = 'OVERLAP_F_B' AND low <= median AND median <= high"),
                  "2");
        // ... and what it saved against F and B timed beside it, in as many pairs.
        EXPECT_EQ(raw.value("SELECT count(*) FROM profile p WHERE layer = -1 AND stage >= 0 AND "
                            "quantity = 'OVERLAP_F_B_saved' AND low <= median AND median <= high "
                            "AND samples = (SELECT samples FROM profile o WHERE o.layer = -1 AND "
                            "o.stage = p.stage AND o.quantity = 'OVERLAP_F_B')"),
                  "2");
        EXPECT_EQ(raw.value("SELECT count(DISTINCT bytes) || ' ' || min(rank) || ' ' || "
                            "min(peer) FROM profile WHERE quantity = 'link'"),
                  "3 0 1");
        EXPECT_EQ(raw.value("SELECT held_bytes FROM (SELECT median AS held_bytes FROM profile "
                            "WHERE layer = 1 AND quantity = 'held_bytes')"),
                  std::to_string(2 * 8 * 256 * 4));  // two [8, 256] floats per microbatch
        // What an I leaves for its W: a layer's two output gradients ([8, 256] floats each);
        // the first stage's I computes nothing and keeps only the gradient it was given.
        EXPECT_EQ(raw.value("SELECT group_concat(median, ' ') FROM (SELECT median FROM profile "
                            "WHERE quantity = 'input_kept_bytes' AND layer >= 1 ORDER BY layer)"),
                  "16384 16384 16384");
        EXPECT_EQ(raw.value("SELECT median FROM profile WHERE quantity = 'input_kept_bytes' AND "
                            "stage = 0 AND layer = -1"),
                  std::to_string(8 * 256 * 4));
        const std::string calibrated = trace.string() + ".toml";
        result = run_pipelens("calibrate " + trace.string() + " --out " + calibrated);
        ASSERT_EQ(result.exit_code, 0) << result.err;
        EXPECT_NE(result.out.find("from the run's profile: 4 layers, model mlp"), std::string::npos)
            << result.out;
        // The profile's link beside the run's own transfers of one microbatch's activations
        // (8 rows of 256 floats), so a pipeline that delivers more slowly than the link shows.
        // (Five steps: a transfer counts only where its receiver was seen waiting from before
        // the send, which a loaded machine's single step may not show.)
        EXPECT_NE(result.out.find(" for 8.0 KiB (median of "), std::string::npos) << result.out;
        result = run_pipelens("calibrate " + trace.string() + " --json");
        ASSERT_EQ(result.exit_code, 0) << result.err;
        const auto json = nlohmann::json::parse(result.out);
        EXPECT_EQ(json.at("run_delivery_bytes"), 8 * 256 * 4);
        EXPECT_GT(json.at("transfer_samples").get<int>(), 0);
        // Threads and processes of one host are placed on one clock exactly (run.md, One
        // clock): no RECV ends before its SEND began, so every delivery takes time.
        EXPECT_EQ(raw.value("SELECT coalesce(max(clock_uncertainty_ns), 0) FROM ranks"), "0");
        EXPECT_GT(json.at("run_delivery_ns").get<std::int64_t>(), 0);
        EXPECT_GE(json.at("link_delivery_ns").get<std::int64_t>(),
                  json.at("link_latency_ns").get<std::int64_t>());
        // Gloo sends once the receive is posted, threads hand over at once: the calibration
        // simulates the transfers as the run's transport made them.
        std::ifstream file(calibrated);
        const std::string toml{std::istreambuf_iterator<char>(file), {}};
        EXPECT_EQ(toml.find("rendezvous = true") != std::string::npos, !transport.empty()) << toml;
        // pipelens' runtime allocates a receive's buffers when it posts it, on every transport.
        EXPECT_NE(toml.find("posted_receive_buffers = true"), std::string::npos) << toml;
        // A gloo send writes its message on the rank's thread and a thread's hand-over copies
        // it there, which the next computation waits for: charged on both transports.
        EXPECT_NE(toml.find("send_issue = '"), std::string::npos) << toml;
        EXPECT_TRUE(json.at("send_issue_charged").get<bool>());
        EXPECT_GT(json.at("send_issue_ns").get<std::int64_t>(), 0);
        // The runs' noise: each action over its step's mean for its stage and kind (a profiled
        // calibration's costs are means); its draws give the median step `simulate` predicts
        // from the written file.
        const auto& jitter = json.at("jitter");
        const auto quantiles = jitter.at("quantiles").get<std::vector<double>>();
        ASSERT_GE(quantiles.size(), 2u);
        EXPECT_LE(quantiles.size(), 101u);
        EXPECT_TRUE(std::is_sorted(quantiles.begin(), quantiles.end()));
        EXPECT_EQ(jitter.at("centre"), "mean");
        EXPECT_EQ(jitter.at("draws"), 1000);
        EXPECT_LE(jitter.at("p10_step_time_ns"), jitter.at("median_step_time_ns"));
        EXPECT_LE(jitter.at("median_step_time_ns"), jitter.at("p90_step_time_ns"));
        EXPECT_NE(toml.find("[jitter]"), std::string::npos) << toml;
        result = run_pipelens("simulate " + calibrated + " --json");
        ASSERT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(nlohmann::json::parse(result.out).at("predicted_step_time_ns"),
                  jitter.at("median_step_time_ns"));
        for (const std::string other :
             {"--schedule Interleaved1F1B --v 2", "--schedule 1F1B --pp 4", "--m 16",
              "--schedule ZBVZeroBubble --v 2"}) {
            result = run_pipelens("simulate " + calibrated + " " + other);
            EXPECT_EQ(result.exit_code, 0) << other << ": " << result.err;
        }
    }
}

// Repeats of one configuration calibrate together (medians over the runs); a run of another
// configuration is refused, naming both.
TEST(RunCli, CalibrateTakesTheMediansOverRepeatedRuns) {
    const auto trace = fresh_trace("profile_repeats");
    const auto run = [&](int microbatches) {
        return "run --schedule 1F1B --pp 2 --m " + std::to_string(microbatches) +
               " --batch 64 --model mlp --layers 4 --hidden 64 --no-reference --out " +
               trace.string();
    };
    for (int repeat = 0; repeat < 2; ++repeat) {
        const auto result = run_pipelens(run(4) + " --profile");
        ASSERT_EQ(result.exit_code, 0) << result.err;
    }
    auto result = run_pipelens("calibrate " + trace.string() + " --run 1,2 --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["run_ids"], nlohmann::json::parse("[1, 2]"));
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    EXPECT_EQ(std::to_string(json["measured_step_time_ns"].get<std::int64_t>()),
              raw.value("SELECT max(step_time_ns) FROM runs"));  // the upper middle of two
    result = run_pipelens("calibrate " + trace.string() + " --run 1 --run 2");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("calibrated from runs 1, 2 (1F1B pp=2 v=1 m=4)\n  from the median "
                              "of the runs' profiles: 4 layers"),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("(median of 2 runs)"), std::string::npos) << result.out;

    ASSERT_EQ(run_pipelens(run(8)).exit_code, 0);
    result = run_pipelens("calibrate " + trace.string() + " --run 1,3");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                              ": run 3 (1F1B pp=2 v=1 m=8) is not configured as run 1 (1F1B pp=2 "
                              "v=1 m=4): calibrate takes repeats of one configuration\n");
    // Of one shape but another seed: the setting that differs is named.
    ASSERT_EQ(run_pipelens(run(4) + " --seed 5").exit_code, 0);
    result = run_pipelens("calibrate " + trace.string() + " --run 1,4");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                              ": run 4 (1F1B pp=2 v=1 m=4) is not configured as run 1 (1F1B pp=2 "
                              "v=1 m=4): calibrate takes repeats of one configuration ([model] "
                              "seed is 5 where run 1 has 0)\n");
}

// A real run, then a simulation recorded after it in the same trace: calibrate takes the real
// one, and as it ran no profile, says that its I and W are B's halves by assumption.
TEST(RunCli, CalibrateTakesTheRealRunNotALaterSimulationAndStatesItsAssumption) {
    const auto trace = fresh_trace("calibrate_real_then_sim");
    auto result = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --model mlp --layers 4 --no-reference --out " +
        trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    result = run_pipelens("simulate --schedule GPipe --pp 2 --m 4 --out " + trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    result = run_pipelens("calibrate " + trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.rfind("calibrated from run 1 (1F1B pp=2 v=1 m=4)\n", 0), 0u) << result.out;
    EXPECT_NE(result.out.find("\n  assumption: I and W not measured on stages 0, 1 (no profile, "
                              "and the run's backward ran whole): B is split by assumption, I = "
                              "B / 2, W = B - I; predictions of schedules that split the "
                              "backward (the zero-bubble kinds) rest on that split; `pipelens "
                              "run --profile` measures it\n"),
              std::string::npos)
        << result.out;
    result = run_pipelens("calibrate " + trace.string() + " --run 2");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                              ": run 2 (sim GPipe pp=2 v=1 m=4) is a simulation, and a simulation "
                              "measures nothing: calibrate takes real runs (this trace's: 1)\n");
}

// Without a profile the calibrated experiment still carries the run's own [model] and [run]
// (it once wrote the defaults, batch 32 and no layers, so `pipelens run` of it ran another
// model); and a run whose recorded configuration does not read back is refused, as with one.
TEST(RunCli, CalibrateWithoutAProfileKeepsTheRunsModelAndRefusesAnUnreadableConfiguration) {
    const auto trace = fresh_trace("calibrate_unprofiled_model");
    const auto experiment = trace.parent_path() / "calibrate_unprofiled_model.toml";
    auto result = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --model mlp --hidden 48 --layers 4 --batch 16 "
        "--no-reference --out " +
        trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    result = run_pipelens("calibrate " + trace.string() + " --out " + experiment.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string written = testing::read_file(experiment);
    const std::string model = written.substr(written.find("\n[model]\n"));
    EXPECT_NE(model.find("\nbatch_size = 16\n"), std::string::npos) << model;
    EXPECT_NE(model.find("\nhidden = 48\n"), std::string::npos) << model;
    EXPECT_NE(model.find("\nlayers = 4\n"), std::string::npos) << model;

    // A finished run's header naming a million microbatches for its 4 is damage, named with the
    // file: calibrate once simulated the million (30 s, 1.5 GB) and exited 0 with nonsense, and
    // the critical path's refusal named neither the file nor the run.
    const auto damaged = trace.parent_path() / "calibrate_unprofiled_model_m.db";
    std::filesystem::copy_file(trace, damaged, std::filesystem::copy_options::overwrite_existing);
    ASSERT_EQ(testing::edit_trace(damaged, "UPDATE runs SET m = 1000000"), 1);
    const std::string header =
        "pipelens: " + damaged.string() +
        ": trace is corrupt: run 1 is finished with m = 1000000, but its 32 actions name "
        "microbatches 0 to 3 only\n";
    for (const std::string& command :
         {"calibrate " + damaged.string(), "summary " + damaged.string() + " --critical-path"}) {
        result = run_pipelens(command);
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, header) << command;
    }

    ASSERT_EQ(testing::edit_trace(trace, "UPDATE runs SET config = 'not toml at all ['"), 1);
    result = run_pipelens("calibrate " + trace.string() + " --out " + experiment.string());
    EXPECT_EQ(result.exit_code, 2) << result.out;
    EXPECT_NE(result.err.find("run 1: its recorded configuration does not read back"),
              std::string::npos)
        << result.err;
}

// A profile whose W is above its B (here a real profile's stage-1 W figures made 100x, every
// repetition alike, so no spread of theirs explains it) cannot be fitted: calibrate exits 1
// naming the stage and both figures, and writes no experiment.
// DualPipeV splits some stages' backward into I and W and runs others whole: a stage that ran B
// keeps its measured B (the median over the steps of each step's median, the upper middle of
// an even count), one that never did gets I + W. Writing I + W everywhere once put DualPipeV's
// in-sample step 8 % long.
TEST(RunCli, CalibrateKeepsEachStagesMeasuredBackward) {
    const auto trace = fresh_trace("calibrate_mixed_backward");
    constexpr int kSteps = 3;
    ASSERT_EQ(run_pipelens("run --schedule DualPipeV --v 2 --pp 2 --m 4 --model mlp --steps " +
                           std::to_string(kSteps) + " --warmup 0 --out " + trace.string())
                  .exit_code,
              0);
    const auto result = run_pipelens("calibrate " + trace.string() + " --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    const auto upper_median = [](std::vector<std::int64_t> values) {
        std::sort(values.begin(), values.end());
        return values[values.size() / 2];
    };
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    int whole = 0, split = 0;
    for (int stage = 0; stage < 4; ++stage) {
        SCOPED_TRACE(stage);
        std::vector<std::int64_t> durations;
        for (const std::string& row :
             raw.rows("SELECT end_ns - start_ns FROM actions WHERE kind = 3 "
                      "AND stage = " +
                      std::to_string(stage) + " ORDER BY start_ns"))
            durations.push_back(std::stoll(row));
        const auto b = json["b_ns"][stage].get<std::int64_t>();
        if (durations.empty()) {
            ++split;
            EXPECT_EQ(b, json["i_ns"][stage].get<std::int64_t>() +
                             json["w_ns"][stage].get<std::int64_t>());
            continue;
        }
        ++whole;
        ASSERT_EQ(durations.size() % kSteps, 0u);
        const std::size_t per_step = durations.size() / kSteps;  // steps follow one another
        std::vector<std::int64_t> step_medians;
        for (int step = 0; step < kSteps; ++step)
            step_medians.push_back(upper_median(std::vector<std::int64_t>(
                durations.begin() + step * per_step, durations.begin() + (step + 1) * per_step)));
        EXPECT_EQ(b, upper_median(step_medians));
    }
    EXPECT_GT(whole, 0);
    EXPECT_GT(split, 0);
    // Without a profile nothing sizes the tensors: the peak is measured, not compared with 0 B.
    ASSERT_EQ(json["peak_memory_bytes"].size(), 2u);
    EXPECT_TRUE(json["peak_memory_bytes"][0]["simulated"].is_null());
    const auto text = run_pipelens("calibrate " + trace.string());
    EXPECT_NE(text.out.find("(not simulated: without a profile the costs hold no tensor sizes)"),
              std::string::npos)
        << text.out;
    EXPECT_EQ(text.out.find(", simulated 0 B"), std::string::npos) << text.out;
}

TEST(RunCli, CalibrateRefusesAProfileWhoseWeightGradientIsAboveTheWholeBackward) {
    const auto trace = fresh_trace("calibrate_w_above_b");
    auto result = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --model mlp --layers 4 --hidden 256 --no-reference "
        "--profile --out " +
        trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    ASSERT_GT(testing::edit_trace(trace,
                                  "UPDATE profile SET median = 100 * median, low = 100 * median, "
                                  "high = 100 * median WHERE stage = 1 AND quantity = 'W'"),
              0);
    const std::string out = trace.string() + ".toml";
    result = run_pipelens("calibrate " + trace.string() + " --out " + out);
    EXPECT_EQ(result.exit_code, 1) << result.out;
    const std::string prefix = "pipelens: " + trace.string() + ": run 1: stage 1 W is ";
    EXPECT_EQ(result.err.rfind(prefix, 0), 0u) << result.err;
    EXPECT_NE(result.err.find(", above its whole backward B "), std::string::npos) << result.err;
    EXPECT_NE(result.err.find(": W is a part of B and cannot take longer than all of it\n"),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find(": the profile times each figure a few times after the step, and "
                              "on cores busy with other work its figures stray; profile the run "
                              "again when the cores are free, or calibrate from the median of "
                              "several runs (--run N, repeated)\n"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace pipelens
