// Opening traces and runs, selection.
#include "app/viewer/viewer_state.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "traces/trace_error.hpp"

namespace pipelens::viewer {
namespace {

// Pairs each action of the shown run with the compared run's action of the same text (the
// first by rank, as TimelineModel::find), once, so drawing a frame never searches.
void match_compared(ViewerState& state) {
    state.compared_durations.clear();
    state.largest_differences.clear();
    if (!state.compared || !state.model)
        return;
    std::unordered_map<std::string_view, std::int64_t> durations;
    for (const RankTimeline& rank : state.compared->ranks())
        for (const Lane* lane : {&rank.compute, &rank.communication})
            for (const TimelineAction& action : lane->actions)
                durations.emplace(state.compared->label(action), action.end_ns - action.start_ns);
    state.compared_durations.assign(static_cast<std::size_t>(state.model->label_id_limit()), -1);
    std::vector<ViewerState::Difference> differences;
    for (const RankTimeline& rank : state.model->ranks())
        for (const Lane* lane : {&rank.compute, &rank.communication})
            for (const TimelineAction& action : lane->actions) {
                const std::string_view label = state.model->label(action);
                const auto found = durations.find(label);
                if (found == durations.end())
                    continue;
                state.compared_durations[action.label] = found->second;
                if (lane == &rank.compute)
                    differences.push_back(
                        {std::string(label), (action.end_ns - action.start_ns) - found->second});
            }
    const std::size_t kept = std::min<std::size_t>(8, differences.size());
    std::partial_sort(differences.begin(), differences.begin() + static_cast<std::ptrdiff_t>(kept),
                      differences.end(), [](const auto& left, const auto& right) {
                          return std::abs(left.delta_ns) > std::abs(right.delta_ns);
                      });
    differences.resize(kept);
    state.largest_differences = std::move(differences);
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
        state.error.clear();
        state.compared.reset();
        state.compared_run_id = 0;
        show_run(state, run_id.value_or(state.runs.back().id));
        state.recent_files.remember(path);
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
        state.sharding_strategies.clear();
        for (const traces::ShardingRecord& decision : state.sharding)
            state.sharding_strategies.push_back(
                nlohmann::json::parse(decision.strategies, nullptr, false));
        state.selected.reset();
        state.hovered.reset();
        state.event_scrub = -1;
        state.chosen_error = -1;
        state.replayed_event = -1;
        state.sharding_selected = 0;
        state.sharding_tensor = -1;
        state.sharding_scroll_pending = true;
        state.fitted = false;
        state.error.clear();
        match_compared(state);
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
    match_compared(state);
}

bool select_action(ViewerState& state, const std::string& label) {
    if (!state.model)
        return false;
    const auto found = state.model->find(label);
    if (!found)
        return false;
    state.selected = found;
    const TimelineAction& action = state.model->action(*found);
    bring_into_view(state, action.start_ns, action.end_ns);
    return true;
}

bool choose_error(ViewerState& state, int index) {
    if (index < 0 || index >= static_cast<int>(state.errors.size()))
        return false;
    state.chosen_error = index;
    const traces::ErrorRecord& error = state.errors[index];
    if ((error.action.empty() || !select_action(state, error.action)) && error.time_ns)
        bring_into_view(state, *error.time_ns, *error.time_ns);
    return true;
}

void bring_into_view(ViewerState& state, std::int64_t start_ns, std::int64_t end_ns) {
    const std::int64_t span = state.geometry.view_end - state.geometry.view_start;
    if (start_ns < state.geometry.view_start || end_ns > state.geometry.view_end) {
        state.geometry.view_start = (start_ns + end_ns) / 2 - span / 2;
        state.geometry.view_end = state.geometry.view_start + span;
    }
}

}  // namespace pipelens::viewer
