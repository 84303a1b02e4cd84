// Loading a run from a trace file into a TimelineModel, ranks in parallel.
//
// A million rows take SQLite about 0.45 s to step through on one core, so the load is split
// into tasks (the pairs, then one task per rank: its actions, OVERLAP_F_B texts, memory
// samples, lanes and bubbles) that a few workers take in turn (run_record::parallel_for), each
// with its own read-only connection (a connection is used by one thread at a time). Each task
// writes only its own part of the model; what needs every rank (labels, the step's end, the
// pair index) is done after all have joined. A failing task stops later ones from starting,
// and the first failing task's error is the load's error.
#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "app/viewer/timeline_model.hpp"
#include "engine/run_record/parallel_for.hpp"
#include "traces/text/action_label.hpp"

namespace pipelens::viewer {
namespace {

// The label id is assigned once every rank is read (TimelineModel::load).
TimelineAction timeline_action(const traces::StoredAction& stored) {
    return {stored.start_ns,   stored.end_ns,  stored.bytes, stored.stage,
            stored.microbatch, stored.pair_id, stored.step,  0,
            stored.kind,       false};
}

using StoredLabels = std::vector<std::pair<std::int32_t, std::string>>;  // by step

}  // namespace

TimelineModel TimelineModel::load(const traces::TraceReader& reader, std::int64_t run_id,
                                  bool analyse) {
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

    // Task 0 reads the pairs (the longest single read goes first), task 1 + r rank r.
    const int task_count = 1 + rank_count;
    std::vector<StoredLabels> stored_labels(static_cast<std::size_t>(rank_count));
    const unsigned workers = worker_threads(static_cast<std::size_t>(task_count));
    // Worker 0 is this thread and reads with the caller's connection; the others open their own.
    std::vector<std::optional<traces::TraceReader>> own_readers(workers);
    const auto reader_of = [&](unsigned worker) -> const traces::TraceReader& {
        if (worker == 0)
            return reader;
        std::optional<traces::TraceReader>& own = own_readers[worker];
        if (!own) {
            traces::TraceReaderOptions options;
            options.check_integrity = false;  // the caller's reader has opened the file
            own.emplace(reader.path(), options);
        }
        return *own;
    };
    run_record::parallel_for_by_worker(
        static_cast<std::size_t>(task_count), workers, [&](unsigned worker, std::size_t task) {
            const traces::TraceReader& own = reader_of(worker);
            if (task == 0) {
                model.pairs_ = own.pairs(run_id);
                return;
            }
            RankTimeline& rank = model.ranks_[task - 1];
            for (const traces::StoredAction& stored : own.stored_actions(run_id, rank.rank))
                (stored.lane == traces::ActionLane::compute ? rank.compute : rank.communication)
                    .actions.push_back(timeline_action(stored));
            stored_labels[task - 1] = own.stored_labels(run_id, rank.rank);
            rank.memory = own.memory(run_id, rank.rank);
            index_rank(rank);
        });

    model.label_actions(reader.path(), stored_labels);
    model.finish();
    if (analyse) {
        HoldRequest request;  // stragglers as read_stragglers finds them: calibrated if it can be
        request.stragglers =
            analysis::straggler_options(model.run(), reader.profile(run_id), reader.events(run_id));
        model.apply(model.analyse_holds(reader.path().string(), request));
    }
    return model;
}

// Every action gets its id; an OVERLAP_F_B, and an action that keeps its text (an imported
// flight-recorder op), also its text as read for it (the others' texts are derived from their
// integers when shown).
void TimelineModel::label_actions(const std::filesystem::path& path,
                                  const std::vector<StoredLabels>& stored_labels) {
    std::uint32_t next_id = 1;
    for (std::size_t index = 0; index < ranks_.size(); ++index) {
        const StoredLabels& stored = stored_labels[index];
        for (Lane* lane : {&ranks_[index].compute, &ranks_[index].communication})
            for (TimelineAction& action : lane->actions) {
                action.label = next_id++;
                const auto found = std::lower_bound(
                    stored.begin(), stored.end(), action.step,
                    [](const auto& entry, std::int32_t step) { return entry.first < step; });
                const bool has_text = found != stored.end() && found->first == action.step;
                if (has_text)
                    labels_.add(action.label, found->second);
                else if (action.kind == text::kOverlapKind)
                    throw traces::TraceError(fmt::format(
                        "{}: trace is corrupt: OVERLAP_F_B at rank {} step {} has no parts",
                        path.string(), ranks_[index].rank, action.step));
            }
    }
    label_id_limit_ = next_id;
}

}  // namespace pipelens::viewer
