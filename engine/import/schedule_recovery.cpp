// Recognition compares against every kind that accepts the inferred shape; a shape a kind
// refuses (ScheduleConfigError) simply is not that kind.
#include "engine/import/schedule_recovery.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/import/imported_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/placement_inference.hpp"
#include "engine/schedule/schedule_csv.hpp"

namespace pipelens::import {

void infer_shape(Schedule& schedule, const std::string& source,
                 const std::vector<std::string>& rank_names) {
    schedule.rank_count = static_cast<int>(schedule.ranks.size());
    const auto rank_name = [&](int rank) {
        return rank >= 0 && static_cast<std::size_t>(rank) < rank_names.size()
                   ? rank_names[static_cast<std::size_t>(rank)]
                   : fmt::format("rank {}", rank);
    };
    // The pipeline's rank numbers (used in the shape's messages) are not the files': say which
    // file each one is when that is not plain.
    std::string ranks_read;
    for (std::size_t rank = 0; rank < rank_names.size(); ++rank)
        ranks_read +=
            fmt::format("{}{}", rank == 0 ? " (pipeline ranks: " : ", ", rank_names[rank]);
    if (!ranks_read.empty())
        ranks_read += ")";
    // Files that name no action of some stage below their highest: the rank
    // that ran it left no file here (the shape's own message would ask whether the number is a
    // typo, as of a hand-written CSV).
    if (!rank_names.empty()) {
        std::vector<bool> named;
        for (const auto& actions : schedule.ranks)
            for (const Action& action : actions)
                for (const Action& part : schedule.parts_of(action))
                    if (part.stage >= 0 && part.stage < (1 << 20)) {
                        if (static_cast<std::size_t>(part.stage) >= named.size())
                            named.resize(static_cast<std::size_t>(part.stage) + 1, false);
                        named[static_cast<std::size_t>(part.stage)] = true;
                    }
        const auto gap = std::find(named.begin(), named.end(), false);
        if (gap != named.end())
            throw ImportError(fmt::format(
                "{}: no file holds an action of stage {}, though stage {} is named: is the trace "
                "of the rank that ran it missing?{}",
                source, gap - named.begin(), named.size() - 1, ranks_read));
    }
    try {
        infer_schedule_shape(schedule, source);
    } catch (const ScheduleFileError& error) {
        throw ImportError(error.what() + ranks_read);
    }
    // A run's stage computed on one rank: a split stage, or one without computations, means the
    // trace is damaged or incomplete.
    try {
        schedule.stage_to_rank = infer_stage_to_rank(schedule, SplitStage::refuse);
    } catch (const StagePlacementError& error) {
        const StageSplit& split = error.split();
        throw ImportError(
            fmt::format("{}: stage {} computes on {} and on {}; a stage must run on one rank",
                        source, split.stage, rank_name(split.first_rank), rank_name(split.rank)));
    }
    if (const std::vector<int> missing = stages_without_computation(schedule); !missing.empty())
        throw ImportError(
            fmt::format("{}: stage {} appears only in communication, never in a computation; the "
                        "trace is missing that stage's actions",
                        source, missing.front()));
    if (schedule.stages_per_rank == 0)
        schedule.stages_per_rank = 1;
}

Schedule compute_only(const Schedule& imported) {
    Schedule out = empty_like(imported);
    out.has_communication = false;
    out.pair_count = 0;
    for (int rank = 0; rank < imported.rank_count; ++rank)
        for (const Action& action : imported.ranks[rank]) {
            if (!is_compute(action.kind))
                continue;
            if (action.kind != ActionKind::overlap_forward_backward) {
                out.ranks[rank].push_back(action);
                continue;
            }
            Action copy = action;
            copy.link = static_cast<std::int32_t>(out.parts.size());
            for (const Action& part : imported.parts_of(action))
                out.parts.push_back(part);
            out.ranks[rank].push_back(copy);
        }
    return out;
}

std::vector<ScheduleKind> recognise_schedules(const Schedule& imported) {
    const Schedule compute = compute_only(imported);
    std::vector<ScheduleKind> matches;
    for (ScheduleKind kind : all_schedule_kinds()) {
        // Its order follows from times the import does not know: it cannot be recognised.
        if (kind == ScheduleKind::zero_bubble_auto)
            continue;
        Schedule generated;
        try {
            generated = generate_schedule(
                {kind, compute.rank_count, compute.stages_per_rank, compute.microbatch_count});
        } catch (const ScheduleConfigError&) {
            continue;
        }
        if (generated.stage_to_rank != compute.stage_to_rank ||
            generated.ranks.size() != compute.ranks.size())
            continue;
        bool same = true;
        for (std::size_t rank = 0; rank < compute.ranks.size() && same; ++rank) {
            const auto& left = generated.ranks[rank];
            const auto& right = compute.ranks[rank];
            same = left.size() == right.size();
            for (std::size_t step = 0; step < left.size() && same; ++step)
                same = generated.text(left[step]) == compute.text(right[step]);
        }
        if (same)
            matches.push_back(kind);
    }
    return matches;
}

std::string coinciding_kinds_note(const std::vector<ScheduleKind>& kinds) {
    if (kinds.size() < 2)
        return {};
    std::string others;
    for (std::size_t i = 1; i < kinds.size(); ++i)
        others += fmt::format("{}{}", i > 1 ? ", " : "", schedule_kind_name(kinds[i]));
    return fmt::format(
        "named {}, but at this shape {} runs the same compute order: the trace "
        "cannot tell them apart",
        schedule_kind_name(kinds.front()), others);
}

bool names_generated_kind(const std::string& name) {
    try {
        parse_schedule_kind(name);
        return true;
    } catch (const ScheduleConfigError&) {
        return false;
    }
}

void name_recognised_schedule(ImportedRun& run) {
    if (names_generated_kind(run.schedule.name))
        return;
    const std::vector<ScheduleKind> kinds = recognise_schedules(run.schedule);
    if (kinds.empty())
        return;
    run.notes.push_back(fmt::format("{}: the same compute order as PyTorch's {}", run.schedule.name,
                                    schedule_kind_name(kinds.front())));
    if (std::string note = coinciding_kinds_note(kinds); !note.empty())
        run.notes.push_back(std::move(note));
    run.schedule.name = std::string(schedule_kind_name(kinds.front()));
}

}  // namespace pipelens::import
