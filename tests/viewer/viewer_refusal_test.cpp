// pipelens-view given a file that does not open as a trace: one line naming it and exit 2, before
// any window, with --screenshot (no picture of the message), interactively and with --script.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"
#include "tests/viewer/screenshot_support.hpp"

namespace pipelens::viewer {
namespace {

// A screenshot of a trace that did not open would be a picture of an error message: it is one
// error line naming the file, exit 2 and no PNG.
TEST(ViewerScreenshot, ATraceThatCannotBeOpenedIsAnErrorNotAScreenshot) {
    const fs::path text_file = testing::temp_file("not_a_trace.db", "hello, not sqlite\n");
    const fs::path missing = fs::temp_directory_path() / "pipelens_no_such_trace.db";
    fs::remove(missing);
    const fs::path trace = testing::fresh_trace("viewer_no_run");
    ASSERT_EQ(testing::run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    const fs::path png = screenshot_path("bad");
    for (const std::string& arguments :
         {text_file.string(), missing.string(), trace.string() + " --run 7"}) {
        std::string errors;
        EXPECT_EQ(
            run_viewer(arguments + " --screenshot " + png.string() + " --size 800x600", &errors), 2)
            << arguments;
        const std::string file = arguments.substr(0, arguments.find(' '));
        EXPECT_EQ(errors.rfind("pipelens-view: " + file + ": ", 0), 0u) << errors;
        EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 1) << errors;
        EXPECT_FALSE(fs::exists(png)) << arguments;
    }
    // A file of a kind the viewer does not open is said to be that, as a drop of it is (an
    // experiment was once "not an SQLite database").
    std::string errors;
    EXPECT_EQ(run_viewer(std::string(PIPELENS_SOURCE_DIR) +
                             "/assets/examples/default.toml --screenshot " + png.string(),
                         &errors),
              2);
    EXPECT_NE(errors.find("default.toml: is an experiment (TOML); the viewer opens a pipelens "
                          "trace"),
              std::string::npos)
        << errors;
    EXPECT_FALSE(fs::exists(png));
    fs::remove(text_file);
}

// A run number is decimal, as everywhere else: the command-line library read --run 010 as run 8
// (octal), which this trace has, and 0x8 as run 8 too.
TEST(ViewerScreenshot, ARunNumberIsDecimalWhateverItsLeadingZeros) {
    const fs::path trace = testing::fresh_trace("viewer_decimal_run");
    for (int run = 1; run <= 8; ++run)
        ASSERT_EQ(testing::run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code,
                  0);
    const fs::path png = screenshot_path("decimal_run");
    std::string errors;
    EXPECT_EQ(run_viewer(trace.string() + " --run 010 --screenshot " + png.string(), &errors), 2);
    EXPECT_EQ(errors, "pipelens-view: " + trace.string() + ": no run 10 in this trace\n");
    EXPECT_EQ(run_viewer(trace.string() + " --run 0x8 --screenshot " + png.string(), &errors), 2);
    EXPECT_EQ(errors,
              "pipelens-view: --run: 0x8 is not a decimal integer; see pipelens-view --help\n");
    EXPECT_FALSE(fs::exists(png));
}

// A damaged b-tree can drop rows without any read failing: a leaf page of the actions table that
// says it holds 100 cells fewer than it does reads back as a run with those actions missing.
// SQLite's quick_check finds it; the viewer runs it beside the timeline, and a screenshot of the
// file is refused (it once pictured the run with the actions gone, exit 0).
TEST(ViewerScreenshot, ATraceWhosePagesAreDamagedIsRefusedEvenWhenItsRowsRead) {
    const fs::path trace = testing::fresh_trace("viewer_damaged");
    ASSERT_EQ(
        testing::run_pipelens("simulate --schedule 1F1B --pp 4 --m 2000 --out " + trace.string())
            .exit_code,
        0);
    std::int64_t page = 0, page_size = 0;
    {
        testing::RawDatabase raw(trace);
        page =
            std::stoll(raw.value("SELECT pageno FROM dbstat WHERE name = 'actions' AND "
                                 "pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 1"));
        page_size = std::stoll(raw.value("PRAGMA page_size"));
    }
    {
        std::fstream file(trace, std::ios::in | std::ios::out | std::ios::binary);
        const std::streamoff cell_count = (page - 1) * page_size + 3;  // the b-tree page header's
        unsigned char count[2];
        file.seekg(cell_count);
        file.read(reinterpret_cast<char*>(count), 2);
        const int cells = count[0] * 256 + count[1] - 100;
        ASSERT_GT(cells, 0);
        count[0] = static_cast<unsigned char>(cells / 256);
        count[1] = static_cast<unsigned char>(cells % 256);
        file.seekp(cell_count);
        file.write(reinterpret_cast<const char*>(count), 2);
    }
    EXPECT_EQ(testing::RawDatabase(trace).value("SELECT count(*) FROM actions"), "39900");
    const fs::path png = screenshot_path("damaged");
    std::string errors;
    EXPECT_EQ(
        run_viewer(trace.string() + " --screenshot " + png.string() + " --size 800x600", &errors),
        2);
    EXPECT_EQ(errors.rfind("pipelens-view: " + trace.string() + ": trace is corrupt: ", 0), 0u)
        << errors;
    EXPECT_FALSE(fs::exists(png));
}

// The interactive viewer (and a --script journey) refuses a file named on the command line that
// does not open as a trace as a screenshot does: one line, exit 2, before any window. It once
// opened a window holding only the error and stayed up (a journey exited 0). `timeout` ends a
// viewer that stays up, so the test cannot hang on the old behaviour.
TEST(ViewerScreenshot, AFileThatIsNoTraceIsRefusedBeforeTheWindowOpens) {
    const fs::path text_file = testing::temp_file("interactive_not_a_trace.db", "hello\n");
    const fs::path empty = testing::temp_file("interactive_empty.db", "");
    const fs::path script = testing::temp_file("interactive_journey.txt", "frames 2\n");
    for (const std::string& arguments : {text_file.string(), empty.string(),
                                         text_file.string() + " --script " + script.string()}) {
        std::string errors;
        const std::string environment = "PIPELENS_CONFIG_DIR=" + test_config_directory().string() +
                                        " XDG_CONFIG_HOME=" + test_config_directory().string() +
                                        " timeout 20";
        EXPECT_EQ(run_viewer("--size 800x600 " + arguments, &errors, environment), 2) << arguments;
        const std::string file = arguments.substr(0, arguments.find(' '));
        EXPECT_EQ(errors.rfind("pipelens-view: " + file +
                                   (file == empty.string() ? ": is empty (0 bytes); "
                                                           : ": not a file pipelens reads"),
                               0),
                  0u)
            << errors;
        EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 1) << errors;
    }
    for (const fs::path& file : {text_file, empty, script})
        fs::remove(file);
}

}  // namespace
}  // namespace pipelens::viewer
