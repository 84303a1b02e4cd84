// The automatic zero-bubble scheduler of Qi et al. (Zero Bubble Pipeline Parallelism, ICLR
// 2024, section 3.1), as the authors' implementation runs it (sail-sg/zero-bubble-pipeline-
// parallelism, megatron/core/pipeline_parallel/auto_schedule.py, `manual_order` and
// `initial_solution`): a greedy placement round by round (round i places backward i on every
// stage with the forwards and weight gradients before it), tried with each of three on/off
// heuristics, the cheapest of the eight kept (the first one found on a tie). No ILP: the
// authors' published bubble rates come from this heuristic alone.
//
// Its own timing model decides the order: an op ends at its stage's clock plus its time, or
// later when its input from the neighbouring stage arrives (that op's end + the communication
// time); communication occupies nothing. Memory is counted in half-microbatches of activations
// (F +2, I -1, W -1, the authors' runtime convention), so a limit of L microbatches is 2L units.
// A run's cost is the longest stage span (first F start to last W end), the paper's "cost".
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/schedule/action.hpp"
#include "engine/schedule/schedule_kind.hpp"

namespace pipelens {

// The three switches of one run, in the authors' order of search (outer to inner).
struct ZeroBubbleHeuristics {
    bool allow_bubble_before_first_backward = true;  // warm-up forwards must finish before it
    bool prioritize_backward = true;  // skip a forward when a stage is 2+ ahead of the next
    bool no_bubble_greedy = true;     // fill a gap shorter than a W only if it would not grow
                                      // the worst stage's bubble
};

struct ZeroBubbleOp {
    ActionKind kind = ActionKind::forward;  // forward, backward_input or backward_weight
    int microbatch = 0;
    std::int64_t end_ns = 0;  // in the scheduler's own timing model
};

struct ZeroBubbleRun {
    ZeroBubbleHeuristics heuristics;
    bool fits = false;      // false: the memory limit stopped it ("cannot fit")
    std::int64_t cost = 0;  // the longest stage span; meaningful when `fits`
    std::vector<std::vector<ZeroBubbleOp>> stages;  // per stage, in order; the best run's only
};

struct ZeroBubbleSearch {
    std::vector<ZeroBubbleRun> runs;  // all eight, in search order
    int best = -1;                    // index into runs; -1 when none fits
};

// Runs the search for `pp` stages (one per rank) and `m` microbatches. Throws
// ScheduleConfigError when no run fits the memory limit.
ZeroBubbleSearch search_zero_bubble(int pp, int m, const ZeroBubbleInputs& inputs);

}  // namespace pipelens
