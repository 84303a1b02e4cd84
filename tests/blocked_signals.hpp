// Whether a process has a signal blocked, read from /proc (its main thread's SigBlk mask): a
// test waits for a run's watch of the stop signals to be in place before sending one, so what
// it sees does not depend on how far the run had got.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <string>

namespace pipelens::testing {

inline bool blocks_signal(pid_t pid, int signal) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("SigBlk:", 0) == 0)
            return (std::stoull(line.substr(7), nullptr, 16) >> (signal - 1)) & 1;
    return false;
}

}  // namespace pipelens::testing
