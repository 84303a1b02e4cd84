// Files dropped on the window or typed in the path box: a trace opens at once (as it always
// has); a schedule or files to import are handed to the model (file_drop.hpp), which works on
// them off the UI thread while this panel shows what it is doing; once done, the trace it wrote
// opens, and a failure is a modal dialog with the engine's message (the file and the line or
// byte), which stays until dismissed.
#pragma once

#include <filesystem>
#include <vector>

namespace pipelens::viewer {

struct ViewerState;

struct DropPanelState {
    double started_s = -1;  // ImGui time the drop being worked on started (for its elapsed time)
};

// What the window's drop callback, the path box and --drop call.
void drop_files(ViewerState& state, const std::vector<std::filesystem::path>& files);
// Opens what a finished drop wrote (and keeps its hang, its report, its error for the dialog);
// `wait` blocks until the drop in progress finishes (screenshots). True when one was applied.
bool apply_finished_drop(ViewerState& state, bool wait = false);
// The progress window while a drop is worked on, and the error dialog.
void draw_drop_panel(ViewerState& state, float width, float height);

}  // namespace pipelens::viewer
