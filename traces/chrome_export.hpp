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

}  // namespace pipelens::traces
