// Opening traces and runs, selection, recent files.
#include "app/viewer/viewer_state.hpp"

#include <cstdlib>
#include <fstream>

#include "traces/trace_error.hpp"

namespace pipelens::viewer {
namespace {

std::filesystem::path recent_files_path() {
    const char* config = std::getenv("XDG_CONFIG_HOME");
    const char* home = std::getenv("HOME");
    std::filesystem::path directory =
        config != nullptr && *config != '\0'
            ? std::filesystem::path(config)
            : std::filesystem::path(home != nullptr ? home : ".") / ".config";
    return directory / "pipelens" / "recent_files";
}

}  // namespace

void open_trace(ViewerState& state, const std::filesystem::path& path,
                std::optional<std::int64_t> run_id) {
    try {
        // The viewer reads every row of a run, which meets any damaged page anyway.
        traces::TraceReaderOptions options;
        options.check_integrity = false;
        auto reader = std::make_unique<traces::TraceReader>(path, options);
        std::vector<traces::RunRecord> runs = reader->runs();
        if (runs.empty())
            throw traces::TraceError(path.string() + ": the trace holds no runs yet");
        state.reader = std::move(reader);
        state.runs = std::move(runs);
        state.path = path;
        state.error.clear();
        state.compared.reset();
        state.compared_run_id = 0;
        show_run(state, run_id.value_or(state.runs.back().id));
        remember_recent_file(state, path.string());
    } catch (const std::exception& error) {
        state.error = error.what();
    }
}

void show_run(ViewerState& state, std::int64_t run_id) {
    try {
        state.model = TimelineModel::load(*state.reader, run_id);
        state.run_id = run_id;
        state.events = state.reader->events(run_id);
        state.errors = state.reader->errors(run_id);
        state.sharding = state.reader->sharding(run_id);
        state.selected.reset();
        state.hovered.reset();
        state.event_scrub = -1;
        state.sharding_selected = 0;
        state.fitted = false;
        state.error.clear();
    } catch (const std::exception& error) {
        state.error = error.what();
    }
}

void compare_with(ViewerState& state, std::int64_t run_id) {
    state.compared.reset();
    state.compared_run_id = 0;
    if (run_id == 0 || run_id == state.run_id)
        return;
    try {
        state.compared = TimelineModel::load(*state.reader, run_id);
        state.compared_run_id = run_id;
    } catch (const std::exception& error) {
        state.error = error.what();
    }
}

bool select_action(ViewerState& state, const std::string& label) {
    if (!state.model)
        return false;
    const auto found = state.model->find(label);
    if (!found)
        return false;
    state.selected = found;
    const TimelineAction& action = state.model->action(*found);
    const std::int64_t span = state.geometry.view_end - state.geometry.view_start;
    const std::int64_t centre = (action.start_ns + action.end_ns) / 2;
    if (action.start_ns < state.geometry.view_start || action.end_ns > state.geometry.view_end) {
        state.geometry.view_start = centre - span / 2;
        state.geometry.view_end = state.geometry.view_start + span;
    }
    return true;
}

std::vector<std::string> load_recent_files() {
    std::vector<std::string> files;
    std::ifstream file(recent_files_path());
    for (std::string line; std::getline(file, line);)
        if (!line.empty())
            files.push_back(line);
    return files;
}

void remember_recent_file(ViewerState& state, const std::string& path) {
    const std::string absolute = std::filesystem::absolute(path).string();
    std::erase(state.recent_files, absolute);
    state.recent_files.insert(state.recent_files.begin(), absolute);
    if (state.recent_files.size() > 10)
        state.recent_files.resize(10);
    std::error_code ignored;
    std::filesystem::create_directories(recent_files_path().parent_path(), ignored);
    std::ofstream file(recent_files_path());
    for (const std::string& recent : state.recent_files)
        file << recent << '\n';
}

}  // namespace pipelens::viewer
