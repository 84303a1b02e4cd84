// Where an importer's bytes come from: a file, memory, or zlib's inflate over either, read in
// chunks into the caller's buffer. Errors are ImportError naming the file (and, for a corrupt
// or truncated gzip stream, the compressed byte offset).
//
// Invariants: read() returns 0 only at the end of the input; a GzipSource reads concatenated
// gzip members as one stream, as gunzip does, and holds one 256 KiB input chunk.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "engine/import/imported_run.hpp"

namespace pipelens::import {

// Where the parser's bytes come from: a file, memory, or zlib over either.
class ByteSource {
  public:
    virtual ~ByteSource() = default;
    // Up to `capacity` bytes into `out`; returns 0 only at the end of the input.
    virtual std::size_t read(char* out, std::size_t capacity) = 0;
};

class MemorySource final : public ByteSource {
  public:
    explicit MemorySource(std::string_view text) : rest_(text) {}
    std::size_t read(char* out, std::size_t capacity) override {
        const std::size_t n = std::min(capacity, rest_.size());
        std::memcpy(out, rest_.data(), n);
        rest_.remove_prefix(n);
        return n;
    }

  private:
    std::string_view rest_;
};

class FileSource final : public ByteSource {
  public:
    explicit FileSource(const std::string& path);
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;
    ~FileSource() override;

    std::size_t read(char* out, std::size_t capacity) override;

  private:
    std::string path_;
    int fd_ = -1;
};

// The first bytes of `inner`, already read to look at the magic number, then the rest of it.
class PeekedSource final : public ByteSource {
  public:
    PeekedSource(ByteSource& inner, std::string_view head) : inner_(inner), head_(head) {}
    std::size_t read(char* out, std::size_t capacity) override {
        if (head_.empty())
            return inner_.read(out, capacity);
        const std::size_t n = std::min(capacity, head_.size());
        std::memcpy(out, head_.data(), n);
        head_.remove_prefix(n);
        return n;
    }

  private:
    ByteSource& inner_;
    std::string_view head_;  // points into the caller's array
};

// zlib's inflate over compressed bytes; gzip or zlib headers (windowBits 15 + 32), and
// concatenated gzip members read as one stream, as gunzip does.
class GzipSource final : public ByteSource {
  public:
    GzipSource(ByteSource& compressed, const std::string& name);
    GzipSource(const GzipSource&) = delete;
    GzipSource& operator=(const GzipSource&) = delete;
    ~GzipSource() override;

    std::size_t read(char* out, std::size_t capacity) override;

  private:
    [[noreturn]] void fail(int status) const;

    ByteSource& compressed_;
    const std::string& name_;
    std::unique_ptr<char[]> input_;
    z_stream stream_{};
    bool input_ended_ = false;
    bool member_ended_ = false;
    std::uint64_t earlier_members_ = 0;  // compressed bytes of the members before this one
};

}  // namespace pipelens::import
