// The checks `pipelens check` runs on a schedule, in their order, defined once so that the CLI
// and the viewer's "check a dropped schedule" report the same thing: the static check first;
// then, for a compute-only schedule, the lowering (which adds SEND/RECV and may already find a
// hang); then the dependency dry run of what will run.
//
// Invariants: a later step runs only when every earlier one passed, so at most one of
// `structure` (not ok) and `hang` says what is wrong; `hang` holds the same report the CLI prints
// (HangReport::text), whether the lowering or the dry run found it.
#pragma once

#include <optional>
#include <string>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {

struct ScheduleCheck {
    CheckReport structure;
    std::optional<HangReport> hang;
    // A compute-only schedule as lowered with its send/recv pairs (set once it lowered).
    std::optional<Schedule> lowered;
    std::size_t actions_run = 0;  // by the dry run, when it ran

    bool ok() const { return structure.ok() && !hang; }
    // What is wrong, as `pipelens check` prints it after "FILE: "; empty when ok.
    std::string problem_text() const;
};

ScheduleCheck check_schedule(const Schedule& schedule);

// What `pipelens check` says of a schedule that passed, after "FILE: ": "ok: pp=2, 2 stages,
// m=4, 16 actions (compute only; lowers to 32 actions with 8 send/recv pairs); dry run
// completes". `notation`: the file's, named when it is PyTorch's older one.
std::string ok_text(const Schedule& schedule, const ScheduleCheck& check,
                    ActionNotation notation = ActionNotation::current);

}  // namespace pipelens
