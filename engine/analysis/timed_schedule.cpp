// Turning a trace's stored rows back into the schedule the ranks ran, with their times.
//
// Rows are sorted by recorded step (program order); what an action is comes from its integers,
// an OVERLAP_F_B's parts from its text. The shape (stages, microbatches, stage -> rank) is read
// off the actions themselves rather than trusted from the run's header, so a failed or imported
// run that names fewer stages still analyses, and a corrupt one fails here with a message
// instead of indexing out of range later.
#include "engine/analysis/timed_schedule.hpp"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "engine/schedule/placement_inference.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::analysis {
namespace {

using traces::kMostMicrobatches;
using traces::kMostStages;

class RowChecker {
  public:
    RowChecker(const std::filesystem::path& path, int rank) : path_(path), rank_(rank) {}

    [[noreturn]] void fail(std::int32_t step, const std::string& why) const {
        throw traces::TraceError(fmt::format("{}: trace is corrupt: rank {} step {}: {}",
                                             path_.string(), rank_, step, why));
    }

    void check(const traces::StoredAction& row) const {
        if (row.kind >= kActionKindCount)
            fail(row.step, fmt::format("action kind {} is not a pipeline action", row.kind));
        const auto kind = static_cast<ActionKind>(row.kind);
        if (kind != ActionKind::overlap_forward_backward &&
            (row.stage < 0 || row.stage >= kMostStages))
            fail(row.step, fmt::format("stage {} is out of range", row.stage));
        if (needs_microbatch(kind) && (row.microbatch < 0 || row.microbatch >= kMostMicrobatches))
            fail(row.step, fmt::format("microbatch {} is out of range", row.microbatch));
    }

  private:
    const std::filesystem::path& path_;
    int rank_;
};

Action action_of(const traces::StoredAction& row) {
    Action action = make_action(row.stage, static_cast<ActionKind>(row.kind), row.microbatch);
    if (is_communication(action.kind))
        action.link = row.pair_id;
    return action;
}

// A rank runs its action list once per training step, so a recorded index appears once per
// step: its k-th row in time order belongs to the k-th step. Program order is training step
// first, then index, which puts each step's list after the previous step's whole list.
void sort_in_program_order(std::vector<traces::StoredAction>& actions) {
    // Each recorded index once and in order (one training step, rows as the viewer and the
    // simulator hand them over): every row is in training step 0, so program order is the
    // order the rows are in, and the sorts below would only return it.
    const auto not_after = [](const auto& left, const auto& right) {
        return left.step >= right.step;
    };
    if (std::adjacent_find(actions.begin(), actions.end(), not_after) == actions.end())
        return;
    const auto by_time = [](const auto& left, const auto& right) {
        return std::tie(left.start_ns, left.step) < std::tie(right.start_ns, right.step);
    };
    if (!std::is_sorted(actions.begin(), actions.end(), by_time))
        std::sort(actions.begin(), actions.end(), by_time);
    std::unordered_map<std::int32_t, int> seen;
    std::vector<std::pair<int, std::size_t>> order;  // (training step, position by time)
    order.reserve(actions.size());
    for (std::size_t index = 0; index < actions.size(); ++index)
        order.emplace_back(seen[actions[index].step]++, index);
    std::sort(order.begin(), order.end(), [&](const auto& left, const auto& right) {
        return std::tie(left.first, actions[left.second].step) <
               std::tie(right.first, actions[right.second].step);
    });
    std::vector<traces::StoredAction> sorted;
    sorted.reserve(actions.size());
    for (const auto& [training_step, index] : order)
        sorted.push_back(actions[index]);
    actions = std::move(sorted);
}

// Appends rank `rank`'s actions to `out`, parts of OVERLAP_F_B actions to its part pool.
void add_rank(const std::filesystem::path& path, int rank, RankRows rows, TimedSchedule& out) {
    const RowChecker checker(path, rank);
    sort_in_program_order(rows.actions);
    std::sort(rows.stored_labels.begin(), rows.stored_labels.end());
    auto& actions = out.schedule.ranks[static_cast<std::size_t>(rank)];
    auto& times = out.times[static_cast<std::size_t>(rank)];
    actions.reserve(rows.actions.size());
    times.reserve(rows.actions.size());
    for (std::size_t index = 0; index < rows.actions.size(); ++index) {
        const traces::StoredAction& row = rows.actions[index];
        checker.check(row);
        Action action = action_of(row);
        const auto found = std::lower_bound(
            rows.stored_labels.begin(), rows.stored_labels.end(), row.step,
            [](const auto& entry, std::int32_t step) { return entry.first < step; });
        const std::string* text = found != rows.stored_labels.end() && found->first == row.step
                                      ? &found->second
                                      : nullptr;
        if (action.kind == ActionKind::overlap_forward_backward) {
            if (text == nullptr)
                checker.fail(row.step, "an OVERLAP_F_B without its parts");
            std::vector<Action> parts;
            try {
                parse_action(*text, parts);
            } catch (const ActionParseError& error) {
                checker.fail(row.step, error.what());
            }
            action.link = static_cast<std::int32_t>(out.schedule.parts.size());
            action.part_count = static_cast<std::uint8_t>(parts.size());
            out.schedule.parts.insert(out.schedule.parts.end(), parts.begin(), parts.end());
        } else if (text != nullptr) {
            out.kept_texts[static_cast<std::size_t>(rank)].emplace_back(
                static_cast<std::int32_t>(actions.size()), *text);
        }
        actions.push_back(action);
        times.push_back({row.start_ns, row.end_ns, row.step,
                         row.lane == traces::ActionLane::communication, row.bytes});
    }
}

// Stage and microbatch counts, the stage -> rank map and whether SEND/RECV are present, from
// the actions; a stage whose computation two ranks run is an error.
// Returns how many microbatches the actions name.
int derive_shape(const std::filesystem::path& path, TimedSchedule& timed) {
    Schedule& schedule = timed.schedule;
    int stages = 0, microbatches = 0;
    const auto note = [&](const Action& action) {
        stages = std::max(stages, action.stage + 1);
        microbatches = std::max(microbatches, action.microbatch + 1);
        schedule.has_communication |= is_communication(action.kind);
    };
    for (const auto& actions : schedule.ranks)
        for (const Action& action : actions)
            for (const Action& part : schedule.parts_of(action))
                note(part);
    schedule.stage_count = std::max(stages, schedule.stage_count);
    schedule.microbatch_count = std::max(microbatches, schedule.microbatch_count);
    try {
        schedule.stage_to_rank = infer_stage_to_rank(schedule, SplitStage::refuse);
    } catch (const StagePlacementError& error) {
        const StageSplit& split = error.split();
        RowChecker(path, split.rank)
            .fail(timed.times[split.rank][split.step].step,
                  fmt::format("stage {} is also run by rank {}", split.stage, split.first_rank));
    }
    return microbatches;
}

}  // namespace

std::string TimedSchedule::text(int rank, int index) const {
    if (rank >= 0 && static_cast<std::size_t>(rank) < kept_texts.size()) {
        const auto& kept = kept_texts[static_cast<std::size_t>(rank)];
        const auto found = std::lower_bound(
            kept.begin(), kept.end(), index,
            [](const auto& entry, std::int32_t wanted) { return entry.first < wanted; });
        if (found != kept.end() && found->first == index)
            return found->second;
    }
    return schedule.text(
        schedule.ranks[static_cast<std::size_t>(rank)][static_cast<std::size_t>(index)]);
}

// A finished run recorded every microbatch it names: a header naming more than its actions do is
// damaged, and read as it is, it would have every analysis size its tables (and `calibrate` its
// simulation) by the header: a million microbatches for a run of 32 actions took 30 s and
// 1.5 GB to print nonsense. A failed or running run may have stopped before its last ones.
void check_run_header(const std::filesystem::path& path, const traces::RunRecord& run,
                      int named_microbatches, std::size_t action_count) {
    if (run.status != traces::RunStatus::finished || named_microbatches == 0 ||
        run.m <= named_microbatches)
        return;
    throw traces::TraceError(
        fmt::format("{}: trace is corrupt: run {} is finished with m = {}, but its {} actions "
                    "name microbatches 0 to {} only",
                    path.string(), run.id, run.m, action_count, named_microbatches - 1));
}

TimedSchedule timed_schedule_from_rows(const std::filesystem::path& path,
                                       const traces::RunRecord& run, std::vector<RankRows> ranks) {
    TimedSchedule timed;
    timed.source = fmt::format("{}: trace is corrupt: run {}", path.string(), run.id);
    Schedule& schedule = timed.schedule;
    schedule.name = run.schedule;
    schedule.rank_count = static_cast<int>(ranks.size());
    schedule.stages_per_rank = std::max(1, run.v);
    schedule.microbatch_count = std::clamp(run.m, 0, kMostMicrobatches);
    schedule.ranks.resize(ranks.size());
    timed.times.resize(ranks.size());
    timed.kept_texts.resize(ranks.size());
    for (std::size_t rank = 0; rank < ranks.size(); ++rank)
        add_rank(path, static_cast<int>(rank), std::move(ranks[rank]), timed);
    const int named_microbatches = derive_shape(path, timed);
    check_run_header(path, run, named_microbatches, schedule.action_count());
    return timed;
}

TimedSchedule read_timed_schedule(const traces::TraceReader& reader, std::int64_t run_id) {
    const traces::RunRecord run = reader.run(run_id);
    std::vector<RankRows> ranks(static_cast<std::size_t>(reader.action_rank_limit(run_id)));
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        ranks[rank].actions = reader.stored_actions(run_id, static_cast<int>(rank));
        ranks[rank].stored_labels = reader.stored_labels(run_id, static_cast<int>(rank));
    }
    return timed_schedule_from_rows(reader.path(), run, std::move(ranks));
}

}  // namespace pipelens::analysis
