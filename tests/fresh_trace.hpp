// A trace path in the temporary directory, unique to this test process, with no file (nor WAL
// or shared-memory index) left from an earlier run.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace pipelens::testing {

inline std::filesystem::path fresh_trace(const std::string& name) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("pipelens_" + std::to_string(::getpid()) + "_" + name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"})
        std::filesystem::remove(path.string() + suffix);
    return path;
}

}  // namespace pipelens::testing
