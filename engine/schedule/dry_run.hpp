// Dependency dry run: executes every rank's action list with blocking semantics and, if the
// ranks can get stuck, explains how — which rank waits at which action for which action, held
// by which rank — following the waits until they close into a cycle (or reach an action no rank
// ever runs).
//
// Semantics (PyTorch's `_simulate_comms_compute`, made explicit): a RECV completes once the
// matching SEND was issued; a SEND needs its F (or I/B); F needs its RECV_F or, for an
// upstream stage on the same rank, that stage's F; I/B need their F and their RECV_B or the
// same-rank downstream I/B; W needs its I. For a compute-only schedule the RECVs are implicit:
// F waits for the upstream F and I/B for the downstream I/B, wherever they run. Parts of an
// OVERLAP_F_B all need their inputs before it starts.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

// One blocked rank: it stopped at `step` (action `action`) because it needs `needed`, which
// rank `holder_rank` runs at `holder_step` (-1 when no rank ever runs it).
struct WaitLink {
    int rank = 0;
    int step = 0;
    std::string action;
    std::string needed;
    int holder_rank = -1;
    int holder_step = -1;
};

struct HangReport {
    std::vector<WaitLink> cycle;    // the chain of waits, closing into a cycle unless it ends
                                    // at an action nobody runs (then the last link has -1)
    std::vector<WaitLink> blocked;  // every rank that could not finish, in rank order
    bool closes_cycle() const { return !cycle.empty() && cycle.back().holder_step >= 0; }
    std::string text() const;
};

struct DryRunResult {
    bool completed = true;
    std::size_t actions_run = 0;
    HangReport hang;  // filled when !completed
};

DryRunResult dry_run(const Schedule& schedule);

class ScheduleHangError : public std::runtime_error {
  public:
    explicit ScheduleHangError(HangReport report);
    const HangReport& report() const { return report_; }

  private:
    HangReport report_;
};

}  // namespace pipelens
