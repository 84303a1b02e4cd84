// The writer lock: an exclusive, non-blocking flock on the trace file itself.
#include "traces/writer_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pipelens::traces {

WriterLock::~WriterLock() {
    if (descriptor_ >= 0)
        ::close(descriptor_);
}

bool WriterLock::acquire(const std::filesystem::path& path, std::string& why) {
    descriptor_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (descriptor_ < 0) {
        why = std::strerror(errno);
        return false;
    }
    if (::flock(descriptor_, LOCK_EX | LOCK_NB) == 0)
        return true;
    why = errno == EWOULDBLOCK ? "database is locked (another pipelens process is writing it)"
                               : std::strerror(errno);
    return false;
}

}  // namespace pipelens::traces
