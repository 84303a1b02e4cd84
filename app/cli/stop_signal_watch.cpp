// See stop_signal_watch.hpp. The message is the launcher's (run_command.cpp), less the ranks it
// asks to stop: threads end with the process.
#include "app/cli/stop_signal_watch.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

namespace pipelens::cli {

sigset_t stop_signals() {
    sigset_t signals;
    sigemptyset(&signals);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP})
        sigaddset(&signals, signal);
    return signals;
}

const char* stop_signal_name(int signal) {
    return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "SIGHUP";
}

StopSignalWatch::StopSignalWatch() {
    const sigset_t signals = stop_signals();
    pthread_sigmask(SIG_BLOCK, &signals, &previous_);
    watcher_ = std::jthread([](std::stop_token stop) {
        const sigset_t watched = stop_signals();
        constexpr timespec kPoll{0, 100'000'000};  // how soon the watch ends when asked
        while (!stop.stop_requested()) {
            const int signal = sigtimedwait(&watched, nullptr, &kPoll);
            if (signal <= 0)
                continue;
            fmt::print(stderr, "pipelens run: stopped by {}: the run is not recorded\n",
                       stop_signal_name(signal));
            std::fflush(stderr);
            std::_Exit(128 + signal);
        }
    });
}

StopSignalWatch::~StopSignalWatch() {
    watcher_.request_stop();
    watcher_.join();
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace pipelens::cli
