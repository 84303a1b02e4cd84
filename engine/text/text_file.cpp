// Whole-file reads of text inputs, refused before reading where they cannot end well
// (text_file.hpp).
#include "engine/text/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

namespace pipelens {

void check_text_file(const std::filesystem::path& path) {
    using Problem = TextFileError::Problem;
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(path, error);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        throw TextFileError(
            Problem::not_a_file,
            fmt::format("{}: is not a regular file ({}); give the file itself", path.string(),
                        std::filesystem::is_directory(status) ? "a directory"
                                                              : "a FIFO, device or socket"));
    if (const std::uintmax_t size = std::filesystem::file_size(path, error);
        !error && size > kLargestTextFile)
        throw TextFileError(Problem::too_large,
                            fmt::format("{}: is {} bytes, more than a text input may be ({})",
                                        path.string(), size, kLargestTextFile));
}

std::string read_text_file(const std::filesystem::path& path) {
    using Problem = TextFileError::Problem;
    check_text_file(path);
    errno = 0;
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        const std::string reason = std::strerror(errno != 0 ? errno : ENOENT);
        throw TextFileError(Problem::cannot_open,
                            fmt::format("{}: cannot open it: {}", path.string(), reason), reason);
    }
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

}  // namespace pipelens
