// A run whose ranks are threads of this process (`--transport local`) stops on Ctrl-C, a job
// scheduler's SIGTERM or a closed terminal's SIGHUP as a launcher's ranks do: it says which
// signal stopped it and that the run is not recorded, and exits 128 + the signal, instead of
// vanishing without a word.
//
// Invariant: while a StopSignalWatch lives, SIGINT, SIGTERM and SIGHUP are blocked in the thread
// that made it and in every thread started after (they inherit the mask), and one thread of its
// own takes them with sigtimedwait: no handler, no global state.
#pragma once

#include <signal.h>

#include <thread>

namespace pipelens::cli {

// The signals a run stops on: SIGINT, SIGTERM, SIGHUP.
sigset_t stop_signals();
// "SIGINT", "SIGTERM" or "SIGHUP".
const char* stop_signal_name(int signal);

class StopSignalWatch {
  public:
    StopSignalWatch();
    ~StopSignalWatch();
    StopSignalWatch(const StopSignalWatch&) = delete;
    StopSignalWatch& operator=(const StopSignalWatch&) = delete;

  private:
    sigset_t previous_{};
    std::jthread watcher_;
};

}  // namespace pipelens::cli
