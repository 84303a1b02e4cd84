// Reading a user's text input whole (an experiment, a schedule CSV, a sweep's results): only a
// regular file, and at most kLargestTextFile bytes, so a FIFO, /dev/zero or a runaway file is
// refused at once by name instead of blocking forever or filling memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

namespace pipelens {

// Far above any schedule or experiment a machine can simulate (a CSV of 10^8 actions is about
// 600 MB), far below what reading a device whole would take.
inline constexpr std::uintmax_t kLargestTextFile = std::uintmax_t{1} << 30;

class TextFileError : public std::runtime_error {
  public:
    enum class Problem { cannot_open, not_a_file, too_large };
    TextFileError(Problem problem, const std::string& message, std::string reason = {})
        : std::runtime_error(message), problem_(problem), reason_(std::move(reason)) {}
    Problem problem() const { return problem_; }
    // cannot_open: the system's reason ("No such file or directory"), for a caller that says
    // what the file was for in its own words.
    const std::string& reason() const { return reason_; }

  private:
    Problem problem_;
    std::string reason_;
};

// What read_text_file refuses before reading: a path that is no regular file, and a file of more
// than kLargestTextFile bytes (compressed or not: what gzip holds is never much smaller than the
// file). Throws TextFileError (not_a_file, too_large); a missing file passes.
void check_text_file(const std::filesystem::path& path);

// The file's bytes. Throws TextFileError: cannot_open ("PATH: cannot open it: REASON"),
// not_a_file (a directory, FIFO, device or socket) or too_large, each message naming the path.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace pipelens
