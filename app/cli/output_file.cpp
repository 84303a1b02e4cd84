// Output files written whole or not at all (output_file.hpp).
#include "app/cli/output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "traces/file_kind.hpp"

namespace pipelens::cli {
namespace {

[[noreturn]] void fail(const std::string& path, int error) {
    throw CommandFailure(kExitUsage, fmt::format("pipelens: {}: cannot write the file: {}", path,
                                                 std::strerror(error)));
}

// `fill` run on the stream, which is then flushed and (when asked) closed, every step checked:
// 0, or the errno of the first that failed. An exception from `fill` closes the stream first.
int fill_and_finish(std::FILE* stream, const OutputFill& fill, bool close) {
    int error = 0;
    try {
        error = fill(stream);
    } catch (...) {
        if (close)
            std::fclose(stream);
        throw;
    }
    const auto step = [&](auto&& call) {
        errno = 0;
        if (!call() && error == 0)
            error = errno != 0 ? errno : EIO;
    };
    step([&] { return std::fflush(stream) == 0; });
    if (close)
        step([&] { return std::fclose(stream) == 0; });
    return error;
}

// The same file, or the same name for one not written yet (an --out made later, an output
// named twice): relative names are made absolute first, or "x" and "./x" would differ.
bool same_file(const std::string& left, const std::string& right) {
    std::error_code error;
    if (std::filesystem::exists(left, error) && std::filesystem::exists(right, error))
        return std::filesystem::equivalent(left, right, error);
    const auto canonical = [&](const std::string& name) {
        return std::filesystem::weakly_canonical(std::filesystem::absolute(name, error), error);
    };
    return canonical(left) == canonical(right);
}

// An output that cannot be written is said before the command's work, not after it (a sweep's
// grid, a merge's copied runs): the directory a new or regular file is written into beside
// itself, or the node written in place (a FIFO, a device), must take writing. The words are the
// ones a failed write would have used.
void refuse_unwritable(const std::string& path) {
    std::error_code ignored;
    const std::filesystem::file_status status = std::filesystem::status(path, ignored);
    if (std::filesystem::is_directory(status))
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens: {}: is a directory, not a file", path));
    const bool in_place =
        std::filesystem::exists(status) &&
        (!std::filesystem::is_regular_file(status) ||
         std::filesystem::is_symlink(std::filesystem::symlink_status(path, ignored)));
    std::filesystem::path directory = std::filesystem::path(path).parent_path();
    if (directory.empty())
        directory = ".";
    const std::string checked = in_place ? path : directory.string();
    if (!in_place && !std::filesystem::is_directory(directory, ignored))
        fail(path, std::filesystem::exists(directory, ignored) ? ENOTDIR : ENOENT);
    if (::access(checked.c_str(), in_place ? W_OK : W_OK | X_OK) != 0)
        fail(path, errno);
}

}  // namespace

void refuse_output_over(const std::string& path, std::string_view option,
                        const std::vector<std::string>& inputs) {
    if (path.empty() || path == "-")
        return;
    for (const std::string& input : inputs)
        if (!input.empty() && same_file(path, input))
            throw CommandFailure(kExitUsage,
                                 fmt::format("pipelens: {} {} is also an input of this command; "
                                             "writing it would replace what is read: name "
                                             "another file",
                                             option, path));
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error) &&
        traces::file_kind_of(path) == traces::FileKind::sqlite)
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens: {} {} is a pipelens trace (SQLite); writing "
                                         "it would replace its runs: name another file",
                                         option, path));
    refuse_unwritable(path);
}

void refuse_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                    const std::vector<std::string>& inputs,
                    const std::vector<std::pair<std::string, std::string>>& also_written) {
    const auto refuse_shared = [](const std::pair<std::string, std::string>& earlier,
                                  const std::string& option, const std::string& path) {
        if (!earlier.second.empty() && earlier.second != "-" && same_file(earlier.second, path))
            throw CommandFailure(kExitUsage,
                                 fmt::format("pipelens: {} and {} both name {}: give each "
                                             "output a file of its own",
                                             earlier.first, option, path));
    };
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const auto& [option, path] = outputs[i];
        refuse_output_over(path, option, inputs);
        if (path.empty() || path == "-")
            continue;
        for (const auto& written : also_written)
            refuse_shared(written, option, path);
        for (std::size_t k = 0; k < i; ++k)
            refuse_shared(outputs[k], option, path);
    }
}

void write_output_with(const std::string& path, const OutputFill& fill) {
    refuse_output_over(path, "the output");
    if (path == "-") {
        if (const int error = fill_and_finish(stdout, fill, false); error != 0)
            fail("standard output", error);
        return;
    }
    std::error_code ignored;
    const std::filesystem::file_status status = std::filesystem::status(path, ignored);
    const bool linked = std::filesystem::is_symlink(std::filesystem::symlink_status(path, ignored));
    // A link is written through, a dangling one too: replacing it would break the link.
    if ((std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) || linked) {
        if (std::filesystem::is_directory(status))
            throw CommandFailure(kExitUsage,
                                 fmt::format("pipelens: {}: is a directory, not a file", path));
        std::FILE* stream = std::fopen(path.c_str(), "wb");
        if (stream == nullptr)
            fail(path, errno);
        if (const int error = fill_and_finish(stream, fill, true); error != 0)
            fail(path, error);
        return;
    }
    const std::string partial = path + ".partial";
    std::FILE* stream = std::fopen(partial.c_str(), "wb");
    if (stream == nullptr)
        fail(path, errno);
    int error = 0;
    try {
        error = fill_and_finish(stream, fill, true);
    } catch (...) {
        std::filesystem::remove(partial, ignored);
        throw;
    }
    if (error == 0) {
        std::error_code renamed;
        std::filesystem::rename(partial, path, renamed);
        error = renamed.value();
    }
    if (error != 0) {
        std::filesystem::remove(partial, ignored);
        fail(path, error);
    }
}

void write_output_file(const std::string& path, std::string_view content) {
    write_output_with(path, [&](std::FILE* stream) {
        errno = 0;
        if (std::fwrite(content.data(), 1, content.size(), stream) == content.size())
            return 0;
        return errno != 0 ? errno : EIO;
    });
}

}  // namespace pipelens::cli
