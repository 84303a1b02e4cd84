// The static check, the lowering and the dry run in `pipelens check`'s order
// (schedule_check.hpp).
#include "engine/schedule/schedule_check.hpp"

#include <fmt/format.h>

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
        } catch (const ScheduleCheckError& error) {  // what only lowering can tell
            check.structure = error.report();
            return check;
        }
    }
    const DryRunResult result = dry_run(check.lowered ? *check.lowered : schedule);
    check.actions_run = result.actions_run;
    if (!result.completed)
        check.hang = result.hang;
    return check;
}

std::string ok_text(const Schedule& schedule, const ScheduleCheck& check, ActionNotation notation) {
    const std::string lowering_note =
        check.lowered ? fmt::format("; lowers to {} actions with {} send/recv pairs",
                                    check.lowered->action_count(), check.lowered->pair_count)
                      : std::string();
    return fmt::format(
        "ok: pp={}, {} stages, m={}, {} actions ({}{}{}); dry run completes", schedule.rank_count,
        schedule.stage_count, schedule.microbatch_count, schedule.action_count(),
        notation == ActionNotation::legacy ? "PyTorch's older notation, " : "",
        schedule.has_communication
            ? fmt::format("with communication, {} send/recv pairs", schedule.pair_count)
            : std::string("compute only"),
        lowering_note);
}

}  // namespace pipelens
