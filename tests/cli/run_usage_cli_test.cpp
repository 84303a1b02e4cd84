// `pipelens run`'s bad options, each one clear line and exit 2 before any rank starts: process
// counts, timeouts (from a flag or an experiment file), models, batch splits and faults; over
// gloo, the launcher refuses once what every rank would.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

// A process count below 1 once meant "run here" without a word, and a zero timeout failed the
// first receive: both are refused saying what the value must be.
TEST(RunCli, NoProcessesAndNoTimeToWaitAreUsageErrors) {
    const auto processes = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --nproc -1");
    EXPECT_EQ(processes.exit_code, 2);
    EXPECT_EQ(processes.err,
              "pipelens run: --nproc: -1 is not a process count (1 or more); see pipelens run "
              "--help\n");
    const auto timeout = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --timeout 0");
    EXPECT_EQ(timeout.exit_code, 2);
    EXPECT_EQ(timeout.err,
              "pipelens: --timeout: 0 leaves no time to wait for another rank; give a positive "
              "duration, e.g. 10s\n");
    // Waits are timed in milliseconds: 500us (or a bare 3, 3 us) ran as 1 ms, said as 1 ms.
    const auto short_timeout = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --timeout 3");
    EXPECT_EQ(short_timeout.exit_code, 2);
    EXPECT_EQ(short_timeout.err,
              "pipelens: --timeout: 3 is under 1 ms, the finest a wait on another rank is timed (a "
              "bare number is microseconds); give e.g. 10s\n");
    // A file's [run] timeout too, for run alone: a simulation never waits with it.
    const auto file = testing::temp_file(
        "short_timeout.toml",
        "[schedule]\nkind = \"1F1B\"\npp = 2\nm = 4\n[run]\ntimeout = \"500us\"\n");
    EXPECT_EQ(run_pipelens("simulate " + file.string()).exit_code, 0);
    const auto from_file = run_pipelens("run " + file.string());
    EXPECT_EQ(from_file.exit_code, 2);
    EXPECT_EQ(from_file.err, "pipelens: " + file.string() +
                                 ": run.timeout: 500.000 us is under 1 ms, the finest a wait on "
                                 "another rank is timed; give e.g. \"10s\"\n");
}

TEST(RunCli, BadOptionsAreUsageErrors) {
    auto result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model resnet");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: run: unknown model 'resnet' (built-in: mlp, example, kwargs, "
              "transformer, tied, empty; or a TorchScript .pt file)\n");
    result = run_pipelens("run --schedule 1F1B --pp 2 --m 3 --batch 8");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: run: batch size 8 does not split into m=3 equal microbatches\n");
    // A dtype no stage can be cast to is refused before any rank starts (it failed every
    // rank's first forward and was recorded as a failed run).
    const auto trace = testing::process_temp_path("run_bad_fault_dtype.db");
    std::filesystem::remove(trace);
    result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --fault stage1=dtype:float16 --out " +
                          trace.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err.rfind("pipelens: run: --fault stage1=dtype:float16: unknown dtype "
                               "'float16': a fault casts to one of f32, bf16, f16, f64, i64, i32, "
                               "i16, i8, u8, b8, c64 (forms: ",
                               0),
              0u)
        << result.err;
    EXPECT_FALSE(std::filesystem::exists(trace));
    // A name PyTorch prints but no LibTorch build here makes tensors of is refused as early.
    for (const std::string dtype : {"u32", "f8e4m3fn"}) {
        result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --fault stage0=dtype:" + dtype +
                              " --out " + trace.string());
        EXPECT_EQ(result.exit_code, 2) << dtype;
        EXPECT_EQ(result.err.rfind("pipelens: run: --fault stage0=dtype:" + dtype +
                                       ": a run cannot make tensors of dtype '" + dtype +
                                       "': a fault casts to one of f32, ",
                                   0),
                  0u)
            << result.err;
        EXPECT_FALSE(std::filesystem::exists(trace));
    }
    result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --fault stage1=explode");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err.rfind("pipelens: run: --fault stage1=explode: unknown stage effect "
                               "'explode'",
                               0),
              0u)
        << result.err;
    for (const auto& [fault, message] : std::vector<std::pair<std::string, std::string>>{
             {"rank1=clock:5ms",
              "--fault rank1=clock:5ms: clock: needs a signed duration, e.g. "
              "+5ms or -250us"},
             {"rank2=clock:+1ms", "--fault rank2=clock:+1ms: there is no rank 2 (ranks 0..1)"},
             {"stage7=nan", "--fault stage7=nan: there is no stage 7 (stages 0..1)"},
             {"stage99999999999=nan",
              "--fault stage99999999999=nan: unknown target 'stage99999999999'"}}) {
        result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --fault " + fault);
        EXPECT_EQ(result.exit_code, 2) << fault;
        EXPECT_EQ(result.err.rfind("pipelens: run: " + message, 0), 0u) << result.err;
    }
}

// What every rank process would refuse is refused once by the launcher, before any starts (it
// was the same line from each rank, then a line per rank that exited).
TEST(RunCliGloo, TheLauncherRefusesOnceWhatEveryRankWould) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    auto result = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --transport gloo --nproc 3");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: run: --nproc 3 starts 3 processes, but the schedule has 2 ranks (pp)\n");
    result = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --transport gloo --nproc 2 --fault stage9=die");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: run: --fault stage9=die: there is no stage 9 (stages 0..1)\n");
}

}  // namespace
}  // namespace pipelens
