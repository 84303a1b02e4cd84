// Loading a run from a trace file into a TimelineModel, ranks in parallel.
//
// A million rows take SQLite about 0.45 s to step through on one core, so the load is split
// into tasks (the strings table, the pairs, then one task per rank: its actions, memory samples,
// lanes and bubbles) that a few threads take in turn, each with its own read-only connection
// (a connection is used by one thread at a time). Each task writes only its own part of the
// model; what needs every rank (the step's end, the pair index) is done after all have joined.
// A failing task stops the others from taking more, and its error is the load's error.
#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <optional>
#include <thread>

#include "app/viewer/timeline_model.hpp"

namespace pipelens::viewer {
namespace {

TimelineAction timeline_action(const traces::StoredAction& stored,
                               const std::filesystem::path& path) {
    if (stored.label_id < 0 || stored.label_id > std::numeric_limits<std::uint32_t>::max())
        throw traces::TraceError(path.string() + ": trace is corrupt: action label id " +
                                 std::to_string(stored.label_id) + " is out of range");
    return {stored.start_ns,   stored.end_ns,
            stored.bytes,      stored.stage,
            stored.microbatch, stored.pair_id,
            stored.step,       static_cast<std::uint32_t>(stored.label_id),
            stored.kind};
}

int loader_threads(int task_count) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return std::clamp(std::min(cores, 8), 1, task_count);
}

}  // namespace

TimelineModel TimelineModel::load(const traces::TraceReader& reader, std::int64_t run_id) {
    TimelineModel model;
    model.run_ = reader.run(run_id);
    std::vector<traces::RankRecord> figures = reader.ranks(run_id);
    for (const auto& figure : figures)
        if (figure.rank < 0 || figure.rank >= (1 << 20))
            throw traces::TraceError(reader.path().string() + ": trace is corrupt: run " +
                                     std::to_string(run_id) + " has figures for rank " +
                                     std::to_string(figure.rank));
    model.set_up_ranks(reader.action_rank_limit(run_id), std::move(figures));
    const int rank_count = static_cast<int>(model.ranks_.size());

    // Task 0 reads the strings, task 1 the pairs (the two longest single reads go first), task
    // 2 + r rank r.
    const int task_count = 2 + rank_count;
    std::atomic<int> next_task{0};
    const auto run_tasks = [&](const traces::TraceReader& own) {
        for (int task; (task = next_task.fetch_add(1)) < task_count;) {
            if (task == 0) {
                model.labels_ = own.strings();
            } else if (task == 1) {
                model.pairs_ = own.pairs(run_id);
            } else {
                RankTimeline& rank = model.ranks_[static_cast<std::size_t>(task - 2)];
                for (const traces::StoredAction& stored : own.stored_actions(run_id, rank.rank))
                    (stored.lane == traces::ActionLane::compute ? rank.compute : rank.communication)
                        .actions.push_back(timeline_action(stored, own.path()));
                rank.memory = own.memory(run_id, rank.rank);
                index_rank(rank);
            }
        }
    };
    const int thread_count = loader_threads(task_count);
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(thread_count));
    const auto guarded = [&](int thread, auto&& work) {
        try {
            work();
        } catch (...) {
            failures[static_cast<std::size_t>(thread)] = std::current_exception();
            next_task.store(task_count);
        }
    };
    std::vector<std::thread> helpers;
    for (int thread = 1; thread < thread_count; ++thread)
        helpers.emplace_back([&, thread] {
            guarded(thread, [&] {
                traces::TraceReaderOptions options;
                options.check_integrity = false;  // the caller's reader has opened the file
                const traces::TraceReader own(reader.path(), options);
                run_tasks(own);
            });
        });
    guarded(0, [&] { run_tasks(reader); });
    for (std::thread& helper : helpers)
        helper.join();
    for (const std::exception_ptr& failure : failures)
        if (failure)
            std::rethrow_exception(failure);

    // A label missing from the strings task's table was committed by a live writer after that
    // read: read once more; one still missing means a damaged file, an error as in the reader.
    const auto first_missing_label = [&]() -> std::optional<std::uint32_t> {
        for (const RankTimeline& rank : model.ranks_)
            for (const Lane* lane : {&rank.compute, &rank.communication})
                for (const TimelineAction& action : lane->actions)
                    if (!model.labels_.find(action.label))
                        return action.label;
        return std::nullopt;
    };
    if (first_missing_label()) {
        model.labels_ = reader.strings();
        if (const auto missing = first_missing_label())
            throw traces::TraceError(reader.path().string() + ": trace is corrupt: string id " +
                                     std::to_string(*missing) + " is not in the strings table");
    }
    model.finish();
    return model;
}

}  // namespace pipelens::viewer
