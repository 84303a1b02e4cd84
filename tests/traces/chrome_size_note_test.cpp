// The note `export --chrome` prints for JSON a browser will likely not open: none below the
// size, the file, its size and where else it opens above it.
#include <gtest/gtest.h>

#include "traces/chrome_export.hpp"

namespace pipelens::traces {
namespace {

TEST(ChromeSizeNote, OnlyAFilePastWhatABrowserHoldsGetsOne) {
    EXPECT_EQ(chrome_size_note("run.json", kBrowserJsonBytes - 1), "");
    EXPECT_EQ(chrome_size_note("run.json", std::uintmax_t{3} << 30),
              "run.json is 3.0 GiB: a browser's Perfetto UI holds a whole trace in about 2 GB of "
              "memory, several times its file's size, so it may not open this one; Perfetto's "
              "trace_processor opens it in this machine's memory instead (`trace_processor "
              "--httpd run.json`, then https://ui.perfetto.dev)");
}

}  // namespace
}  // namespace pipelens::traces
