// Stage placement read back from per-rank action lists: which rank holds each stage, for
// schedules that arrive without their mapping (a PyTorch CSV, an imported run, a trace's rows).
// The rule is the same for every reader, so a schedule read from a CSV and the same run read
// from its trace agree on where each stage is, loop and "V" placements alike.
//
// The rule:
//  - a stage belongs to the rank that runs its computations (F, I, W, B, also as parts of an
//    OVERLAP_F_B). Computations decide because they are the one kind of action whose stage
//    number every source means literally: a flight-recorder import numbers a transfer by its
//    peer rank and a collective by its process group;
//  - a stage no computation names is placed by the first rank (in rank order) whose list names
//    it in any other action (SEND/RECV, UNSHARD, RESHARD, REDUCE_GRAD): a failed run's trace
//    may hold only a stage's receive, and a schedule's static check then speaks of that rank;
//  - a stage no action names maps to kNoRank;
//  - a stage whose computations run on two ranks is refused (StagePlacementError, naming the
//    stage, both ranks and where the second one runs it) unless the caller asks for
//    SplitStage::first_rank.
//
// Invariants: the result has exactly `schedule.stage_count` entries; stage numbers outside
// [0, stage_count) are ignored (the static check reports them).
#pragma once

#include <stdexcept>
#include <vector>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

inline constexpr int kNoRank = -1;

// What to do with a stage whose computations run on two ranks. Two conventions on purpose:
enum class SplitStage {
    // Readers of runs (imports, trace rows): a run's stage did compute on one rank, so a split
    // stage means a damaged file, refused where it is read, with where it is.
    refuse,
    // The CSV reader: its schedules go to the static check, which names every misplaced action
    // ("rank 1, step 2: 0F1 runs stage 0 on rank 1, but stage 0 is assigned to rank 0"), all of
    // them at once; the first rank that computes the stage keeps it.
    first_rank,
};

// A stage whose computations run on two ranks: `first_rank` ran it first (in rank order),
// `rank` runs it too, at index `step` of its action list.
struct StageSplit {
    int stage = 0;
    int first_rank = 0;
    int rank = 0;
    int step = 0;
};

class StagePlacementError : public std::runtime_error {
  public:
    // what(): "stage 2 computes on rank 0 and on rank 1; a stage must run on one rank"
    explicit StagePlacementError(StageSplit split);
    const StageSplit& split() const { return split_; }

  private:
    StageSplit split_;
};

// Stage -> rank by the rule above, one entry per stage in [0, schedule.stage_count).
std::vector<int> infer_stage_to_rank(const Schedule& schedule, SplitStage split);

// The stages in [0, schedule.stage_count) that no computation names, ascending: those the rule
// placed by other actions or not at all.
std::vector<int> stages_without_computation(const Schedule& schedule);

}  // namespace pipelens
