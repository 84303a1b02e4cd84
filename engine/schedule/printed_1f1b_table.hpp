// PyTorch's single-stage Schedule1F1B prints (pipeline_order, which a `_dump_csv`-style dump
// writes) its last rank's forwards numbered from 1: at pp=2 m=4 that rank's row is 1F1, 1B0,
// 1F2, ..., 1F4, 1B3, while the rank runs 1F0, 1B0, 1F1, ... (PyTorch 2.11, read at
// pytorch/pytorch 00722e6; its runtime loop does not follow the table). Read literally, such a
// file is a schedule no pipeline can run (a backward before its forward, a microbatch past m).
//
// Invariant: only that exact pattern is renumbered: two ranks or more, no SEND/RECV, every
// action on its rank's own stage (one stage per rank), the last rank alternating a forward and
// a full backward (F1, B0, F2, B1, ...: its forwards numbered 1..n in order, its backwards
// 0..n-1), and rank 0's forwards 0..n-1. Anything else is left as written, for the schedule
// check to judge.
#pragma once

#include <optional>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

// Renumbers the last rank's forwards k -> k - 1 when `schedule` (as read, before its shape is
// inferred) is such a printed table; returns the microbatch count n then, nullopt otherwise.
std::optional<int> renumber_printed_1f1b_last_rank(Schedule& schedule);

}  // namespace pipelens
