// The lowering pipeline: validates a compute-only schedule, then runs the passes in PyTorch's
// runtime order and strips the FSDP actions unless they are wanted.
//
// A compute-only table may hold REDUCE_GRAD: PyTorch's single-stage classes (GPipe, 1F1B) put it
// into the table they print. Such a table is accepted when every REDUCE_GRAD stands where
// lower_reduce_grad would put it, and they are dropped before lowering, which puts them back:
// where a REDUCE_GRAD goes is decided in one place.
#include "engine/schedule/lower.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/send_recv_placement.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {
namespace {

bool holds_reduce_grad(const Schedule& schedule) {
    return std::ranges::any_of(schedule.ranks, [](const std::vector<Action>& actions) {
        return std::ranges::any_of(
            actions, [](const Action& action) { return action.kind == ActionKind::reduce_grad; });
    });
}

// Where `given` first puts a REDUCE_GRAD (or anything else) that `placed`, the same row with
// every REDUCE_GRAD where lowering puts it, does not have there; a REDUCE_GRAD left out is
// fine. Nothing when they agree.
struct RowMismatch {
    std::size_t step = 0;
    std::string given;
    std::string wanted;
};

std::optional<RowMismatch> reduce_grad_mismatch(const Schedule& schedule,
                                                const std::vector<Action>& given,
                                                const std::vector<Action>& placed) {
    const auto text_at = [&](const std::vector<Action>& row, std::size_t index) {
        return index < row.size() ? fmt::format("'{}'", schedule.text(row[index]))
                                  : std::string("the end of the row");
    };
    std::size_t next = 0;
    for (std::size_t step = 0; step < given.size(); ++step) {
        const std::size_t expected = next;  // what is named when nothing further on matches
        while (next < placed.size() && placed[next] != given[step] &&
               placed[next].kind == ActionKind::reduce_grad)
            ++next;
        if (next == placed.size() || placed[next] != given[step])
            return RowMismatch{step, text_at(given, step), text_at(placed, expected)};
        ++next;
    }
    return std::nullopt;
}

// The table without its REDUCE_GRADs when each stands where lowering puts it; the table as it
// is when it holds other non-compute actions (the compute-only check names the first).
Schedule without_placed_reduce_grads(Schedule table) {
    if (!holds_reduce_grad(table))
        return table;
    Schedule stripped = table;
    for (auto& actions : stripped.ranks) {
        std::erase_if(actions,
                      [](const Action& action) { return action.kind == ActionKind::reduce_grad; });
        if (!std::ranges::all_of(actions,
                                 [](const Action& action) { return is_compute(action.kind); }))
            return table;
    }
    // A broken table is reported as broken, not as a REDUCE_GRAD out of place: where lowering
    // puts one follows from the backwards, which the structure check counts.
    require_valid_structure(table);
    const Schedule placed = lower_reduce_grad(stripped);
    for (std::size_t rank = 0; rank < table.ranks.size(); ++rank)
        if (const auto mismatch =
                reduce_grad_mismatch(table, table.ranks[rank], placed.ranks[rank]))
            throw ScheduleCheckError(CheckReport{{fmt::format(
                "rank {}, step {}: {} where lowering puts {}; a REDUCE_GRAD in a compute-only "
                "schedule stands right after its stage's last backward (B or W), as PyTorch "
                "places it, or is left out (lowering adds it)",
                rank, mismatch->step, mismatch->given, mismatch->wanted)}});
    return stripped;
}

}  // namespace

Schedule lower(Schedule compute_only, const LoweringOptions& options) {
    compute_only = without_placed_reduce_grads(std::move(compute_only));
    for (std::size_t rank = 0; rank < compute_only.ranks.size(); ++rank)
        for (std::size_t step = 0; step < compute_only.ranks[rank].size(); ++step) {
            const Action& action = compute_only.ranks[rank][step];
            if (!is_compute(action.kind))
                throw ScheduleCheckError(CheckReport{{fmt::format(
                    "rank {}, step {}: expected a compute-only schedule but found '{}'; "
                    "communication and FSDP actions are added by lowering",
                    rank, step, compute_only.text(action))}});
        }
    require_valid_structure(compute_only);
    Schedule with_fsdp = lower_unshard_reshard(compute_only, options.max_active_stages);
    compute_only = Schedule{};  // release the input before the larger output is built
    with_fsdp = lower_reduce_grad(with_fsdp);
    Schedule lowered;
    try {
        lowered = place_send_recv(with_fsdp, *options.rules);
    } catch (const ScheduleHangError&) {
        // Report steps of the schedule the caller gave, not of the FSDP-augmented one.
        throw ScheduleHangError(
            dry_run(strip_fsdp_actions(std::move(with_fsdp)), *options.rules).hang);
    }
    with_fsdp = Schedule{};
    if (options.defer_receives)
        lowered = defer_receives(lowered);
    return options.keep_fsdp_actions ? lowered : strip_fsdp_actions(std::move(lowered));
}

}  // namespace pipelens
