// Files of the wrong kind given to a command: each is told from its content (not its name) and
// answered with one line saying what the file is and which command takes it, exit 2, instead of
// the wrong parser's complaint.
#include <gtest/gtest.h>

#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::fresh_trace;
using testing::run_pipelens;
using testing::temp_file;

const std::string kExamples = std::string(PIPELENS_SOURCE_DIR) + "/assets/examples/";
const std::string kCsv = kExamples + "swapped_recvs.csv";
const std::string kToml = kExamples + "default.toml";

// A real trace, under a name that says nothing of its kind.
std::string trace_file() {
    const auto path = fresh_trace("local");
    EXPECT_EQ(
        run_pipelens("simulate --schedule GPipe --pp 2 --m 2 --out " + path.string()).exit_code, 0);
    return path.string();
}

void expect_refused(const std::string& arguments, const std::string& message) {
    const auto result = run_pipelens(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments;
    EXPECT_EQ(result.err, message + "\n") << arguments;
    EXPECT_EQ(result.out, "") << arguments;
}

TEST(WrongKindOfFile, ATraceGivenWhereAnExperimentOrScheduleGoes) {
    const std::string trace = trace_file();
    const std::string open =
        "open it with `pipelens summary " + trace + "` or `pipelens view " + trace + "`";
    expect_refused("simulate " + trace, "pipelens simulate: " + trace +
                                            " is a pipelens trace (SQLite), not an experiment "
                                            "(TOML); " +
                                            open);
    expect_refused("check " + trace, "pipelens check: " + trace +
                                         " is a pipelens trace (SQLite), not a schedule (PyTorch "
                                         "CSV); " +
                                         open);
    expect_refused("sweep " + trace + " --sweep pp=2,4",
                   "pipelens sweep: " + trace +
                       " is a pipelens trace (SQLite), not an experiment (TOML); " + open);
    expect_refused("simulate --schedule-file " + trace,
                   "pipelens simulate: " + trace +
                       " is a pipelens trace (SQLite), not a schedule (PyTorch CSV); " + open);
    expect_refused(
        "plan " + trace,
        "pipelens plan: " + trace + " is a pipelens trace (SQLite), not a plan (TOML); " + open);
    expect_refused("import " + trace + " --out x.db",
                   "pipelens import: " + trace +
                       " is a pipelens trace (SQLite), not a file pipelens imports (profiler or "
                       "pipelining JSON, schedule CSV, flight-recorder dump, Megatron timers); " +
                       open);
}

TEST(WrongKindOfFile, AScheduleCsvGivenAsTheExperimentPointsToScheduleFile) {
    expect_refused("simulate " + kCsv,
                   "pipelens simulate: " + kCsv +
                       " is a schedule (PyTorch CSV), not an experiment (TOML); give it as the "
                       "schedule: `pipelens simulate --schedule-file " +
                       kCsv + "`");
    expect_refused("summary " + kCsv,
                   "pipelens summary: " + kCsv +
                       " is a schedule (PyTorch CSV), not a trace (SQLite); check it with "
                       "`pipelens check " +
                       kCsv + "` or simulate it with `pipelens simulate --schedule-file " + kCsv +
                       "`");
}

TEST(WrongKindOfFile, AnExperimentGivenWhereAScheduleOrTraceGoes) {
    const std::string simulate = "simulate it with `pipelens simulate " + kToml + "`";
    expect_refused("check " + kToml, "pipelens check: " + kToml +
                                         " is an experiment (TOML), not a schedule (PyTorch "
                                         "CSV); " +
                                         simulate);
    for (const std::string command : {"summary", "export", "replay", "calibrate", "bisect"})
        expect_refused(command + " " + kToml,
                       "pipelens " + command + ": " + kToml +
                           " is an experiment (TOML), not a trace (SQLite); " + simulate);
    expect_refused(
        "view " + kToml,
        "pipelens view: " + kToml + " is an experiment (TOML), not a trace (SQLite); " + simulate);
    expect_refused("simulate --schedule-file " + kToml,
                   "pipelens simulate: " + kToml +
                       " is an experiment (TOML), not a schedule (PyTorch CSV); " + simulate);
}

// An experiment's `[schedule] file` is checked as --schedule-file is: once a TOML there failed
// as a CSV on its first line, and a missing one named neither the experiment nor the key.
TEST(WrongKindOfFile, AnExperimentsScheduleFileIsCheckedAsTheFlagIs) {
    const auto folder = std::filesystem::temp_directory_path() /
                        (testing::process_temp_prefix() + "schedule_file_check");
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "other.toml") << "[schedule]\npp = 2\nm = 4\n";
    const auto experiment = [&](const std::string& file) {
        const auto path = folder / "exp.toml";
        std::ofstream(path) << "[schedule]\nfile = \"" << file << "\"\n";
        return path.string();
    };
    const std::string toml = experiment("other.toml");
    auto result = testing::run_pipelens("simulate " + toml);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + toml +
                              ": schedule.file: " + (folder / "other.toml").string() +
                              " is an experiment (TOML), not a schedule (PyTorch CSV)\n");
    const std::string missing = experiment("nope.csv");
    result = testing::run_pipelens("simulate " + missing);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + missing + ": schedule.file: cannot open " +
                              (folder / "nope.csv").string() + " (no such file)\n");
    std::filesystem::remove_all(folder);
}

TEST(WrongKindOfFile, ImportFormatsPointToImport) {
    const auto profiler = temp_file(
        "rank0.txt", "{\"schemaVersion\": 1, \"deviceProperties\": [], \"traceEvents\": []}");
    expect_refused("simulate " + profiler.string(),
                   "pipelens simulate: " + profiler.string() +
                       " is a PyTorch profiler trace (JSON), not an experiment (TOML); read it "
                       "into a trace with `pipelens import " +
                       profiler.string() + " --out TRACE.db`");
    const auto dump = temp_file("rank0_dump", std::string("\x80\x04\x95\x10", 4));
    expect_refused("check " + dump.string(),
                   "pipelens check: " + dump.string() +
                       " is an NCCL flight-recorder dump, not a schedule (PyTorch CSV); read it "
                       "into a trace with `pipelens import " +
                       dump.string() + " --out TRACE.db`");
}

TEST(WrongKindOfFile, FilesOfTheRightKindAndUnreadableOnesReachTheCommand) {
    EXPECT_EQ(run_pipelens("check " + kExamples + "zb1p_pp4_v2_m8.csv").exit_code, 0);
    EXPECT_EQ(run_pipelens("simulate " + kToml).exit_code, 0);
    const std::string trace = trace_file();
    EXPECT_EQ(run_pipelens("summary " + trace).exit_code, 0);
    const auto missing = run_pipelens("check /nonexistent/schedule.csv");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.err.find("is a "), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace pipelens

namespace pipelens {
namespace {

// Telling a file's kind, or reading it whole, once blocked on a FIFO until a writer came and
// read /dev/zero until memory ran out. Neither is a file: refused at once, naming it.
TEST(NotAFile, AFifoOrADeviceIsRefusedAtOnceNamingIt) {
    const std::filesystem::path fifo = std::filesystem::temp_directory_path() /
                                       ("pipelens_fifo_" + std::to_string(::getpid()) + ".toml");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const std::string command : {"simulate", "check", "summary", "simulate --schedule-file"}) {
        const auto result = testing::run_command("timeout 20 " + std::string(PIPELENS_BINARY) +
                                                 " " + command + " " + fifo.string());
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, "pipelens " + command.substr(0, command.find(' ')) + ": " +
                                  fifo.string() +
                                  " is not a regular file (a FIFO, device or socket); give the "
                                  "file itself\n")
            << command;
    }
    const auto rates = testing::run_command(
        "timeout 20 " + std::string(PIPELENS_BINARY) +
        " plan --layers 8 --hidden 1024 --heads 16 --sequence 512 --global-batch 16 --gpus 8 "
        "--gemm-rates " +
        fifo.string());
    EXPECT_EQ(rates.exit_code, 2);
    EXPECT_EQ(rates.err, "pipelens plan: --gemm-rates " + fifo.string() +
                             ": is not a regular file (a FIFO, device or socket); give the file "
                             "itself\n");
    std::filesystem::remove(fifo);
    const auto zero = testing::run_pipelens("check /dev/zero");
    EXPECT_EQ(zero.exit_code, 2);
    // Named inside an experiment, the path is refused naming the experiment and the key.
    const auto experiment = testing::temp_file("zero.toml", "[schedule]\nfile = \"/dev/zero\"\n");
    const auto named = testing::run_pipelens("simulate " + experiment.string());
    EXPECT_EQ(named.exit_code, 2);
    EXPECT_EQ(named.err, "pipelens: " + experiment.string() +
                             ": schedule.file: cannot open /dev/zero (not a regular file: a FIFO, "
                             "device or socket)\n");
    std::filesystem::remove(experiment);
    // A trace there once failed on its binary pages as "a blank line".
    const auto trace = fresh_trace("as_schedule");
    ASSERT_EQ(testing::run_pipelens("simulate --out " + trace.string()).exit_code, 0);
    const auto names_trace =
        testing::temp_file("trace.toml", "[schedule]\nfile = \"" + trace.string() + "\"\n");
    const auto traced = testing::run_pipelens("simulate " + names_trace.string());
    EXPECT_EQ(traced.exit_code, 2);
    EXPECT_EQ(traced.err, "pipelens: " + names_trace.string() +
                              ": schedule.file: " + trace.string() +
                              " is a pipelens trace (SQLite), not a schedule (PyTorch CSV)\n");
    std::filesystem::remove(names_trace);
}

// Each CSV cell, even an empty one, is a string in memory: a file of commas took 43 times its
// size. One whose cells cannot fit is refused before they are read (exit 3), naming the file.
TEST(NotAFile, ASchedulesCellsPastTheMemoryThereIsAreRefusedBeforeReading) {
    const auto commas =
        testing::temp_file("commas.csv", "0F0" + std::string(10'000'000, ',') + "\n");
    const auto result =
        testing::run_command("sh -c 'ulimit -v 600000; " + std::string(PIPELENS_BINARY) +
                             " check " + commas.string() + "'");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err.rfind("pipelens: " + commas.string() +
                                   ": up to 10000002 cells would take about 457 MB to read, more "
                                   "than half of the ",
                               0),
              0u)
        << result.err;
    std::filesystem::remove(commas);
}

// An experiment of millions of values takes many times its size to parse: past the memory
// there is, it is too large (exit 3) and named, not "std::bad_alloc".
TEST(NotAFile, AnExperimentPastTheMemoryThereIsIsNamed) {
    std::string values = "1";
    for (int value = 1; value < 3'000'000; ++value)
        values += ",1";
    const auto big = testing::temp_file(
        "big_costs.toml", "[schedule]\npp = 2\nm = 4\n[costs]\nf = [" + values + "]\n");
    const auto result =
        testing::run_command("sh -c 'ulimit -v 200000; " + std::string(PIPELENS_BINARY) +
                             " simulate " + big.string() + "'");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err, "pipelens: " + big.string() +
                              ": not enough memory to read its 6000038 bytes of TOML\n");
    std::filesystem::remove(big);
}

// A text input past 1 GiB is refused by its size before a byte is read (exit 3: too large).
TEST(NotAFile, ATextInputPastAGibibyteIsRefusedBeforeItIsRead) {
    const auto huge = testing::temp_file("huge.csv", "0F0,0B0\r\n");
    std::filesystem::resize_file(huge, (std::uintmax_t{1} << 30) + 1);  // sparse: no disk used
    const auto result = testing::run_pipelens("check " + huge.string());
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.err, "pipelens: " + huge.string() +
                              ": is 1073741825 bytes, more than a text input may be "
                              "(1073741824)\n");
    std::filesystem::remove(huge);
}

}  // namespace
}  // namespace pipelens
