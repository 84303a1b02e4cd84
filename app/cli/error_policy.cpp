// The prefix and exit code each engine error gets (error_policy.hpp).
#include "app/cli/error_policy.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>

#include "app/cli/commands.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/recorder/state_replay.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/schedule/static_check.hpp"
#include "engine/text/text_file.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::cli {
namespace {

template <typename... Errors>
bool is_one_of(const std::exception& error) {
    return ((dynamic_cast<const Errors*>(&error) != nullptr) || ...);
}

}  // namespace

ErrorPolicy error_policy(const std::exception& error) {
    if (const auto* replay = dynamic_cast<const recorder::ReplayError*>(&error))
        switch (replay->failure) {
            case recorder::ReplayFailure::unreadable:
                return {"", kExitUsage};
            case recorder::ReplayFailure::too_large:
                return {"", kExitTooLarge};
            case recorder::ReplayFailure::refused:
                return {"", kExitCheckFailed};  // the replay went another way: a finding
        }
    if (is_one_of<ScheduleConfigError>(error))
        return {"invalid schedule configuration: ", kExitUsage};
    if (is_one_of<ExperimentError, traces::TraceError, ScheduleFileError>(error))
        return {"", kExitUsage};
    if (const auto* text = dynamic_cast<const TextFileError*>(&error))
        return {"",
                text->problem() == TextFileError::Problem::too_large ? kExitTooLarge : kExitUsage};
    if (is_one_of<ScheduleTooLargeError, std::overflow_error>(error))
        return {"", kExitTooLarge};
    // An input that asks for more memory than the machine has: too large, not a failed check.
    if (is_one_of<std::bad_alloc>(error))
        return {"not enough memory for this input: ", kExitTooLarge};
    if (is_one_of<ScheduleCheckError, ScheduleHangError>(error))
        return {"", kExitCheckFailed};
    return {"error: ", kExitCheckFailed};
}

std::string without_backtrace(std::string_view message) {
    // LibTorch's checks start theirs with where they were raised, its enforcements with the
    // first frame.
    const std::size_t backtrace =
        std::min(message.find("\nException raised from "), message.find("\nframe #"));
    std::string_view kept = message.substr(0, backtrace);
    while (!kept.empty() && (kept.back() == '\n' || kept.back() == ' '))
        kept.remove_suffix(1);
    return std::string(kept);
}

}  // namespace pipelens::cli
