// A trace path in the temporary directory, unique to this test process, with no file (nor WAL
// or shared-memory index) left from an earlier run. The paths outlive the tests that make them
// (helpers return them), so the files go when the test process exits: a sweep at static
// destruction removes the files of this process's pid, and a test run leaves nothing in /tmp.
// A forked child has another pid, so its exit never touches its parent's files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace pipelens::testing {

inline std::string fresh_trace_prefix() {
    return "pipelens_" + std::to_string(::getpid()) + "_";
}

struct FreshTraceSweep {
    FreshTraceSweep() = default;
    FreshTraceSweep(const FreshTraceSweep&) = delete;
    FreshTraceSweep& operator=(const FreshTraceSweep&) = delete;
    ~FreshTraceSweep() {
        std::error_code error;
        const std::string prefix = fresh_trace_prefix();
        std::filesystem::directory_iterator entries(std::filesystem::temp_directory_path(error),
                                                    error);
        for (; !error && entries != std::filesystem::directory_iterator(); entries.increment(error))
            if (entries->path().filename().string().starts_with(prefix))
                std::filesystem::remove(entries->path(), error);
    }
};

inline std::filesystem::path fresh_trace(const std::string& name) {
    static const FreshTraceSweep sweep_at_exit;
    const auto path =
        std::filesystem::temp_directory_path() / (fresh_trace_prefix() + name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"})
        std::filesystem::remove(path.string() + suffix);
    return path;
}

}  // namespace pipelens::testing
