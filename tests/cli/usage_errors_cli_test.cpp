// Usage errors as a user meets them: every one exits 2 (never the command-line library's own
// codes), in one line naming the command; a mistyped command, option or schedule kind is answered
// with the nearest names; --help and --version still print and exit 0; ratio flags refuse a bare
// number above 1 instead of reading 20 as 2,000 %; `pipelens view --help` lists the viewer's
// options.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

constexpr const char* kCommands =
    "commands: schedule, check, simulate, summary, diff, export, calibrate, replay, bisect, "
    "shard, view, import, plan, sweep, partition, merge, run, explain\n";

TEST(UsageErrors, AMistypedCommandNamesTheNearestCommandAndListsThemAll) {
    const auto result = run_pipelens("simlate --pp 2");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(
        result.err,
        std::string("pipelens: unknown command 'simlate'; did you mean 'simulate'?\n") + kCommands);
    const auto far = run_pipelens("frobnicate");
    EXPECT_EQ(far.exit_code, 2);
    EXPECT_EQ(far.err, std::string("pipelens: unknown command 'frobnicate'\n") + kCommands);
    const auto none = run_pipelens("");
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_EQ(none.err, std::string("pipelens: a command is required\n") + kCommands);
}

TEST(UsageErrors, AnUnknownOptionExitsTwoAndSuggestsTheNearestOption) {
    const auto typo = run_pipelens("simulate --schedul-file x.csv");
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_EQ(typo.err,
              "pipelens simulate: unknown option --schedul-file (did you mean --schedule-file?); "
              "see pipelens simulate --help\n");
    const auto unknown = run_pipelens("summary --no-such-option x.db");
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_EQ(unknown.err,
              "pipelens summary: unknown option --no-such-option; see pipelens summary --help\n");
}

// A value that is not of the option's type says what the option takes (the library said "Could
// not convert: --batch = huge").
TEST(UsageErrors, AValueOfTheWrongTypeSaysWhatTheOptionTakes) {
    const auto word = run_pipelens("replay x.db --rank two");
    EXPECT_EQ(word.exit_code, 2);
    EXPECT_EQ(word.err,
              "pipelens replay: --rank: 'two' is not an integer; see pipelens replay --help\n");
    const auto huge = run_pipelens("replay x.db --rank 99999999999");
    EXPECT_EQ(huge.exit_code, 2);
    EXPECT_EQ(huge.err,
              "pipelens replay: --rank: '99999999999' is out of range; see pipelens replay "
              "--help\n");
    const auto real = run_pipelens("replay x.db --rank 1.5");
    EXPECT_EQ(real.err,
              "pipelens replay: --rank: '1.5' is not an integer; see pipelens replay --help\n");
}

// Whole numbers are decimal: the command-line library read them with strtoll's base 0, so 0x10
// was sixteen, 010 eight and 08 no integer at all (diff_cli_test: --sim-run 010 is run 10).
TEST(UsageErrors, AWholeNumberIsDecimalWhateverItsLeadingZeros) {
    const auto hex = run_pipelens("replay x.db --rank 0x10");
    EXPECT_EQ(hex.exit_code, 2);
    EXPECT_EQ(hex.err,
              "pipelens replay: --rank: 0x10 is not a decimal integer; see pipelens replay "
              "--help\n");
    const auto leading_zero = run_pipelens("replay x.db --rank 08");
    EXPECT_EQ(leading_zero.err.find("is not an integer"), std::string::npos) << leading_zero.err;
}

// CLI11's own codes were 105 (conversion), 106 (missing required), 109 (extras), 114 (argument
// count).
TEST(UsageErrors, EveryKindOfUsageErrorExitsTwo) {
    const auto missing = run_pipelens("summary");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.err, "pipelens summary: trace is required; see pipelens summary --help\n");
    const auto conversion = run_pipelens("replay x.db --rank two");
    EXPECT_EQ(conversion.exit_code, 2);
    EXPECT_EQ(conversion.err.rfind("pipelens replay: ", 0), 0u) << conversion.err;
    const auto no_value = run_pipelens("summary x.db --run");
    EXPECT_EQ(no_value.exit_code, 2);
    EXPECT_EQ(no_value.err.rfind("pipelens summary: ", 0), 0u) << no_value.err;
    const auto extra = run_pipelens("check a.csv b.csv");
    EXPECT_EQ(extra.exit_code, 2);
    EXPECT_EQ(extra.err, "pipelens check: unexpected argument b.csv; see pipelens check --help\n");
}

TEST(UsageErrors, HelpAndVersionStillPrintAndExitZero) {
    const auto version = run_pipelens("--version");
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_EQ(version.out, "pipelens 0.1.0\n");
    const auto help = run_pipelens("simulate --help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("--schedule-file"), std::string::npos) << help.out;
    EXPECT_EQ(help.err, "");
}

TEST(UsageErrors, AMistypedScheduleKindSuggestsTheNearestKind) {
    const auto result = run_pipelens("simulate --schedule 1FB1 --pp 2 --m 4");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: --schedule: unknown schedule kind '1FB1': did you mean 1F1B? expected "
              "one of GPipe, 1F1B, Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, "
              "ZBVZeroBubble, DualPipeV, ZeroBubbleH2, ZeroBubbleAuto\n");
}

// docs/schedules.md defines ZB-H1 as InterleavedZeroBubble with v = 1; --schedule ZBH1 ran it at v
// = 2.
TEST(UsageErrors, TheZbH1AliasIsRefusedNamingTheKindAndItsV) {
    const auto result = run_pipelens("simulate --schedule ZBH1 --pp 4 --m 8");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: --schedule: 'ZBH1' is the zero-bubble paper's ZB-H1, one stage per "
              "rank: name InterleavedZeroBubble with v = 1 (--v 1)\n");
    const auto named = run_pipelens("simulate --schedule InterleavedZeroBubble --v 1 --pp 4 --m 8");
    EXPECT_EQ(named.exit_code, 0) << named.err;
    EXPECT_NE(named.out.find("InterleavedZeroBubble pp=4 v=1 m=8"), std::string::npos) << named.out;
}

// GPipe pp=4 m=8 with unit costs: bubble 3/11 = 27.27 %.
constexpr const char* kGPipe = "simulate --schedule GPipe --pp 4 --m 8 --f 1 --i 1 --w 1";

TEST(RatioFlags, ABareNumberAboveOneIsRefusedAndAPercentageStillWorks) {
    const auto bare = run_pipelens(std::string(kGPipe) + " --max-bubble 20");
    EXPECT_EQ(bare.exit_code, 2);
    EXPECT_EQ(bare.err, "pipelens: --max-bubble: 20 is above 1; did you mean 20%?\n");
    const auto percent = run_pipelens(std::string(kGPipe) + " --max-bubble 20%");
    EXPECT_EQ(percent.exit_code, 1);  // 27.27 % exceeds 20 %
    const auto within = run_pipelens(std::string(kGPipe) + " --max-bubble 30%");
    EXPECT_EQ(within.exit_code, 0) << within.err;
    const auto sweep =
        run_pipelens("sweep --schedule GPipe --f 1 --i 1 --w 1 --sweep pp=4 --m 8 --max-bubble 50");
    EXPECT_EQ(sweep.exit_code, 2);
    EXPECT_EQ(sweep.err, "pipelens: --max-bubble: 50 is above 1; did you mean 50%?\n");
}

TEST(RatioFlags, EveryShareFlagReadsTheSameWay) {
    const auto overlap = run_pipelens(std::string(kGPipe) + " --overlap-efficiency 50");
    EXPECT_EQ(overlap.exit_code, 2);
    EXPECT_EQ(overlap.err, "pipelens: --overlap-efficiency: 50 is above 1; did you mean 50%?\n");
    EXPECT_EQ(run_pipelens(std::string(kGPipe) + " --overlap-efficiency 50%").exit_code, 0);
    const std::string plan =
        "plan --layers 8 --hidden 1024 --heads 16 --sequence 512 --global-batch 16 --gpus 8";
    const auto fraction = run_pipelens(plan + " --achieved-fraction 70");
    EXPECT_EQ(fraction.exit_code, 2);
    EXPECT_EQ(fraction.err, "pipelens: --achieved-fraction: 70 is above 1; did you mean 70%?\n");
    const auto as_percent = run_pipelens(plan + " --achieved-fraction 70% --top 1 --json");
    const auto as_share = run_pipelens(plan + " --achieved-fraction 0.7 --top 1 --json");
    EXPECT_EQ(as_percent.exit_code, 0) << as_percent.err;
    EXPECT_EQ(as_percent.out, as_share.out);
}

// Each names what was given: the dtype, not the transformer's hidden size that was not given;
// a count's lower bound, not CLI11's range up to the largest double.
TEST(UsageErrors, AMessageNamesTheValueGiven) {
    const auto dtype = run_pipelens("simulate --dtype fp3");
    EXPECT_EQ(dtype.exit_code, 2);
    EXPECT_EQ(dtype.err,
              "pipelens: command line: transformer.dtype: unknown dtype 'fp3' (use "
              "fp32, bf16, fp16 or fp8)\n");
    const auto top = run_pipelens("diff --top -1 a.db b.db");
    EXPECT_EQ(top.exit_code, 2);
    EXPECT_EQ(top.err, "pipelens: --top must be at least 0, got -1\n");
}

// An option given twice was answered in the library's words ("At Most 1 required").
TEST(UsageErrors, AnOptionGivenTwiceSaysToGiveItOnce) {
    const auto result = run_pipelens("simulate --pp 4 --pp 8");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens simulate: --pp is given 2 times; give it once; see pipelens "
              "simulate --help\n");
}

// A run id or event number past int64 was read as int64's largest and answered "no run
// 9223372036854775807", a run nobody asked for.
TEST(UsageErrors, ARunOrEventNumberPastInt64IsOutOfRange) {
    const auto trace = testing::fresh_trace("usage_int64");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 2 --out " + trace.string()).exit_code, 0);
    const std::string huge = "99999999999999999999";
    for (const auto& [command, option] :
         std::vector<std::pair<std::string, std::string>>{{"replay", "--run"},
                                                          {"replay", "--upto"},
                                                          {"bisect", "--other-run"},
                                                          {"summary", "--run"},
                                                          {"export", "--run"},
                                                          {"diff", "--sim-run"}}) {
        const std::string second = command == "diff" ? " " + trace.string() : "";
        const auto result =
            run_pipelens(command + " " + trace.string() + second + " " + option + " " + huge);
        EXPECT_EQ(result.exit_code, 2) << command << " " << option;
        EXPECT_EQ(result.err, "pipelens " + command + ": " + option + ": " + huge +
                                  " is out of range (at most 9223372036854775807); see pipelens " +
                                  command + " --help\n");
    }
    const auto word = run_pipelens("replay " + trace.string() + " --run 1x");
    EXPECT_EQ(word.err,
              "pipelens replay: --run: 1x is not a whole number; see pipelens replay "
              "--help\n");
}

TEST(ViewHelp, ListsTheViewersOptions) {
    const auto help = run_pipelens("view --help");
    EXPECT_EQ(help.exit_code, 0);
    for (const char* option :
         {"--run", "--screenshot", "--frames", "--size", "--select", "--compare", "--panel",
          "--event", "--error", "--tensor", "--no-critical-path"})
        EXPECT_NE(help.out.find(option), std::string::npos) << option << "\n" << help.out;
    const auto typo = run_pipelens("view --screenshoot x.png");
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_EQ(typo.err,
              "pipelens view: unknown option --screenshoot (did you mean --screenshot?); see "
              "pipelens view --help\n");
}

}  // namespace
}  // namespace pipelens
