// How long the calling thread has waited for a core: the time it was ready to run but another
// thread held every core it may use (the kernel's run-queue delay, /proc/thread-self/schedstat's
// second field). A rank that waits for cores runs slower than its pipeline would on a machine of
// its own, and every time measured on it (its actions, the costs calibrated from them) holds the
// wait: a run records it per rank so a report and `calibrate` can say so instead of hiding it.
//
// Invariants: the file is opened by the thread that is measured (thread-self names the opener),
// and read with pread on one descriptor, so a reading costs one system call and no allocation;
// where the kernel does not keep the figure (no CONFIG_SCHED_INFO, not Linux) every reading is
// none, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pipelens::run_record {

class RunQueueWait {
  public:
    RunQueueWait();  // opens the calling thread's figure
    ~RunQueueWait();
    RunQueueWait(const RunQueueWait&) = delete;
    RunQueueWait& operator=(const RunQueueWait&) = delete;

    // The thread's run-queue delay since it started, in ns; none when it cannot be read.
    std::optional<std::int64_t> waited_ns() const;

  private:
    int descriptor_ = -1;
};

// The run-queue delay in a schedstat line ("<on cpu ns> <run-queue ns> <timeslices>"); none
// when the text is not such a line, or says the thread was never given a core (the kernel keeps
// no figure).
std::optional<std::int64_t> parse_run_queue_delay(std::string_view schedstat);

}  // namespace pipelens::run_record
