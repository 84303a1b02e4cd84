// CI gates as a CI job uses them: `simulate` with --max-step-time, --max-bubble and
// --max-memory on a closed-form case (GPipe pp=4 m=8, 1 us per F, I and W: step 33 us, bubble
// 3/11), the exit codes, one line per exceeded limit with by how much, the JUnit report, a
// run recorded before a gate fails, and bad limits.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::read_file;
using testing::run_pipelens;

constexpr const char* kGPipe = "simulate --schedule GPipe --pp 4 --m 8 --f 1 --i 1 --w 1";

std::filesystem::path scratch(const std::string& name) {
    const auto path = testing::process_temp_path("gates_" + name);
    std::filesystem::remove(path);
    return path;
}

TEST(CiGates, ExceededLimitsFailWithOneLineEachSayingByHowMuch) {
    const auto result =
        run_pipelens(std::string(kGPipe) + " --max-step-time 30us --max-bubble 20%");
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.out.find("step time"), std::string::npos);  // the figures still print
    EXPECT_EQ(result.err,
              "pipelens: GPipe pp=4 v=1 m=8: gate failed: step time 33.000 us exceeds "
              "--max-step-time 30.000 us by 3.000 us (10.0%)\n"
              "pipelens: GPipe pp=4 v=1 m=8: gate failed: bubble ratio 27.27% exceeds "
              "--max-bubble 20.00% by 7.27 points\n");
}

// A limit with a fraction of a ns is not rounded up to the figure: 32999.5 ns is exceeded by a
// 33000 ns step (it passed, rounded to the nearest ns).
TEST(CiGates, ALimitAFractionOfAUnitBelowTheFigureFails) {
    for (const char* limit : {"32999.5ns", "32.9999us"}) {
        const auto result = run_pipelens(std::string(kGPipe) + " --max-step-time " + limit);
        EXPECT_EQ(result.exit_code, 1) << limit << ": " << result.err;
    }
    EXPECT_EQ(run_pipelens(std::string(kGPipe) + " --max-step-time 33000ns").exit_code, 0);
}

TEST(CiGates, LimitsMetExitZeroAndTheJUnitReportHasOneCasePerGate) {
    const auto junit = scratch("pass.xml");
    const auto result = run_pipelens(
        std::string(kGPipe) + " --max-step-time 33us --max-bubble 0.3 --junit " + junit.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(read_file(junit),
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<testsuites tests=\"2\" failures=\"0\" errors=\"0\">\n"
              "  <testsuite name=\"pipelens simulate\" tests=\"2\" failures=\"0\" errors=\"0\" "
              "skipped=\"0\" time=\"0\">\n"
              "    <testcase classname=\"pipelens simulate.GPipe pp=4 v=1 m=8\" "
              "name=\"max-step-time\" time=\"0\"></testcase>\n"
              "    <testcase classname=\"pipelens simulate.GPipe pp=4 v=1 m=8\" "
              "name=\"max-bubble\" time=\"0\"></testcase>\n"
              "  </testsuite>\n</testsuites>\n");
}

TEST(CiGates, AFailedGateIsAFailureInTheReportAndTheRecordedRunIsKept) {
    const auto junit = scratch("fail.xml");
    const auto trace = scratch("run.db");
    // GPipe keeps all 8 microbatches' activations on rank 0 at once: 8 MiB.
    const auto result =
        run_pipelens(std::string(kGPipe) + " --activation-bytes 1MiB --max-memory 6MiB --out " +
                     trace.string() + " --junit " + junit.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(result.err,
              "pipelens: GPipe pp=4 v=1 m=8: gate failed: peak memory 8.0 MiB (rank 0) exceeds "
              "--max-memory 6.0 MiB by 2.0 MiB (33.3%)\n");
    const std::string report = read_file(junit);
    EXPECT_NE(report.find("tests=\"1\" failures=\"1\""), std::string::npos) << report;
    EXPECT_NE(report.find("<failure type=\"gate\" message=\"peak memory 8.0 MiB (rank 0) exceeds "),
              std::string::npos)
        << report;
    const auto summary = run_pipelens("summary " + trace.string());
    EXPECT_EQ(summary.exit_code, 0) << summary.err;
}

TEST(CiGates, AMemoryLimitOnARunWithoutMemoryFiguresFailsRatherThanPasses) {
    const auto result = run_pipelens(std::string(kGPipe) + " --max-memory 1GiB");
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("--max-memory 1.0 GiB cannot be checked: the run has no memory "
                              "figures"),
              std::string::npos)
        << result.err;
}

TEST(CiGates, BadLimitsAreUsageErrorsNamingTheFlag) {
    const auto ratio = run_pipelens(std::string(kGPipe) + " --max-bubble lots");
    EXPECT_EQ(ratio.exit_code, 2);
    EXPECT_EQ(ratio.err, "pipelens: --max-bubble: 'lots' is not a ratio; give 0.2 or 20%\n");
    const auto duration = run_pipelens(std::string(kGPipe) + " --max-step-time 5parsecs");
    EXPECT_EQ(duration.exit_code, 2);
    EXPECT_EQ(duration.err.rfind("pipelens: --max-step-time: ", 0), 0u) << duration.err;
    const auto junit =
        run_pipelens(std::string(kGPipe) + " --max-bubble 0.5 --junit /nonexistent/dir/report.xml");
    EXPECT_EQ(junit.exit_code, 2);
    EXPECT_EQ(junit.err,
              "pipelens: /nonexistent/dir/report.xml: cannot write the file: No such "
              "file or directory\n");
}

// A report kept from an earlier run must not read as a pass for a run that failed: the failed
// run's report holds its error (here a schedule that can hang, exit 1, and a bad file, exit 2).
TEST(CiGates, ARunThatFailsReplacesAnEarlierPassingReportWithItsError) {
    const auto junit = scratch("stale.xml");
    ASSERT_EQ(
        run_pipelens(std::string(kGPipe) + " --max-bubble 90% --junit " + junit.string()).exit_code,
        0);
    ASSERT_NE(read_file(junit).find("failures=\"0\" errors=\"0\""), std::string::npos);
    const auto hang = run_pipelens("simulate --schedule-file " + std::string(PIPELENS_SOURCE_DIR) +
                                   "/assets/examples/swapped_recvs.csv --max-bubble 90% --junit " +
                                   junit.string());
    EXPECT_EQ(hang.exit_code, 1) << hang.err;
    std::string report = read_file(junit);
    EXPECT_NE(report.find("<testsuites tests=\"1\" failures=\"0\" errors=\"1\">"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("<testcase classname=\"pipelens simulate\" name=\"run\" time=\"0\">\n"
                          "      <error type=\"error\" message=\""),
              std::string::npos)
        << report;
    const auto bad =
        run_pipelens("simulate --schedule 1F1B --pp 4 --m 2 --junit " + junit.string());
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    report = read_file(junit);
    EXPECT_NE(report.find("errors=\"1\""), std::string::npos) << report;
    EXPECT_NE(report.find("1F1B needs at least as many microbatches as stages"), std::string::npos)
        << report;
}

// A command line that does not get as far as the run (a value refused as it is read, an option
// the command does not have) replaces an earlier report with its error too; a file that is no
// report of pipelens' is left alone, and none is created for an error found before the report's
// name could be checked.
TEST(CiGates, ACommandLineThatDoesNotParseReplacesAnEarlierReportOnly) {
    const auto junit = scratch("line.xml");
    for (const std::string& wrong : {std::string(" --pp 0"), std::string(" --no-such-flag")}) {
        ASSERT_EQ(run_pipelens(std::string(kGPipe) + " --junit " + junit.string()).exit_code, 0);
        const auto refused =
            run_pipelens(std::string(kGPipe) + wrong + " --junit " + junit.string());
        EXPECT_EQ(refused.exit_code, 2) << wrong;
        const std::string report = read_file(junit);
        EXPECT_NE(report.find("<testsuites tests=\"1\" failures=\"0\" errors=\"1\">"),
                  std::string::npos)
            << wrong << report;
        const std::string said = refused.err.substr(0, refused.err.find('\n'));
        EXPECT_NE(report.find("<error type=\"error\" message=\"" + said + "\">"), std::string::npos)
            << wrong << report;
    }
    const auto foreign = testing::temp_file("gates_foreign.xml", "<notes>keep me</notes>\n");
    EXPECT_EQ(run_pipelens(std::string(kGPipe) + " --pp 0 --junit " + foreign.string()).exit_code,
              2);
    EXPECT_EQ(read_file(foreign), "<notes>keep me</notes>\n");
    const auto absent = scratch("absent.xml");
    EXPECT_EQ(run_pipelens(std::string(kGPipe) + " --pp 0 --junit " + absent.string()).exit_code,
              2);
    EXPECT_FALSE(std::filesystem::exists(absent));
}

// The report is checked before any work, as every other output: over one of the command's
// inputs, over another output, an empty name or standard output is a usage error and the
// input is left as it was.
TEST(CiGates, AReportThatWouldReplaceAnInputOrAnotherOutputIsRefusedBeforeAnyWork) {
    const auto experiment =
        testing::temp_file("gates_input.toml", "[schedule]\nkind = \"GPipe\"\npp = 4\nm = 8\n");
    const auto over_input = run_pipelens("simulate " + experiment.string() +
                                         " --max-bubble 90% --junit " + experiment.string());
    EXPECT_EQ(over_input.exit_code, 2);
    EXPECT_EQ(over_input.err, "pipelens: --junit " + experiment.string() +
                                  " is also an input of this command; writing it would replace "
                                  "what is read: name another file\n");
    EXPECT_EQ(read_file(experiment), "[schedule]\nkind = \"GPipe\"\npp = 4\nm = 8\n");
    // The schedule file an experiment file names is an input too.
    const auto schedule = testing::temp_file("gates_named.csv", "0F0,0B0\n");
    const auto naming = testing::temp_file(
        "gates_naming.toml", "[schedule]\nfile = \"" + schedule.filename().string() + "\"\n");
    const auto over_named =
        run_pipelens("simulate " + naming.string() + " --junit " + schedule.string());
    EXPECT_EQ(over_named.exit_code, 2) << over_named.err;
    EXPECT_EQ(read_file(schedule), "0F0,0B0\n");
    // A command that checks nothing cannot report gates.
    const auto shapes = run_pipelens(
        "plan --gemm-shapes --layers 2 --hidden 64 --heads 2 --sequence 32 "
        "--vocabulary 128 --gpus 1 --global-batch 1 --junit " +
        scratch("shapes.xml").string());
    EXPECT_EQ(shapes.exit_code, 2) << shapes.err;
    EXPECT_NE(shapes.err.find("--gemm-shapes prints the shapes to measure and plans nothing"),
              std::string::npos)
        << shapes.err;
    const auto trace = scratch("same.db");
    const auto over_trace = run_pipelens(std::string(kGPipe) + " --out " + trace.string() +
                                         " --junit " + trace.string());
    EXPECT_EQ(over_trace.exit_code, 2);
    EXPECT_EQ(over_trace.err, "pipelens: --out and --junit both name " + trace.string() +
                                  ": give each output a file of its own\n");
    EXPECT_FALSE(std::filesystem::exists(trace));
    const auto results = scratch("results.json");
    const auto over_json = run_pipelens("sweep --sweep pp=2,4 --json " + results.string() +
                                        " --junit " + results.string());
    EXPECT_EQ(over_json.exit_code, 2);
    EXPECT_EQ(over_json.out, "");  // nothing simulated
    for (const char* name : {"''", "-"}) {
        const auto refused =
            run_pipelens(std::string(kGPipe) + " --max-bubble 90% --junit " + name);
        EXPECT_EQ(refused.exit_code, 2) << name;
        EXPECT_NE(refused.err.find("--junit"), std::string::npos) << refused.err;
    }
    const auto missing = run_pipelens("sweep --sweep pp=2,4 --junit /nonexistent/dir/r.xml");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.out, "");  // refused before the grid ran
}

// A sweep's configuration the engine refuses was never checked: the report lists it as skipped
// with the reason, beside the gates of those that ran.
TEST(CiGates, ASweepsConfigurationThatWasNotSimulatedIsASkippedCase) {
    const auto junit = scratch("skipped.xml");
    const auto result = run_pipelens(
        "sweep --schedule 1F1B --pp 4 --sweep m=2,8 --max-bubble 90% --junit " + junit.string());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const std::string report = read_file(junit);
    EXPECT_NE(report.find("<testsuites tests=\"2\" failures=\"0\" errors=\"0\">"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("skipped=\"1\""), std::string::npos) << report;
    const std::size_t skipped = report.find(
        "<testcase classname=\"pipelens sweep.configuration 0 (schedule.m=2)\" "
        "name=\"simulated\" time=\"0\">\n      <skipped message=\"");
    ASSERT_NE(skipped, std::string::npos) << report;
    EXPECT_NE(report.find("1F1B needs at least as many microbatches as stages: m=2 &lt; stages=4",
                          skipped),
              std::string::npos)
        << report;
}

}  // namespace
}  // namespace pipelens
