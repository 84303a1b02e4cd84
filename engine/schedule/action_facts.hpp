// Facts about single actions that every layer asks the same way: which receive a computation
// consumes, and whom a SEND or RECV talks to. The lowering, the deferral of receives, the
// simulator, the runtime, the event table and the run records all ask here instead of spelling
// out `stage + 1` or `kind == F` themselves, so the pipeline's direction is written once.
//
// Invariants: a forward transfer flows from stage s to s + 1, a backward one from s to s - 1; the
// receive a computation consumes is of its own (stage, microbatch). An OVERLAP_F_B consumes what
// its parts consume: callers ask per part (`Schedule::parts_of`). The functions are inline
// because the simulator asks them per action.
#pragma once

#include <optional>

#include "engine/schedule/action.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens {

// The kind of receive a computation part waits for when its neighbour stage is on another rank:
// F takes RECV_F (the upstream activations), I and B take RECV_B (the downstream gradient). W
// only needs its own I, and an OVERLAP_F_B container consumes nothing itself (its parts do):
// nullopt for those and for every non-computation.
inline std::optional<ActionKind> receive_consumed_by(ActionKind computation) {
    switch (computation) {
        case ActionKind::forward:
            return ActionKind::recv_forward;
        case ActionKind::backward_input:
        case ActionKind::full_backward:
            return ActionKind::recv_backward;
        default:
            return std::nullopt;
    }
}

// Whether `part` (never an OVERLAP_F_B container) consumes `receive`: the receive is of the kind
// the part takes, for the part's own stage and microbatch.
inline bool consumes(const Action& part, const Action& receive) {
    return part.stage == receive.stage && part.microbatch == receive.microbatch &&
           receive_consumed_by(part.kind) == receive.kind;
}

inline bool is_send(ActionKind kind) {
    return kind == ActionKind::send_forward || kind == ActionKind::send_backward;
}
inline bool is_receive(ActionKind kind) {
    return kind == ActionKind::recv_forward || kind == ActionKind::recv_backward;
}

[[noreturn]] void throw_not_a_transfer(ActionKind kind);

// How far the stage a transfer talks to lies from its own: SEND_F goes to s + 1 and RECV_B comes
// from s + 1 (+1); RECV_F comes from s - 1 and SEND_B goes to s - 1 (-1). std::invalid_argument
// for any other kind.
inline int transfer_peer_offset(ActionKind transfer) {
    switch (transfer) {
        case ActionKind::send_forward:
        case ActionKind::recv_backward:
            return +1;
        case ActionKind::recv_forward:
        case ActionKind::send_backward:
            return -1;
        default:
            throw_not_a_transfer(transfer);
    }
}

// The stage on the other side of a transfer of `stage`. It may lie outside the pipeline (stage
// 0's RECV_F names stage -1); the static check refuses such schedules.
inline int transfer_peer_stage(ActionKind transfer, int stage) {
    return stage + transfer_peer_offset(transfer);
}
inline int transfer_peer_stage(const Action& transfer) {
    return transfer_peer_stage(transfer.kind, transfer.stage);
}

// The rank a SEND goes to or a RECV comes from: the rank `stage_to_rank` gives the peer stage.
// std::out_of_range when the peer stage is outside the pipeline.
inline int transfer_peer_rank(const Schedule& schedule, const Action& transfer) {
    return schedule.stage_to_rank.at(static_cast<std::size_t>(transfer_peer_stage(transfer)));
}

}  // namespace pipelens
