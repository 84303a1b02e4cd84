// Export of one run to the Chrome trace event format (JSON), which Perfetto and
// chrome://tracing open: one process per rank ("rank N"), a compute thread and a communication
// thread in each, every action an `X` (complete) event named with its PyTorch action text, every
// send/recv pair a flow arrow from the send to its recv, and memory as a counter track.
//
// Invariants: timestamps are microseconds with nanosecond decimals (the format's unit), so no
// precision is lost; the output is written as it is read, in one pass, without holding the
// JSON in memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "traces/trace_reader.hpp"

namespace pipelens::traces {

// The output could not take the trace (a full disk); errno says why.
class ChromeWriteError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct ChromeExportCounts {
    std::int64_t actions = 0;
    std::int64_t flows = 0;
    std::int64_t memory_samples = 0;
};

// Writes the run as one JSON object to `out`. Throws TraceError on a read failure and
// std::runtime_error when writing fails.
ChromeExportCounts write_chrome_trace(const TraceReader& reader, std::int64_t run_id,
                                      std::FILE* out);

// JSON past this size seldom opens in a browser: Perfetto's UI holds the whole trace in the
// page's memory (about 2 GB, several times the file's size, by Perfetto's own documentation),
// and chrome://tracing stops at a few hundred MB.
inline constexpr std::uintmax_t kBrowserJsonBytes = std::uintmax_t{512} << 20;

// What to say of a written file of `bytes` a browser will likely not open; empty below
// kBrowserJsonBytes.
std::string chrome_size_note(const std::string& path, std::uintmax_t bytes);

}  // namespace pipelens::traces
