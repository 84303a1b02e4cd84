// Static check of a schedule, generated or loaded: the rules PyTorch's `_validate_schedule`
// enforces, plus the pairing rules for schedules that already carry SEND/RECV actions.
//
//  - every action names a stage in range and, where its kind needs one, a microbatch in range;
//  - every stage runs on exactly one rank (the one in `stage_to_rank`);
//  - per stage and microbatch: F once, before I or B; I before W; never both B and I;
//  - per stage: F = m, I = W, B + I = m;
//  - with communication: each SEND has exactly one RECV on the neighbour stage's rank, every
//    rank-crossing F/I/B is sent and received, and same-rank neighbours exchange nothing.
//
// Problems are collected (up to a limit) rather than stopping at the first, each naming the
// rank, the step and the action.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

struct CheckReport {
    std::vector<std::string> problems;
    bool truncated = false;  // more problems existed than were kept

    bool ok() const { return problems.empty(); }
    std::string text() const;
};

class ScheduleCheckError : public std::runtime_error {
  public:
    // `source`, when given, opens the message: the file the schedule came from.
    explicit ScheduleCheckError(CheckReport report, const std::string& source = {});
    const CheckReport& report() const { return report_; }

  private:
    CheckReport report_;
};

CheckReport check_structure(const Schedule& schedule, std::size_t max_problems = 20);

// Throws ScheduleCheckError if check_structure finds anything.
void require_valid_structure(const Schedule& schedule);

}  // namespace pipelens
