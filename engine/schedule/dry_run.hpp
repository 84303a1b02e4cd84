// Dependency dry run: executes every rank's action list with blocking semantics and, if the
// ranks can get stuck, explains how — which rank waits at which action for which action, held
// by which rank — following the waits until they close into a cycle (or reach an action no rank
// ever runs).
//
// Semantics (PyTorch's `_simulate_comms_compute`, made explicit): what each action waits for is
// the dependency rules of dependencies.hpp, read with blocking semantics (an action runs once
// everything it waits for has run). For a compute-only schedule the RECVs are implicit: F waits
// for the upstream F and I/B for the downstream I/B, wherever they run.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/schedule/dependencies.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens {

// One blocked rank: it stopped at `step` (action `action`) because it needs `needed`, which
// rank `holder_rank` runs at `holder_step` (-1 when no rank ever runs it). A report read from a
// run rather than a schedule says how the holder stands (posted it and is stuck, never posted
// it, left no dump, already completed it) in `holder_note`, in place of the schedule's words.
struct WaitLink {
    int rank = 0;
    int step = 0;
    std::string action;
    std::string needed;
    int holder_rank = -1;
    int holder_step = -1;
    std::string holder_note;
};

struct HangReport {
    std::vector<WaitLink> cycle;    // the chain of waits, closing into a cycle unless it ends
                                    // at an action nobody runs (then the last link has -1)
    std::vector<WaitLink> blocked;  // every rank that could not finish, in rank order
    bool closes_cycle() const { return !cycle.empty() && cycle.back().holder_step >= 0; }
    // `subject` opens the first line: a schedule check says it can hang; a report on a run that
    // did hang (flight-recorder dumps) says "the dumps show a hang" over the same chain.
    std::string text(std::string_view subject = "schedule can hang") const;
};

struct DryRunResult {
    bool completed = true;
    std::size_t actions_run = 0;
    HangReport hang;  // filled when !completed
};

DryRunResult dry_run(const Schedule& schedule,
                     const DependencyRules& rules = DependencyRules::pytorch());

class ScheduleHangError : public std::runtime_error {
  public:
    // `source`, when given, opens the message: the file the schedule came from.
    explicit ScheduleHangError(HangReport report, const std::string& source = {});
    const HangReport& report() const { return report_; }

  private:
    HangReport report_;
};

}  // namespace pipelens
