// PyTorch's own schedule dumps (torch.distributed.pipelining.schedules) as pipelens runs: the
// unit-step trace of `_dump_chrometrace` ({"traceEvents": [{"name": "1F0", "cat": ...,
// "ph": "X", "pid": rank, "tid": rank, "ts": step, "dur": 1}, ...]}, one file for all ranks) and
// the `_dump_csv` schedule (one row per rank, one cell per step, empty cells idle).
//
// Invariants: these files hold PyTorch's simulated unit steps, not measurements, so every run
// read here has `unit_steps` set, a note saying so, and one step drawn as 1 us (1000 ns): an
// action at step t of d steps runs [t * 1000, (t + d) * 1000) ns. A rank's actions keep their
// step order; the shape (pp, stages, v, m, stage_to_rank) is inferred as the CSV reader infers
// it; the schedule is named after the file. Bad input is an ImportError naming the file and the
// event (by index) or cell at fault.
#pragma once

#include <string>
#include <vector>

#include "engine/import/imported_run.hpp"

namespace pipelens::import {

inline constexpr std::int64_t kUnitStepNs = 1000;

// Exactly one file, as `_dump_chrometrace` writes it (the object form, or a bare array of the
// same events). The event's name, not its `cat`, says what the action is: PyTorch files I and
// OVERLAP_F_B under "communication".
ImportedRun read_pipelining_chrometrace(const std::vector<std::string>& files);

// Exactly one file, as `_dump_csv` writes it: a cell's column is its step.
ImportedRun read_pipelining_csv(const std::vector<std::string>& files);

}  // namespace pipelens::import
