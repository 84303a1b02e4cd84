// Which of a failed run's errors to read first: the root cause, not its echoes.
//
// When one rank fails, the others report what that did to them: a receive that timed out, a
// rank stopped because another failed, a rank that never reported. Those are consequences; the
// error a person needs is the earliest one that is not. The order: errors that are not
// consequences, then timeouts (a hang can be a root cause, but a timeout usually waits on a
// failure elsewhere), then `stopped` and `lost`/`rank_died`; within each, by time (untimed
// last), then by rank. Stable, so equal errors keep their recorded order.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "traces/trace_records.hpp"

namespace pipelens::analysis {

// 0: a cause in itself; 1: a timeout; 2: a consequence of another rank's failure.
int consequence_level(std::string_view error_kind);

// `errors` reordered root cause first.
std::vector<traces::ErrorRecord> root_cause_first(std::vector<traces::ErrorRecord> errors);

}  // namespace pipelens::analysis
