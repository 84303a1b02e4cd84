// Opening traces and runs, and matching a compared run's actions with the shown run's.
#include "app/viewer/trace_session.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "traces/root_cause.hpp"
#include "traces/run_outcome.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::viewer {
namespace {

// Matches the compared run's actions with the shown run's, step by step, once, so drawing a
// frame never searches.
void match_compared(TraceSession& session) {
    session.match = {};
    if (session.compared && session.model)
        session.match = match_steps(*session.model, session.summary, *session.compared,
                                    session.compared_summary);
}

void split_compared(TraceSession& session) {
    session.split = {};
    if (session.compared && session.model)
        session.split =
            split_comparison(*session.model, *session.compared, session.reader->path().string());
}

// Starts the analysis the wanted step needs, once none is pending: a step's on a thread, the
// whole run's (kept by the model) at once.
void follow_wanted_step(TraceSession& session) {
    if (!session.model || analysis_pending(session) ||
        session.model->analysed_step() == session.wanted_step)
        return;
    if (!session.wanted_step) {
        session.model->apply_whole_run();
        session.critical_path_line =
            critical_path_text(*session.model, session.summary.steps.size());
        return;
    }
    session.critical_path_line =
        fmt::format("critical path (step {}): finding it...", *session.wanted_step);
    HoldRequest request;
    request.step = session.wanted_step;
    const TimelineModel* shown = &*session.model;
    session.pending_analysis =
        std::async(std::launch::async, [shown, request, source = session.reader->path().string()] {
            return shown->analyse_holds(source, request);
        });
}

// The file's quick_check on a connection of its own: "" when it passes, else the reader's
// message naming the file.
std::future<std::string> check_integrity(const std::filesystem::path& path) {
    return std::async(std::launch::async, [path]() -> std::string {
        try {
            const traces::TraceReader checked(path);  // checks at open
            return "";
        } catch (const std::exception& error) {
            return error.what();
        }
    });
}

void let_go_of_retired_checks(TraceSession& session) {
    std::erase_if(session.retired_checks, [](const std::future<std::string>& check) {
        return check.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
}

void take_integrity(TraceSession& session) {
    let_go_of_retired_checks(session);
    if (!session.integrity.valid() ||
        session.integrity.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        return;
    session.damage = session.integrity.get();
}

}  // namespace

void forget_file_check(TraceSession& session) {
    if (session.integrity.valid())
        session.retired_checks.push_back(std::move(session.integrity));
    session.damage.clear();
}

bool open_trace(TraceSession& session, const std::filesystem::path& path,
                std::optional<std::int64_t> run_id) {
    try {
        // The check runs on a thread once the run is shown (check_integrity): the timeline of a
        // large trace is up seconds before it ends.
        traces::TraceReaderOptions options;
        options.check_integrity = false;
        auto reader = std::make_unique<traces::TraceReader>(path, options);
        std::vector<traces::RunRecord> runs = reader->runs();
        if (runs.empty())
            throw traces::TraceError(path.string() + ": the trace holds no runs yet");
        session.reader = std::move(reader);
        session.runs = std::move(runs);
        session.error.clear();
        session.compared.reset();
        session.compared_run_id = 0;
        forget_file_check(session);
        const bool shown = show_run(session, run_id.value_or(session.runs.back().id));
        session.integrity = check_integrity(path);
        session.recent_files.remember(path);
        return shown;
    } catch (const std::exception& error) {
        session.error = error.what();
        return false;
    }
}

namespace {

// Shows `model`, run `run_id` of the open trace, with what the session reads beside it.
bool adopt_run(TraceSession& session, std::int64_t run_id, TimelineModel model) {
    try {
        replace_model(session, std::make_unique<TimelineModel>(std::move(model)));
        if (run_id != session.run_id)
            session.wanted_step.reset();  // a reload of the shown run keeps its step
        session.run_id = run_id;
        session.live = false;  // poll_trace says when it is
        std::vector<traces::ErrorRecord> errors = session.reader->errors(run_id);
        session.summary =
            summarize(*session.model, traces::run_outcome(session.model->run(), errors));
        session.summary_line = summary_text(session.summary);
        session.subject.clear();
        session.events = session.reader->events(run_id);
        HoldRequest request;  // stragglers as read_stragglers finds them
        request.stragglers = analysis::straggler_options(
            session.model->run(), session.reader->profile(run_id), session.events);
        start_analysis(session, session.reader->path().string(), std::move(request));
        session.errors = traces::root_cause_first(std::move(errors));
        session.sharding = session.reader->sharding(run_id);
        session.sharding_strategies.clear();
        for (const traces::ShardingRecord& decision : session.sharding)
            session.sharding_strategies.push_back(
                nlohmann::json::parse(decision.strategies, nullptr, false));
        session.error.clear();
        match_compared(session);
        split_compared(session);
        return true;
    } catch (const std::exception& error) {
        session.error = error.what();
        return false;
    }
}

// Shows the finished reload, the comparison redone against it.
bool apply_reload(TraceSession& session) {
    if (!session.reader) {  // a simulation took the session's place: the reload is of nothing
        drop_reload(session);
        return false;
    }
    std::optional<TimelineModel> model;
    try {
        model.emplace(session.pending_reload.get());
    } catch (const std::exception& error) {
        session.error = error.what();
        return false;
    }
    session.data_version = session.reload_version;
    const std::int64_t compared = session.compared_run_id;
    if (!adopt_run(session, session.run_id, std::move(*model)))
        return false;
    if (compared != 0)
        compare_with(session, compared);
    session.live = session.model->run().status == traces::RunStatus::running;
    session.summary.writing = session.live;
    session.summary_line = summary_text(session.summary);
    return true;
}

// Lets go of the retired analyses that have finished, and of their models.
void let_go_of_retired_analyses(TraceSession& session) {
    std::erase_if(session.retired_analyses, [](const TraceSession::RetiredAnalysis& retired) {
        return retired.analysis.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
}

// Lets go of the dropped reloads that have finished reading (a finished future's destructor
// does not wait; an unfinished one's would).
void let_go_of_dropped_reloads(TraceSession& session) {
    std::erase_if(session.dropped_reloads, [](const std::future<TimelineModel>& reload) {
        return reload.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
}

}  // namespace

void drop_reload(TraceSession& session) {
    if (session.pending_reload.valid())
        session.dropped_reloads.push_back(std::move(session.pending_reload));
}

bool show_run(TraceSession& session, std::int64_t run_id) {
    try {
        drop_reload(session);
        // Asked before the load: a commit landing during it makes the next poll load again.
        session.data_version = session.reader->data_version();
        return adopt_run(session, run_id, TimelineModel::load(*session.reader, run_id, false));
    } catch (const std::exception& error) {
        session.error = error.what();
        return false;
    }
}

void replace_model(TraceSession& session, std::unique_ptr<TimelineModel> model) {
    if (session.pending_analysis.valid())
        session.retired_analyses.push_back(
            {std::move(session.model), std::move(session.pending_analysis)});
    session.deferred_analysis.reset();  // it was the replaced model's
    session.model = std::move(model);
    let_go_of_retired_analyses(session);
}

bool analysis_pending(const TraceSession& session) {
    return session.pending_analysis.valid() || session.deferred_analysis.has_value();
}

void start_analysis(TraceSession& session, std::string source, HoldRequest request) {
    if (session.pending_analysis.valid())
        session.pending_analysis.wait();  // one analysis of the shown model at a time
    session.critical_path_line = "critical path: finding it...";
    request.stragglers.threshold = session.straggler_threshold;
    if (!session.retired_analyses.empty()) {
        session.deferred_analysis = TraceSession::DeferredAnalysis{std::move(source), request};
        return;
    }
    const TimelineModel* shown = session.model.get();
    session.pending_analysis =
        std::async(std::launch::async, [shown, request, source = std::move(source)] {
            return shown->analyse_holds(source, request);
        });
}

bool poll_analysis(TraceSession& session) {
    take_integrity(session);
    let_go_of_retired_analyses(session);
    if (session.deferred_analysis && session.retired_analyses.empty()) {
        TraceSession::DeferredAnalysis deferred = std::move(*session.deferred_analysis);
        session.deferred_analysis.reset();
        start_analysis(session, std::move(deferred.source), std::move(deferred.request));
    }
    if (!session.pending_analysis.valid() ||
        session.pending_analysis.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        return false;
    try {
        session.model->apply(session.pending_analysis.get());
        session.critical_path_line =
            critical_path_text(*session.model, session.summary.steps.size());
        follow_wanted_step(session);  // a step chosen while the run's own analysis ran
    } catch (const std::exception& error) {
        session.critical_path_line = std::string("critical path: n/a (") + error.what() + ")";
    }
    return true;
}

void finish_analysis(TraceSession& session) {
    if (session.integrity.valid())
        session.integrity.wait();
    for (;;) {
        for (const TraceSession::RetiredAnalysis& retired : session.retired_analyses)
            retired.analysis.wait();
        poll_analysis(session);  // lets them go, starts a deferred analysis
        if (!session.pending_analysis.valid())
            return;
        session.pending_analysis.wait();
    }
}

void analyse_step(TraceSession& session, std::optional<int> step) {
    session.wanted_step = step;
    follow_wanted_step(session);
}

bool poll_trace(TraceSession& session, double now_s) {
    let_go_of_dropped_reloads(session);
    if (!session.reader || !session.model) {
        drop_reload(session);  // of a trace no longer shown
        return false;
    }
    if (session.pending_reload.valid())
        return session.pending_reload.wait_for(std::chrono::seconds(0)) ==
                   std::future_status::ready &&
               apply_reload(session);
    if (session.last_poll_s >= 0 && now_s - session.last_poll_s < kTracePollSeconds)
        return false;
    session.last_poll_s = now_s;
    try {
        const std::int64_t version = session.reader->data_version();
        if (version == session.data_version)
            return false;
        session.runs = session.reader->runs();
        // Asked before the load: a commit landing during it makes the next poll load again.
        session.reload_version = version;
    } catch (const std::exception& error) {
        session.error = error.what();
        return false;
    }
    session.pending_reload =
        std::async(std::launch::async, [path = session.reader->path(), run_id = session.run_id] {
            traces::TraceReaderOptions options;
            options.check_integrity = false;  // the session's reader has opened the file
            const traces::TraceReader own(path, options);
            return TimelineModel::load(own, run_id, false);
        });
    return false;
}

bool finish_reload(TraceSession& session) {
    if (!session.pending_reload.valid())
        return false;
    session.pending_reload.wait();
    return apply_reload(session);
}

TimeSpan fitted_span(const TraceSession& session) {
    std::int64_t end = session.model ? session.model->end_ns() : 0;
    if (!session.errors.empty() && session.errors.front().time_ns &&
        traces::consequence_level(session.errors.front().kind) == 0)
        end = std::max(end, *session.errors.front().time_ns);
    // An action stopped in flight is drawn up to its stop, which can come after the root cause
    // (a rank stopped because a peer timed out).
    for (const traces::ErrorRecord& error : session.errors)
        if (error.started_ns && error.time_ns && !error.action.empty())
            end = std::max(end, *error.time_ns);
    return {session.model ? session.model->start_ns() : 0, end};
}

void compare_with(TraceSession& session, std::int64_t run_id) {
    session.compared.reset();
    session.compared_run_id = 0;
    if (run_id == 0 || run_id == session.run_id) {
        match_compared(session);  // clears the previous comparison's matches
        split_compared(session);
        return;
    }
    try {
        session.compared = TimelineModel::load(*session.reader, run_id, false);  // ghosts only
        session.compared_run_id = run_id;
        session.compared_summary = summarize(
            *session.compared, traces::read_run_outcome(*session.reader, session.compared->run()));
    } catch (const std::exception& error) {
        session.error = error.what();
    }
    match_compared(session);
    split_compared(session);
}

std::vector<std::string> header_figures(const TraceSession& session, bool hangs) {
    std::vector<std::string> figures;
    if (!session.subject.empty())
        figures.push_back(session.subject);
    for (std::string& figure : summary_figures(session.summary, hangs))
        figures.push_back(std::move(figure));
    figures.push_back(hangs ? std::string(kHangsNoPath) : session.critical_path_line);
    return figures;
}

std::optional<ActionLocation> find_action(const TraceSession& session, const std::string& label,
                                          std::optional<int> step) {
    if (!session.model)
        return std::nullopt;
    const std::optional<ActionLocation> first = session.model->find(label);
    if (!first || !step)
        return first;
    const auto copy = copy_in_step(*session.model, session.summary.action_steps, *first, *step);
    return copy ? copy : first;
}

std::string action_step_text(const TraceSession& session, const ActionLocation& at) {
    const std::string index =
        fmt::format("index {} in its rank's list", session.model->action(at).step);
    if (session.summary.steps.size() < 2)
        return index;
    return fmt::format("training step {}, {}", step_of(session.summary.action_steps, at), index);
}

std::string comparison_line(const TraceSession& session, std::optional<int> step) {
    if (!session.compared || !session.model)
        return "";
    if (step && session.summary.step_ns && session.compared_summary.step_ns)
        return step_delta_text(session.summary, session.compared_run_id, session.compared_summary,
                               session.match, *step);
    return step_comparison_text(session.run_id, session.summary, session.compared_run_id,
                                session.compared_summary);
}

std::vector<std::string> split_lines(const TraceSession& session, std::optional<int> step) {
    if (!session.compared || !session.model)
        return {};
    return split_lines(session.split, step);
}

}  // namespace pipelens::viewer
