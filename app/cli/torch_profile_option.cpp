// The --torch-profile directory: checked, made, and its files named (torch_profile_option.hpp).
#include "app/cli/torch_profile_option.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "engine/experiment/experiment.hpp"
#include "engine/runtime/torch_profile.hpp"

namespace pipelens::cli {

std::string make_torch_profile_directory(const std::string& directory, const std::string& transport,
                                         int rank_count) {
    if (directory.empty())
        return "";
    if (transport == "local" && rank_count > 1)
        throw ExperimentError(fmt::format(
            "--torch-profile: LibTorch's profiler runs once per process, and --transport local "
            "runs the {} ranks as threads of one; give --transport gloo --nproc {}",
            rank_count, rank_count));
    // Each missing folder on the way, with mkdir(2): a pip LibTorch exports its own copy of
    // std::filesystem, which the dynamic linker may bind ahead of libstdc++'s.
    for (std::size_t end = directory.find('/', 1);; end = directory.find('/', end + 1)) {
        const std::string prefix = directory.substr(0, end);
        if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
            throw ExperimentError(fmt::format("--torch-profile: cannot make the directory {}: {}",
                                              prefix, std::strerror(errno)));
        if (end == std::string::npos)
            break;
    }
    struct stat status {};
    if (::stat(directory.c_str(), &status) != 0 || !S_ISDIR(status.st_mode))
        throw ExperimentError(fmt::format("--torch-profile: {} is not a directory", directory));
    return directory;
}

std::vector<std::string> torch_profile_files(const std::string& directory, int world_size) {
    std::vector<std::string> files;
    if (!directory.empty())
        for (int rank = 0; rank < world_size; ++rank) {
            // Only what was written: a rank that could not write its profile said so itself.
            const std::string path = runtime::torch_profile_path(directory, rank);
            std::error_code error;
            if (std::filesystem::file_size(path, error) > 0 && !error)
                files.push_back(path);
        }
    return files;
}

}  // namespace pipelens::cli
