// The byte sources (byte_source.hpp): POSIX reads that retry on EINTR, and inflate with gzip
// or zlib headers.
#include "engine/import/byte_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include <fmt/format.h>

namespace pipelens::import {
namespace {

constexpr std::size_t kCompressedChunk = 256 * 1024;

}  // namespace

FileSource::FileSource(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
        throw ImportError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
}

FileSource::~FileSource() {
    ::close(fd_);
}

std::size_t FileSource::read(char* out, std::size_t capacity) {
    for (;;) {
        const ssize_t n = ::read(fd_, out, capacity);
        if (n >= 0)
            return static_cast<std::size_t>(n);
        if (errno != EINTR)
            throw ImportError(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
    }
}

GzipSource::GzipSource(ByteSource& compressed, const std::string& name)
    : compressed_(compressed), name_(name), input_(new char[kCompressedChunk]) {
    if (inflateInit2(&stream_, 15 + 32) != Z_OK)
        throw ImportError(fmt::format("{}: cannot start gzip decompression", name_));
}

GzipSource::~GzipSource() {
    inflateEnd(&stream_);
}

std::size_t GzipSource::read(char* out, std::size_t capacity) {
    const auto wanted = static_cast<uInt>(std::min<std::size_t>(capacity, UINT_MAX));
    stream_.next_out = reinterpret_cast<Bytef*>(out);
    stream_.avail_out = wanted;
    while (stream_.avail_out == wanted) {
        if (stream_.avail_in == 0 && !input_ended_) {
            const std::size_t n = compressed_.read(input_.get(), kCompressedChunk);
            input_ended_ = n == 0;
            stream_.next_in = reinterpret_cast<Bytef*>(input_.get());
            stream_.avail_in = static_cast<uInt>(n);
        }
        if (member_ended_) {
            if (stream_.avail_in == 0) {
                if (input_ended_)
                    break;
                continue;
            }
            earlier_members_ += stream_.total_in;  // another member follows
            inflateReset(&stream_);
            member_ended_ = false;
        }
        const int status = inflate(&stream_, Z_NO_FLUSH);
        if (status == Z_STREAM_END) {
            member_ended_ = true;
        } else if (status == Z_BUF_ERROR && stream_.avail_in == 0) {  // needs more input
            if (input_ended_)
                throw ImportError(fmt::format(
                    "{}: the gzip stream ends early after {} compressed bytes (truncated file?)",
                    name_, earlier_members_ + stream_.total_in));
        } else if (status != Z_OK) {
            fail(status);
        }
    }
    return wanted - stream_.avail_out;
}

void GzipSource::fail(int status) const {
    throw ImportError(fmt::format("{}: corrupt gzip stream at compressed byte {}: {}", name_,
                                  earlier_members_ + stream_.total_in,
                                  stream_.msg ? stream_.msg : zError(status)));
}

}  // namespace pipelens::import
