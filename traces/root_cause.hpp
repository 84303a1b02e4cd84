// Which of a failed run's errors to read first: the root cause, not its echoes.
//
// When one rank fails, the others report what that did to them: a receive that timed out, a
// rank stopped because another failed, a rank that never reported. Those are consequences; the
// error a person needs is the earliest one that is not. The order: a rank process that died
// on its own (`rank_died`: killed by a signal, or ended without reporting; the launcher's own
// kills are not recorded as deaths), since its peers' errors (a connection reset by the dead
// peer, a lost store) echo it whenever they happen; then errors that are not consequences;
// then timeouts (a hang can be a root cause, but a timeout usually waits on a failure
// elsewhere); then the consequences: a rank that was `lost` before the ranks that `stopped`
// because of it. Within each, by time (untimed last), then by rank. Stable, so equal errors
// keep their recorded order. Every surface that names a failed run's first error takes it
// from this order (traces/run_outcome.hpp).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "traces/trace_records.hpp"

namespace pipelens::traces {

// -1: a rank that died; 0: a cause in itself; 1: a timeout; 2: a consequence of another
// rank's failure.
int consequence_level(std::string_view error_kind);

// `errors` reordered root cause first.
std::vector<ErrorRecord> root_cause_first(std::vector<ErrorRecord> errors);

}  // namespace pipelens::traces
