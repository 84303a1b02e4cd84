// What a command writes reaches its file whole or the command fails: a full disk (/dev/full
// stands in for one) is exit 2 naming the file and why, a report that cannot reach standard
// output is exit 1, nothing is left under the name asked for, and a device given as the output
// is written to, never replaced (a rename once turned /dev/full into a regular file).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/temp_directory.hpp"

namespace pipelens {
namespace {

using testing::read_file;
using testing::run_command;
using testing::run_pipelens;

bool is_full_device(const char* path) {
    struct stat status {};
    return ::stat(path, &status) == 0 && S_ISCHR(status.st_mode);
}

TEST(OutputFiles, AFullDeviceIsAnErrorNamingItAndStaysADevice) {
    if (!is_full_device("/dev/full"))
        GTEST_SKIP() << "no /dev/full character device here";
    const std::string no_space = "cannot write the file: No space left on device\n";
    for (const std::string command :
         {"schedule --kind 1F1B --pp 2 --m 4 --out /dev/full", "simulate --junit /dev/full",
          "sweep --sweep m=4,8 --json /dev/full", "sweep --sweep m=4,8 --csv /dev/full"}) {
        const auto result = run_pipelens(command);
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err.substr(result.err.rfind("pipelens: ")),
                  "pipelens: /dev/full: " + no_space)
            << command;
        EXPECT_TRUE(is_full_device("/dev/full")) << command << " replaced the device";
    }
    // The Chrome export, which removes what it could not write whole, removes no device.
    const auto trace = testing::fresh_trace("export_full");
    ASSERT_EQ(run_pipelens("simulate --out " + trace.string()).exit_code, 0);
    const auto chrome = run_pipelens("export " + trace.string() + " --chrome /dev/full");
    EXPECT_EQ(chrome.exit_code, 2);
    EXPECT_EQ(chrome.err, "pipelens: /dev/full: " + no_space);
    EXPECT_TRUE(is_full_device("/dev/full")) << "export --chrome removed the device";
    const auto report =
        run_command("sh -c '" + std::string(PIPELENS_BINARY) + " simulate >/dev/full'");
    EXPECT_EQ(report.exit_code, 1);
    EXPECT_EQ(report.err,
              "pipelens: error: cannot write to standard output: No space left on "
              "device\n");
}

class OutputFilesIn : public testing::TempDirectoryTest {
  protected:
    OutputFilesIn() : TempDirectoryTest("output_files") {}
};

TEST_F(OutputFilesIn, AFailedWriteLeavesNoFileBehind) {
    const std::filesystem::path folder = directory_ / "not_yet";
    const std::filesystem::path wanted = folder / "schedule.csv";
    const auto missing = run_pipelens("schedule --kind 1F1B --pp 2 --m 4 --out " + wanted.string());
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.err, "pipelens: " + wanted.string() +
                               ": cannot write the file: No such file or directory\n");
    std::filesystem::create_directory(folder);
    const auto written =
        run_pipelens("schedule --kind 1F1B --pp 2 --m 4 --format csv --out " + wanted.string());
    ASSERT_EQ(written.exit_code, 0) << written.err;
    EXPECT_EQ(read_file(wanted),
              "0F0,0F1,0B0,0F2,0B1,0F3,0B2,0B3\r\n1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\r\n");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder),
                            std::filesystem::directory_iterator()),
              1);  // no .partial beside it
    // Through a symbolic link the file it points to is written; the link stays a link.
    const std::filesystem::path link = directory_ / "via.csv";
    std::filesystem::create_symlink(wanted, link);
    ASSERT_EQ(run_pipelens("schedule --kind GPipe --pp 2 --m 2 --format csv --out " + link.string())
                  .exit_code,
              0);
    EXPECT_TRUE(std::filesystem::is_symlink(link));
    EXPECT_EQ(read_file(wanted), "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B0,1B1\r\n");
}

// A trace the writer creates but cannot give its tables (a full disk; here a file size limit of
// 4 KiB, so SQLite's first page fits and nothing after it) is removed, not left behind as "an
// SQLite database with no tables" that every later command refuses. An existing trace that
// cannot grow keeps its runs.
TEST_F(OutputFilesIn, ATraceThatCannotBeCreatedIsNotLeftBehind) {
    const std::filesystem::path trace = directory_ / "t.db";
    const auto limited = [&](const std::string& arguments) {
        return run_command("sh -c \"ulimit -f 8; trap '' XFSZ; exec " +
                           std::string(PIPELENS_BINARY) + " " + arguments + "\"");
    };
    const auto failed = limited("simulate --schedule 1F1B --pp 4 --m 8 --out " + trace.string());
    EXPECT_EQ(failed.exit_code, 2);
    EXPECT_EQ(failed.err.rfind("pipelens: " + trace.string() + ": cannot create trace: ", 0), 0u)
        << failed.err;
    EXPECT_FALSE(std::filesystem::exists(trace));
    EXPECT_FALSE(std::filesystem::exists(trace.string() + "-wal"));

    ASSERT_EQ(
        run_pipelens("simulate --schedule 1F1B --pp 2 --m 2 --out " + trace.string()).exit_code, 0);
    const auto full =
        limited("simulate --schedule Interleaved1F1B --pp 8 --v 4 --m 64 --out " + trace.string());
    EXPECT_EQ(full.exit_code, 2);
    const auto summary = run_pipelens("summary " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_NE(summary.out.find("1F1B"), std::string::npos) << summary.out;
}

// An output named like a trace, or like one of the command's inputs, would replace what the
// user keeps: `calibrate T --out T` once turned the trace into TOML, `export T --chrome T`
// emptied it, `import --schedule-csv` over --out destroyed its runs. Refused before any work.
TEST_F(OutputFilesIn, AnOutputNeverReplacesATraceOrAnInput) {
    const std::string trace = (directory_ / "kept.db").string();
    ASSERT_EQ(run_pipelens("simulate --out " + trace).exit_code, 0);
    const auto expect_refused = [&](const std::string& command, const std::string& error) {
        const auto result = run_pipelens(command);
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, error) << command;
        const auto summary = run_pipelens("summary " + trace);
        EXPECT_EQ(summary.exit_code, 0) << command << " damaged the trace: " << summary.err;
    };
    const std::string replaces =
        " is a pipelens trace (SQLite); writing it would replace its "
        "runs: name another file\n";
    const std::string reads =
        " is also an input of this command; writing it would replace what "
        "is read: name another file\n";
    expect_refused("calibrate " + trace + " --out " + trace, "pipelens: --out " + trace + reads);
    expect_refused("export " + trace + " --chrome " + trace, "pipelens: --chrome " + trace + reads);
    expect_refused("schedule --kind 1F1B --pp 2 --m 2 --out " + trace,
                   "pipelens: the output " + trace + replaces);
    const std::string profiles = std::string(PIPELENS_SOURCE_DIR) + "/tests/data/pytorch_profiler/";
    const std::string fresh = (directory_ / "imported.db").string();
    expect_refused("import " + profiles + "gpipe_rank0.json " + profiles +
                       "gpipe_rank1.json --out " + fresh + " --schedule-csv " + fresh,
                   "pipelens: --schedule-csv " + fresh + reads);
    EXPECT_FALSE(std::filesystem::exists(fresh));  // refused before the import wrote anything
    expect_refused("import " + profiles + "gpipe_rank0.json " + profiles +
                       "gpipe_rank1.json --out " + fresh + " --schedule-csv " + trace,
                   "pipelens: --schedule-csv " + trace + replaces);
    // A sweep refuses before it simulates the grid (its ranking is not printed).
    const std::string sweep = "sweep --f 1ms --i 1ms --w 1ms --sweep m=4,8 ";
    const auto early = run_pipelens(sweep + "--json " + trace);
    EXPECT_EQ(early.out, "");
    EXPECT_EQ(early.err, "pipelens: --json " + trace + replaces);
    // merge's results file is its input.
    const std::string results = (directory_ / "p.json").string();
    ASSERT_EQ(run_pipelens(sweep + "--json " + results).exit_code, 0);
    expect_refused("merge " + results + " --csv " + results, "pipelens: --csv " + results + reads);
    EXPECT_EQ(run_pipelens("merge " + results).exit_code, 0);  // still JSON
}

TEST_F(OutputFilesIn, TwoOutputsOfOneCommandNeverNameOneFile) {
    const std::string trace = (directory_ / "t.db").string();
    ASSERT_EQ(run_pipelens("simulate --out " + trace).exit_code, 0);
    const std::string out = (directory_ / "both.out").string();
    const std::string dotted = (directory_ / "." / "both.out").string();
    const auto export_both = run_pipelens("export " + trace + " --chrome " + out + " --svg " + out);
    EXPECT_EQ(export_both.exit_code, 2);
    EXPECT_EQ(export_both.err, "pipelens: --chrome and --svg both name " + out +
                                   ": give each output a file of its own\n");
    const auto sweep_both = run_pipelens("sweep --f 1ms --i 1ms --w 1ms --sweep m=4,8 --json " +
                                         out + " --csv " + dotted);
    EXPECT_EQ(sweep_both.exit_code, 2);
    EXPECT_EQ(sweep_both.err, "pipelens: --json and --csv both name " + dotted +
                                  ": give each output a file of its own\n");
    EXPECT_FALSE(std::filesystem::exists(out));
}

// A file name that is not UTF-8 (a Latin-1 directory's) still gives JSON every reader takes:
// the bytes that are not UTF-8 read as U+FFFD. `sweep --json` once failed with exit 1 after
// simulating its whole grid.
TEST_F(OutputFilesIn, AFileNameThatIsNotUtf8StillGivesValidJson) {
    const std::string replaced = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
    const std::string trace = (directory_ / "t\xff.db").string();
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + trace).exit_code, 0);
    const auto summary = run_pipelens("summary --json " + trace);
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_EQ(nlohmann::json::parse(summary.out).at("trace"),
              (directory_ / ("t" + replaced + ".db")).string());

    const std::filesystem::path schedule = directory_ / "s\xfe.csv";
    ASSERT_EQ(
        run_pipelens("schedule --kind 1F1B --pp 2 --m 4 --format csv --out " + schedule.string())
            .exit_code,
        0);
    const std::string results = (directory_ / "r.json").string();
    const auto sweep = run_pipelens("sweep --schedule-file " + schedule.string() +
                                    " --sweep m=4 --json " + results);
    ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
    EXPECT_EQ(nlohmann::json::parse(read_file(results)).at("configurations").at(0).at("schedule"),
              "s" + replaced);
}

}  // namespace
}  // namespace pipelens
