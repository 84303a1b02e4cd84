// The prefix and exit code each engine error gets (error_policy.hpp).
#include "app/cli/error_policy.hpp"

#include "app/cli/commands.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/schedule/static_check.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::cli {
namespace {

template <typename... Errors>
bool is_one_of(const std::exception& error) {
    return ((dynamic_cast<const Errors*>(&error) != nullptr) || ...);
}

}  // namespace

ErrorPolicy error_policy(const std::exception& error) {
    if (is_one_of<ScheduleConfigError>(error))
        return {"invalid schedule configuration: ", kExitUsage};
    if (is_one_of<ExperimentError, traces::TraceError, ScheduleFileError>(error))
        return {"", kExitUsage};
    if (is_one_of<ScheduleTooLargeError>(error))
        return {"", kExitTooLarge};
    if (is_one_of<ScheduleCheckError, ScheduleHangError>(error))
        return {"", kExitCheckFailed};
    return {"error: ", kExitCheckFailed};
}

}  // namespace pipelens::cli
