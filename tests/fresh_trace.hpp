// Paths in the temporary directory that are this test process's own: named
// pipelens_<pid>_<name>, with no file (nor a trace's WAL or shared-memory index) left from an
// earlier run. The paths outlive the tests that make them (helpers return them), so their files
// go when the test process exits: a sweep at static destruction removes everything under this
// pid's prefix, and a test run leaves nothing of it in /tmp. A forked child has another pid, so
// its exit never touches its parent's files.
#pragma once

#include <unistd.h>

#include "remove_tree.hpp"

#include <filesystem>
#include <string>
#include <system_error>

namespace pipelens::testing {

inline std::string process_temp_prefix() {
    return "pipelens_" + std::to_string(::getpid()) + "_";
}

struct ProcessTempSweep {
    ProcessTempSweep() = default;
    ProcessTempSweep(const ProcessTempSweep&) = delete;
    ProcessTempSweep& operator=(const ProcessTempSweep&) = delete;
    ~ProcessTempSweep() {
        std::error_code error;
        const std::string prefix = process_temp_prefix();
        std::filesystem::directory_iterator entries(std::filesystem::temp_directory_path(error),
                                                    error);
        for (; !error && entries != std::filesystem::directory_iterator(); entries.increment(error))
            if (entries->path().filename().string().starts_with(prefix)) {
                remove_tree(entries->path().string());  // what will not go is left
            }
    }
};

// temp_directory_path()/pipelens_<pid>_<name>, removed when the process exits.
inline std::filesystem::path process_temp_path(const std::string& name) {
    static const ProcessTempSweep sweep_at_exit;
    return std::filesystem::temp_directory_path() / (process_temp_prefix() + name);
}

inline std::filesystem::path fresh_trace(const std::string& name) {
    const auto path = process_temp_path(name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"})
        std::filesystem::remove(path.string() + suffix);
    return path;
}

}  // namespace pipelens::testing
