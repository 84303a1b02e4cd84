// The sidebar: open a file (path box, a small open dialog, recent files), the runs to show and
// compare, search, the selected action's details and the largest differences of a comparison.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace pipelens::viewer {

struct ViewerState;

// A subdirectory or .db file in the open dialog.
struct BrowseEntry {
    std::filesystem::path path;
    std::string name;  // as shown: "runs/" or "trace.db"
    bool directory = false;
};

struct SidebarState {
    std::string search;
    std::string open_path_input;
    std::string browse_directory;  // where the open dialog is
    std::string browse_listed;     // the directory browse_entries were listed from
    std::vector<BrowseEntry> browse_entries;
    std::string browse_error;
};

void draw_sidebar(ViewerState& state);

}  // namespace pipelens::viewer
