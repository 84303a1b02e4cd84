// The edges of a profiled window: a profile started or stopped by hand (or on demand) begins and
// ends inside training steps, so a rank's "PP:" ranges open with the tail of a step whose start
// was not recorded and close with the head of one that did not end. Steps are told apart by
// counting each action's occurrences (the k-th "PP:1F0" is step k), which the leading tail would
// shift by one for the actions it holds, pairing one step's forwards with the step before's
// backwards.
//
// Invariants: only "PP:" ranges (PyTorch's runtime) are considered, in time order (a rank runs
// its steps one after another, each the same program); ranges are dropped from the front only
// when they are, name for name, the end of the first whole step that follows them, so a trace
// that begins at a step's start keeps every range. A step starts at the forward of microbatch 0
// on the rank's lowest stage, with the UNSHARDs and that forward's RECV_F just before it.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/import/profiler_rank_file.hpp"

namespace pipelens::import {

// Drops the ranges before the rank's first whole step when they are the tail of a step the
// profile began in; returns how many were dropped.
std::size_t drop_leading_partial_step(std::vector<Range>& ranges);

// How many "PP:" ranges lie past the last step every action completed (the head of a step the
// profile stopped in), given that many whole `steps`: they are not imported.
std::size_t ranges_past_last_step(const std::vector<Range>& ranges, int steps);

}  // namespace pipelens::import
