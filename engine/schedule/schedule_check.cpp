// The static check, the lowering and the dry run in `pipelens check`'s order
// (schedule_check.hpp).
#include "engine/schedule/schedule_check.hpp"

#include "engine/schedule/lower.hpp"

namespace pipelens {

std::string ScheduleCheck::problem_text() const {
    if (!structure.ok())
        return structure.text();
    if (hang)
        return hang->text();
    return {};
}

ScheduleCheck check_schedule(const Schedule& schedule) {
    ScheduleCheck check;
    check.structure = check_structure(schedule);
    if (!check.structure.ok())
        return check;
    if (!schedule.has_communication) {
        try {
            check.lowered = lower(schedule);
        } catch (const ScheduleHangError& error) {
            check.hang = error.report();
            return check;
        }
    }
    const DryRunResult result = dry_run(check.lowered ? *check.lowered : schedule);
    check.actions_run = result.actions_run;
    if (!result.completed)
        check.hang = result.hang;
    return check;
}

}  // namespace pipelens
