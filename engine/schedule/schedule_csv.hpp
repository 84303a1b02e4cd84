// CSV exchange with PyTorch: one row per rank, one action per cell in PyTorch's text form, an
// empty cell for an idle slot, CRLF line ends — what `_dump_csv` writes and `_load_csv` reads,
// in both the compute-only and the compute+comms flavour.
//
// Reading infers the shape: pp = number of rows, stages = highest stage + 1, m = highest
// microbatch + 1, each stage's rank from the row it first appears in; SEND/RECV pairs are
// linked. Idle cells are dropped. Every syntax error names the file, row (rank) and cell.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

class ScheduleFileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

Schedule parse_schedule_csv(std::string_view text, const std::string& source_name);
Schedule read_schedule_csv(const std::string& path);
std::string read_schedule_csv_text(const std::string& path);  // ScheduleFileError if unreadable

std::string format_schedule_csv(const Schedule& schedule);
void write_schedule_csv(const Schedule& schedule, const std::string& path);

// Gives every SEND/RECV pair of a loaded schedule a shared id (its `link`); unmatched ones
// keep kNoPair and are reported by the static check.
void link_send_recv_pairs(Schedule& schedule);

}  // namespace pipelens
