// How large a schedule will be before it is built: an upper bound on its lowered actions and on
// the memory that generating, lowering and simulating them takes, so that a shape this machine
// cannot hold is refused in microseconds with the figures, instead of allocating for minutes
// and dying of std::bad_alloc.
//
// Invariant: the bounds are never below what generate_schedule + lower + simulate use for the
// shape (per-action and per-(stage, microbatch) bytes measured by the schedule and simulator
// benchmarks, rounded up), so a refusal is never wrong about a shape that would have fitted.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "engine/schedule/schedule_kind.hpp"

namespace pipelens {

struct ScheduleSize {
    double actions = 0;  // lowered, communication included (a double: pp*v*m*7 can pass 2^63)
    double bytes = 0;    // schedule IR, lowered copy and a simulation's timeline together
};

ScheduleSize estimate_schedule_size(const ScheduleShape& shape);

// A schedule too large for the memory there is: a resource limit, not a wrong input.
class ScheduleTooLargeError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The memory this process can still take: the machine's available memory (MemAvailable),
// capped by its address-space limit (ulimit -v) when one is set.
std::int64_t available_memory_bytes();

// Throws ScheduleConfigError for a shape validate_shape refuses, else ScheduleTooLargeError
// naming the shape, its action count and the bytes it needs against `memory_bytes`.
void check_schedule_fits(const ScheduleShape& shape, std::int64_t memory_bytes);

}  // namespace pipelens
