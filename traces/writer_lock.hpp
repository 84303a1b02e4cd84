// One writer per file, held for the writer's whole life: an flock on the trace file, which the
// kernel releases when the process exits or is killed. SQLite's own write lock is free for a
// moment between a COMMIT and the next BEGIN, long enough for a second writer to slip in on a
// loaded machine; flock has no such gap, and it does not touch SQLite's fcntl locks, so readers
// are unaffected.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace pipelens::traces {

class WriterLock {
  public:
    WriterLock() = default;
    WriterLock(const WriterLock&) = delete;
    WriterLock& operator=(const WriterLock&) = delete;
    ~WriterLock();

    // False when another writer holds the file for longer than `wait` (or the file cannot be
    // opened); `why` says which.
    bool acquire(const std::filesystem::path& path, std::string& why,
                 std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  private:
    int descriptor_ = -1;
};

}  // namespace pipelens::traces
