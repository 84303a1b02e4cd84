// CSV exchange with PyTorch: one row per rank, one action per cell in PyTorch's text form, an
// empty cell for an idle slot, CRLF line ends — what `_dump_csv` writes (csv.writer) and
// `_load_csv` reads (csv.reader, one rank per record), in both the compute-only and the
// compute+comms flavour.
//
// Reading splits records as Python's csv.reader does (\r\n, \n or \r line ends; quotes only at
// a cell's start) and infers the shape: pp = number of records, stages = highest stage + 1,
// m = highest microbatch + 1, each stage's rank by infer_stage_to_rank (the first row computing
// it; a stage on two rows is left to the static check to report); SEND/RECV pairs are linked. Idle
// cells are dropped (a lowered file with some is noted: PyTorch's reader refuses it). Refused,
// naming file:line (and rank and cell): a record without actions (a blank line, which PyTorch would
// make an idle rank), a malformed token, and stage or microbatch numbers with a gap (a mistyped
// number would otherwise redefine the shape).
//
// Actions are read in today's notation (F, I, W, B) unless told otherwise; the `_as` readers
// also take PyTorch's older one (F, B = input backward, W, BW = full backward), given or
// inferred from the cells.
#pragma once

#include <functional>
#include <optional>
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

struct ScheduleCsvReading {
    Schedule schedule;  // in pipelens' (today's) kinds whatever the file's notation
    ActionNotation notation = ActionNotation::current;
    // Set when the legacy notation was inferred, not given: the cells that showed it.
    std::string legacy_evidence;
    // The file opened with a UTF-8 byte order mark, read past here but not by PyTorch.
    bool byte_order_mark = false;
    // Set when the file is PyTorch's printed Schedule1F1B table, whose last rank's forwards
    // (numbered from 1) were read as the runtime runs them: that rank's forward count.
    std::optional<int> printed_1f1b_forwards;
    // A compute-only file holding REDUCE_GRAD: PyTorch's _dump_csv writes GPipe's and 1F1B's so
    // (its _add_reduce_grad), and its _load_csv(format="compute_only") refuses them.
    bool reduce_grad_in_compute_only = false;
    // A lowered file's first empty cell ("f.csv:1: rank 0, cell 5"), empty when it has none:
    // PyTorch's _simulate_comms_compute dumps have idle slots among SEND/RECV, and its
    // _load_csv(format="compute_comms") refuses them.
    std::string empty_cell_in_lowered;

    // One line telling the user the file was read in the older notation and how to read it
    // otherwise, that it opens with a byte order mark PyTorch would refuse, that its last rank's
    // forwards were renumbered, and that PyTorch's reader refuses its REDUCE_GRAD or its empty
    // cells (unless `idle_slots_are_steps`: an import of a dump reads them as its time steps);
    // empty when none of these.
    std::string note(const std::string& source_name, bool idle_slots_are_steps = false) const;
};

// `notation` nullopt: inferred. Legacy when a cell is BW, or when (no cell being I or an
// OVERLAP_F_B) a rank runs W after a B of the same stage and microbatch; a file with both BW and
// I is refused; otherwise today's.
ScheduleCsvReading parse_schedule_csv_as(std::string_view text, const std::string& source_name,
                                         std::optional<ActionNotation> notation,
                                         std::vector<std::vector<int>>* columns = nullptr);
ScheduleCsvReading read_schedule_csv_as(const std::string& path,
                                        std::optional<ActionNotation> notation);

// A notation as the user names it (--notation, schedule.notation): "auto" (nullopt: inferred),
// "current" or "legacy"; ScheduleFileError listing them otherwise.
std::optional<ActionNotation> parse_notation_choice(std::string_view text);

std::string format_schedule_csv(const Schedule& schedule);
void write_schedule_csv(const Schedule& schedule, const std::string& path);

// Where an action is, for messages: "sched.csv:2: rank 1, cell 5". By default "<source>: rank
// 1, step 4".
using ActionLocator = std::function<std::string(int rank, int step)>;

// The shape of per-rank action lists read from somewhere (a CSV, an imported trace): pp = the
// rows, stages = highest stage + 1, m = highest microbatch + 1, v when the stages divide evenly,
// each stage's rank by infer_stage_to_rank with SplitStage::first_rank. ScheduleFileError, naming
// `source_name`, when too few forwards cover them, or naming (through `locate`) the first action
// whose stage or microbatch number lies above a gap.
void infer_schedule_shape(Schedule& schedule, const std::string& source_name,
                          const ActionLocator& locate = {});

// Gives every SEND/RECV pair of a loaded schedule a shared id (its `link`); unmatched ones
// keep kNoPair and are reported by the static check.
void link_send_recv_pairs(Schedule& schedule);

}  // namespace pipelens
