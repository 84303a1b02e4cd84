// Internal to engine/schedule: the SEND/RECV placement itself, without validating its input.
// `lower_send_recv` validates and then places; `lower` validates the caller's compute-only
// schedule once, before the FSDP passes, and places their output directly.
#pragma once

#include "engine/schedule/dependencies.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens {

// Precondition: `schedule` passes check_structure. Throws ScheduleHangError on a deadlock.
Schedule place_send_recv(const Schedule& schedule, const DependencyRules& rules);

}  // namespace pipelens
