// The writer lock: an exclusive, non-blocking flock on the trace file itself.
#include "traces/writer_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace pipelens::traces {

WriterLock::~WriterLock() {
    if (descriptor_ >= 0)
        ::close(descriptor_);
}

bool WriterLock::acquire(const std::filesystem::path& path, std::string& why,
                         std::chrono::milliseconds wait) {
    descriptor_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (descriptor_ < 0) {
        why = std::strerror(errno);
        return false;
    }
    // Polled rather than a blocking flock, which no timeout can end.
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        if (::flock(descriptor_, LOCK_EX | LOCK_NB) == 0)
            return true;
        if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    why = errno == EWOULDBLOCK ? "database is locked (another pipelens process is writing it)"
                               : std::strerror(errno);
    return false;
}

}  // namespace pipelens::traces
