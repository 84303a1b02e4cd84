// Recent files: one path per line, read once at start and rewritten whole on each open.
#include "app/viewer/recent_files.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace pipelens::viewer {
namespace {

bool set(const char* value) {
    return value != nullptr && *value != '\0';
}

}  // namespace

std::filesystem::path config_directory(const char* pipelens_config_dir, const char* xdg_config_home,
                                       const char* home) {
    if (set(pipelens_config_dir))
        return pipelens_config_dir;
    if (set(xdg_config_home))
        return std::filesystem::path(xdg_config_home) / "pipelens";
    return std::filesystem::path(set(home) ? home : ".") / ".config" / "pipelens";
}

std::filesystem::path config_directory_from_environment() {
    return config_directory(std::getenv("PIPELENS_CONFIG_DIR"), std::getenv("XDG_CONFIG_HOME"),
                            std::getenv("HOME"));
}

RecentFiles RecentFiles::kept_in(std::filesystem::path file) {
    RecentFiles recent;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line) && recent.paths_.size() < kLimit;)
        if (!line.empty() &&
            std::find(recent.paths_.begin(), recent.paths_.end(), line) == recent.paths_.end())
            recent.paths_.push_back(line);
    recent.file_ = std::move(file);
    return recent;
}

void RecentFiles::remember(const std::filesystem::path& path) {
    std::error_code ignored;
    // One entry per file, however it was reached: "../t/a.db" from two folders is one file.
    std::filesystem::path absolute = std::filesystem::absolute(path, ignored).lexically_normal();
    if (std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, ignored);
        !ignored)
        absolute = std::move(canonical);
    const std::string text = absolute.empty() ? path.string() : absolute.string();
    std::erase(paths_, text);
    paths_.insert(paths_.begin(), text);
    if (paths_.size() > kLimit)
        paths_.resize(kLimit);
    if (!file_)
        return;
    std::filesystem::create_directories(file_->parent_path(), ignored);
    std::ofstream out(*file_);
    for (const std::string& recent : paths_)
        out << recent << '\n';
}

}  // namespace pipelens::viewer
