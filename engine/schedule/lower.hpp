// Lowering: compute-only schedule -> schedule with communication, as PyTorch's
// `_PipelineScheduleRuntime._prepare_schedule_with_comms` does it:
//
//   lower_unshard_reshard -> lower_reduce_grad -> lower_send_recv [-> defer_receives]
//   [-> strip_fsdp_actions]
//
// Each pass is a function from Schedule to Schedule. The FSDP actions (UNSHARD, RESHARD,
// REDUCE_GRAD) always take part, because in PyTorch's runtime they occupy turns of the
// send/recv placement and so decide where each RECV lands; unless asked to keep them, they are
// stripped at the end, leaving exactly the runtime's compute and SEND/RECV order.
#pragma once

#include "engine/schedule/dependencies.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens {

struct LoweringOptions {
    bool keep_fsdp_actions = false;  // keep UNSHARD/RESHARD/REDUCE_GRAD in the result
    int max_active_stages = 3;       // PyTorch's prefetch window for UNSHARD
    bool defer_receives = false;     // PyTorch's defer_pp_recv=True: see defer_receives()
    // What each action waits for, which decides where each RECV lands.
    const DependencyRules* rules = &DependencyRules::pytorch();
};

// Adds UNSHARD before a stage is needed (prefetching the next `max_active_stages` distinct
// stages) and RESHARD when it leaves that window; the rest are resharded at the end.
// Within one eviction the RESHARDs come in ascending stage order (PyTorch iterates a Python
// set there, whose order is an implementation detail).
Schedule lower_unshard_reshard(const Schedule& compute_only, int max_active_stages = 3);

// Adds REDUCE_GRAD(stage) right after the action that completes the stage's last backward
// (B or W, counted per stage up to m).
Schedule lower_reduce_grad(const Schedule& schedule);

// Adds SEND/RECV pairs, PyTorch's `_add_send_recv`: ranks take turns in ascending order, each
// emitting its next action only once its inputs are known to arrive; the sender places the
// receiver's RECV at that moment, which yields an order that cannot deadlock. Adjacent stages
// on one rank exchange tensors locally and get no pair. Each pair gets an id (its `link`).
// Throws ScheduleHangError (dry_run.hpp) when no rank can make progress.
Schedule lower_send_recv(const Schedule& schedule,
                         const DependencyRules& rules = DependencyRules::pytorch());

// PyTorch's `_defer_recv_ops`: moves each RECV to just before the computation that consumes it,
// except that a rank posts its pending receives from a higher-ranked peer before its next SEND
// to that peer (lower rank: RECV before SEND; higher rank: SEND before RECV). Nothing else moves.
// Throws ScheduleCheckError for a schedule without SEND/RECV or a RECV nothing consumes.
Schedule defer_receives(const Schedule& lowered);

// Removes UNSHARD, RESHARD and REDUCE_GRAD actions.
Schedule strip_fsdp_actions(Schedule schedule);

// The whole pipeline. Throws ScheduleCheckError when the input is not a valid compute-only
// schedule and ScheduleHangError when it cannot be lowered without a deadlock.
Schedule lower(Schedule compute_only, const LoweringOptions& options = {});

}  // namespace pipelens
