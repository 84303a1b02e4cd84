// Generation: (kind, pp, v, m) -> the compute-only schedule PyTorch's runtime executes.
//
// Each family reproduces the per-rank compute order of the matching class in PyTorch's
// torch/distributed/pipelining/schedules.py, action for action; ZeroBubbleH2 and ZeroBubbleAuto,
// which PyTorch does not ship, follow Qi et al.'s paper and the authors' implementation. Where
// PyTorch's printed table and its runtime differ (GPipe and 1F1B print delays but run their own
// loops), the order follows the runtime. Idle (None) slots are dropped: they are not executed.
#pragma once

#include "engine/schedule/schedule.hpp"
#include "engine/schedule/schedule_kind.hpp"

namespace pipelens {

// Validates the shape (ScheduleConfigError on a bad combination) and generates it.
Schedule generate_schedule(const ScheduleShape& shape);

namespace generators {
// Each fills `schedule.ranks` for a schedule whose shape fields are already set.
void gpipe(Schedule& schedule);
void one_f_one_b(Schedule& schedule);
void looped_bfs(Schedule& schedule);
void interleaved(Schedule& schedule, bool zero_bubble);
void zbv_zero_bubble(Schedule& schedule);
void dual_pipe_v(Schedule& schedule);
void zero_bubble_h2(Schedule& schedule);
void zero_bubble_auto(Schedule& schedule, const ZeroBubbleInputs& inputs);
}  // namespace generators

}  // namespace pipelens
