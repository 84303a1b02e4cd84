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
#include <vector>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

class ScheduleFileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// `columns`, when given, receives per rank the 0-based cell index of each action read (a
// dump's cell index is its unit time step).
Schedule parse_schedule_csv(std::string_view text, const std::string& source_name,
                            std::vector<std::vector<int>>* columns = nullptr);
Schedule read_schedule_csv(const std::string& path);
std::string read_schedule_csv_text(const std::string& path);  // ScheduleFileError if unreadable

std::string format_schedule_csv(const Schedule& schedule);
void write_schedule_csv(const Schedule& schedule, const std::string& path);

// The shape of per-rank action lists read from somewhere (a CSV, an imported trace): pp = the
// rows, stages = highest stage + 1, m = highest microbatch + 1, v when the stages divide evenly,
// each stage's rank from the row it first appears in. ScheduleFileError, naming `source_name`,
// when stage or microbatch numbers have gaps or too few forwards cover them.
void infer_schedule_shape(Schedule& schedule, const std::string& source_name);

// Gives every SEND/RECV pair of a loaded schedule a shared id (its `link`); unmatched ones
// keep kNoPair and are reported by the static check.
void link_send_recv_pairs(Schedule& schedule);

}  // namespace pipelens
