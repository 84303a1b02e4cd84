// The viewer's recent files and where its configuration lives. Only a person opening a file
// adds to the list: screenshot and benchmark runs hold a RecentFiles that is not kept, which
// neither reads nor writes anything, so tests and the benchmark never touch a user's files.
//
// Invariants: paths() is most recent first, absolute, without duplicates, at most kLimit long;
// the file on disk, when kept, holds exactly paths(), one per line.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pipelens::viewer {

// $PIPELENS_CONFIG_DIR when set and not empty (the one override, used by tests), else
// $XDG_CONFIG_HOME/pipelens, else $HOME/.config/pipelens (./.config/pipelens without a HOME).
// Arguments are the variables' values, nullptr when unset.
std::filesystem::path config_directory(const char* pipelens_config_dir, const char* xdg_config_home,
                                       const char* home);
// The same from this process's environment.
std::filesystem::path config_directory_from_environment();

class RecentFiles {
  public:
    static constexpr std::size_t kLimit = 10;

    // Not kept: remember() changes the list in memory only.
    RecentFiles() = default;
    // Kept in `file`, read now (a missing or unreadable file gives an empty list).
    static RecentFiles kept_in(std::filesystem::path file);

    const std::vector<std::string>& paths() const { return paths_; }
    bool kept() const { return file_.has_value(); }
    // Puts `path` first and, when kept, rewrites the file (failures to write are ignored: the
    // list is a convenience, not the user's data).
    void remember(const std::filesystem::path& path);

  private:
    std::optional<std::filesystem::path> file_;
    std::vector<std::string> paths_;
};

}  // namespace pipelens::viewer
