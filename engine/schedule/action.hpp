// The Action IR: one step a rank performs in a pipeline schedule, and its exact text form.
//
// The text form is PyTorch's `_Action` notation (torch.distributed.pipelining), so schedules
// move between pipelens and PyTorch unchanged: `0F1`, `3I0`, `1RECV_F0`, `0SEND_B2`,
// `0UNSHARD`, `(0F7;7B3)OVERLAP_F_B`. PyTorch's older notation (its 2024 releases, and test
// artifacts written then) spelled the backwards differently: B = input backward (today's I),
// W = weight backward, BW = full backward (today's B); it can be read, never written.
//
// Invariants: an Action is a 16-byte value so a schedule of millions of actions stays compact.
// The parts of an OVERLAP_F_B action are not stored inline; they live in the owning schedule's
// part pool, indexed by `link` and `part_count`. Parsing is strict: the whole
// token must match, unlike PyTorch's prefix match that ignores trailing garbage.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens {

enum class ActionKind : std::uint8_t {
    forward,                   // F
    backward_input,            // I
    backward_weight,           // W
    full_backward,             // B
    send_forward,              // SEND_F
    recv_forward,              // RECV_F
    send_backward,             // SEND_B
    recv_backward,             // RECV_B
    overlap_forward_backward,  // OVERLAP_F_B
    unshard,                   // UNSHARD
    reshard,                   // RESHARD
    reduce_grad,               // REDUCE_GRAD
};

inline constexpr int kActionKindCount = 12;
inline constexpr std::int32_t kNoMicrobatch = -1;
inline constexpr std::int32_t kNoPair = -1;

struct Action {
    std::int32_t stage = 0;                   // -1 for an OVERLAP_F_B container
    std::int32_t microbatch = kNoMicrobatch;  // absent for UNSHARD/RESHARD/REDUCE_GRAD
    // SEND/RECV: the pair id shared by a send and its recv (kNoPair before lowering).
    // OVERLAP_F_B: index of its first part in the schedule's part pool.
    std::int32_t link = kNoPair;
    ActionKind kind = ActionKind::forward;
    std::uint8_t part_count = 0;  // OVERLAP_F_B: number of parts

    friend bool operator==(const Action&, const Action&) = default;
};

// PyTorch's spelling of a kind: "F", "SEND_F", "OVERLAP_F_B", ...
std::string_view kind_text(ActionKind kind);

// The kind predicates are inline: the simulator and the lowering ask them per action.
inline bool is_compute(ActionKind kind) {  // F, I, W, B, OVERLAP_F_B (PyTorch's is_compute_op)
    return kind == ActionKind::forward || kind == ActionKind::backward_input ||
           kind == ActionKind::backward_weight || kind == ActionKind::full_backward ||
           kind == ActionKind::overlap_forward_backward;
}
inline bool is_communication(ActionKind kind) {  // SEND_*/RECV_*
    return kind == ActionKind::send_forward || kind == ActionKind::recv_forward ||
           kind == ActionKind::send_backward || kind == ActionKind::recv_backward;
}
inline bool is_fsdp(ActionKind kind) {  // UNSHARD, RESHARD, REDUCE_GRAD
    return kind == ActionKind::unshard || kind == ActionKind::reshard ||
           kind == ActionKind::reduce_grad;
}
// Every kind but UNSHARD/RESHARD/REDUCE_GRAD/OVERLAP_F_B names a microbatch.
inline bool needs_microbatch(ActionKind kind) {
    return !is_fsdp(kind) && kind != ActionKind::overlap_forward_backward;
}
// SEND/RECV and the FSDP collectives (UNSHARD, REDUCE_GRAD) run on a rank's communication
// stream; everything else (F, I, W, B, OVERLAP_F_B, RESHARD) on its compute stream.
inline bool uses_communication_stream(ActionKind kind) {
    return is_communication(kind) || kind == ActionKind::unshard || kind == ActionKind::reduce_grad;
}

// A posted RECV waits for its data without holding its stream (PyTorch's irecv); every other
// action holds its stream while it runs, so the stream's next action starts after it.
inline bool holds_stream(ActionKind kind) {
    return kind != ActionKind::recv_forward && kind != ActionKind::recv_backward;
}

inline Action make_action(int stage, ActionKind kind, int microbatch = kNoMicrobatch) {
    Action action;
    action.stage = stage;
    action.kind = kind;
    action.microbatch = microbatch;
    return action;
}

// Which of PyTorch's spellings a text uses. `current`: F, I, W, B (full backward), ...;
// `legacy`: F, B (input backward), W, BW (full backward), and no I, OVERLAP_F_B or REDUCE_GRAD.
enum class ActionNotation : std::uint8_t { current, legacy };

// Malformed action text. `token` is the offending text exactly as given.
class ActionParseError : public std::runtime_error {
  public:
    ActionParseError(std::string token, const std::string& why);
    const std::string& token() const { return token_; }

  private:
    std::string token_;
};

// An OVERLAP_F_B whose parts are `own_parts`, appended to the pool `parts` it indexes into.
Action append_overlap(std::vector<Action>& parts, std::span<const Action> own_parts);

// Appends the text of `action` to `out`. `parts` is the pool OVERLAP_F_B parts index into (the
// schedule's whole pool, not the action's own parts); std::out_of_range when an overlap's parts
// lie outside it.
void append_action_text(std::string& out, const Action& action, std::span<const Action> parts);
std::string action_text(const Action& action, std::span<const Action> parts = {});

// Parses one action written in `notation`. Parts of an OVERLAP_F_B are appended to `parts`.
// Throws ActionParseError; a token only the other notation has (BW in the current one, I in the
// legacy one) says so. An empty (or all-blank) token is not an action; callers treat it as an
// idle slot.
Action parse_action(std::string_view text, std::vector<Action>& parts,
                    ActionNotation notation = ActionNotation::current);

}  // namespace pipelens
