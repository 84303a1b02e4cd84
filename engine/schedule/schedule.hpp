// A pipeline schedule: for every rank, the ordered actions it performs in one training step.
//
// This is the value every transform takes and returns (generate -> lower -> check), in the
// shape of PyTorch's `pipeline_order` / `pipeline_order_with_comms` dictionaries, minus their
// idle (None) slots: the runtime skips those, so they carry no meaning here.
//
// Invariants kept by every transform: `stage_to_rank` has one entry per stage; each rank's list
// holds only actions of stages mapped to it (OVERLAP_F_B parts included); `parts` holds the
// parts of every OVERLAP_F_B; after lowering, each SEND/RECV pair shares one pair id in
// [0, pair_count).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "engine/schedule/action.hpp"

namespace pipelens {

struct Schedule {
    std::string name;          // schedule kind ("Interleaved1F1B") or where it came from
    int rank_count = 0;        // pp: ranks in the pipeline group
    int stages_per_rank = 1;   // v
    int microbatch_count = 0;  // m
    int stage_count = 0;       // pp * v for generated schedules
    std::vector<int> stage_to_rank;
    std::vector<std::vector<Action>> ranks;  // ranks[r] = the actions rank r runs, in order
    std::vector<Action> parts;               // pool of OVERLAP_F_B parts
    bool has_communication = false;          // true once SEND/RECV actions are in the lists
    int pair_count = 0;

    std::span<const Action> parts_of(const Action& action) const {
        if (action.kind != ActionKind::overlap_forward_backward)
            return {&action, 1};
        return {parts.data() + action.link, action.part_count};
    }
    std::string text(const Action& action) const { return action_text(action, parts); }
    std::size_t action_count() const;

    // Appends an OVERLAP_F_B of `overlap_parts` to rank `rank`.
    void add_overlap(int rank, std::initializer_list<Action> overlap_parts);
};

// Same per-rank action lists (texts), same mapping, same shape.
bool same_actions(const Schedule& left, const Schedule& right);

// An empty schedule of the given shape with its ranks allocated, carrying over the metadata
// (name, counts, mapping) of `shape_source`; transforms build their output from this.
Schedule empty_like(const Schedule& shape_source);

}  // namespace pipelens
