// The lowering pipeline: validates a compute-only schedule, then runs the passes in PyTorch's
// runtime order and strips the FSDP actions unless they are wanted.
#include "engine/schedule/lower.hpp"

#include <fmt/format.h>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/send_recv_placement.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {

Schedule lower(Schedule compute_only, const LoweringOptions& options) {
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
