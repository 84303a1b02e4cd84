// `--nproc N`: starts N copies of this pipelens command as rank processes with torchrun's
// environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and
// waits for them. When one rank fails, the others get a grace period to stop on their own
// (their watchdogs see the abort) before they are killed, so the launcher never hangs.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace pipelens::cli {

struct LaunchResult {
    int exit_code = 0;                  // the worst rank's exit code
    std::vector<std::string> problems;  // "rank 2 was killed by signal 9", ...
    // Per rank: how it died on its own ("killed by signal 9 (Killed)"), empty when it exited
    // (or was only killed here, after the grace period).
    std::vector<std::string> deaths;
    // The signal (SIGINT, SIGTERM, SIGHUP) that stopped the launcher, 0 when none did: it was
    // passed on to every rank still running, and those that outlived the grace were killed.
    int interrupted_by = 0;
};

// A rank process the launcher started: ends with it, even when the launcher is killed (SIGKILL
// cannot be passed on), and exits at once when its launcher is already gone. Call first thing.
void end_with_launcher();

// Called as soon as a rank is seen to end without success, with how ("killed by signal 9
// (Killed)", "exited with code 2"); it must not throw.
using OnRankEnd = std::function<void(int rank, const std::string& how)>;

// `arguments` is the command line each rank runs (argv without the program and --nproc).
LaunchResult launch_ranks(const std::vector<std::string>& arguments, int process_count,
                          const std::string& master_address, int master_port,
                          std::chrono::milliseconds grace, const OnRankEnd& ended = {});

}  // namespace pipelens::cli
