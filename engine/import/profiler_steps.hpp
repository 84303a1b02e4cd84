// Which training step each action of a rank's profiler trace belongs to. Two records say it:
//  - torch.profiler run with a schedule wraps every step in a "ProfilerStep#N" range, from one
//    step() call to the next (profiler.py, record_steps). Where a trace has such ranges holding
//    actions, each of those is one step, in time order; actions outside them are in no step.
//    This is the only way to tell a single-stage schedule's steps apart (its actions are read
//    from operators, which carry no step), and it is what the user's loop called a step;
//  - otherwise each action's occurrence: the k-th "PP:1F0" is step k (a step runs each action
//    once), after the tail of a step the profile opened in is dropped (profiler_step_edges.hpp);
//    a single-stage trace without ProfilerStep ranges is one step.
//
// Invariants: a ProfilerStep range that holds no action is no step (stop() closes one that ran
// nothing); within one ProfilerStep range every action range occurs once, else ImportError
// naming the file, the range and both bytes; ranges that overlap are ImportError too; steps are
// numbered from 0 in time order, and after align_profiler_steps step k is the same N on every
// rank that has the ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/import/profiler_rank_file.hpp"

namespace pipelens::import {

struct RankSteps {
    bool from_profiler_steps = false;  // steps are the ProfilerStep ranges in `windows`
    int count = 0;                     // the whole steps the trace holds
    std::vector<int> of_range;         // per cpu_ranges entry: its step; -1: in none
    std::vector<Range> windows;        // the ProfilerStep ranges that hold actions, by start
    std::size_t outside = 0;           // action ranges in no such window
};

// Drops, from each trace without ProfilerStep ranges, the tail of a step its profile began in;
// returns a note per trace for what was dropped and for ranges past its last whole step.
std::vector<std::string> trim_step_edges(std::vector<RankFile>& files);

// The steps of `file` (trimmed already); ImportError for an action repeated in one ProfilerStep,
// or for ProfilerStep ranges that overlap (torch.profiler's follow one another).
RankSteps rank_steps(const RankFile& file);

// Makes step k the same ProfilerStep#N on every rank that has them: each such rank keeps the
// ranges whose N every such rank has (a rank whose profile began or ended a step apart from the
// others' has more); returns a note per rank for what it left out. ImportError when those ranks
// share no N.
std::vector<std::string> align_profiler_steps(const std::vector<RankFile>& files,
                                              std::vector<RankSteps>& steps);

// The steps every file holds, and "a.json 2, b.json 1" when they hold different numbers (else
// empty); the step to import (`asked`, else the last common one), ImportError past the common.
int common_steps(const std::vector<RankSteps>& steps);
std::string uneven_steps(const std::vector<RankFile>& files, const std::vector<RankSteps>& steps);
int chosen_step(int common, std::optional<int> asked, const std::string& uneven);

// Where step `step` lies on the rank's clock: its ProfilerStep range, else the span of its
// action ranges; nothing for a single-stage trace without ProfilerStep ranges (all one step).
std::optional<TimeWindow> step_window(const RankFile& file, const RankSteps& steps, int step);

// A single-stage trace's operators that step `step` ran (all of them without ProfilerStep
// ranges).
StageOperators step_operators(const RankFile& file, const RankSteps& steps, int step);

// The notes about how steps were told apart ("" when by occurrence and nothing was left out).
std::vector<std::string> profiler_step_notes(const std::vector<RankFile>& files,
                                             const std::vector<RankSteps>& steps, int step);

}  // namespace pipelens::import
