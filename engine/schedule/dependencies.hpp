// What an action waits for: the one definition of the pipeline's dependency rules.
//
// Every analysis that orders actions asks this file, never a rule of its own: the dry run
// (blocking semantics, hang reports), the SEND/RECV placement of the lowering, the simulator
// (times), and later the critical path and the import of real runs.
//
// The model: running an action part produces *signals* for its (stage, microbatch) — F produces
// `forward`, SEND_F produces `sent_forward`, and so on — and an action part waits for the
// signals its kind's rules name. A rule names a signal of the part's own stage or of a
// neighbouring stage (stage offset), optionally of another microbatch (microbatch offset):
//
//   F      after the upstream F; after lowering, across ranks, after its own RECV_F instead
//   I, B   after their own F, and the downstream I/B (across ranks: their own RECV_B)
//   W      after its own I
//   SEND_F after the F it sends; SEND_B after the I/B it sends
//   RECV_F after the upstream SEND_F; RECV_B after the downstream SEND_B (data is in flight
//   once the send is issued, the zero-bubble paper's model); with rendezvous transfers
//   (`pytorch_rendezvous`, NCCL's and Gloo's behaviour) also after the rank's preceding
//   computation, since a receive is posted when the program reaches it
//   F/I/W/B also after their stage's latest UNSHARD; REDUCE_GRAD after the rank's preceding
//   computation. Those come earlier on the same rank (program order), so blocking semantics
//   always finds them met; only timing analyses read their times.
//
// An OVERLAP_F_B waits for the inputs of all its parts before it starts. A rule whose stage or
// microbatch falls outside the schedule names nothing (stage 0's F waits for no upstream F).
//
// Invariants: rules are values (`DependencyRules`), so a variant set reaches every analysis that
// takes it; the inputs of one part are listed in rule order, and when two arrive at the same
// moment the later one in that order counts as the one waited for (the peer's data over the
// stage's own state), which is how bubbles are attributed.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

// Something that has happened to one (stage, microbatch), or to a stage or rank as a whole.
enum class Signal : std::uint8_t {
    forward,            // F ran
    input_gradient,     // I or B ran: the gradient for the stage's input exists
    weight_ready,       // I ran: W can compute the weight gradient
    sent_forward,       // SEND_F was issued
    sent_backward,      // SEND_B was issued
    received_forward,   // RECV_F completed
    received_backward,  // RECV_B completed
    parameters,         // the stage's latest UNSHARD finished (per stage)
    rank_compute,       // the rank's preceding computation finished (per rank)
};
inline constexpr int kSignalCount = 9;
// Signals kept per (stage, microbatch); the others are per stage or per rank.
inline constexpr int kMicrobatchSignalCount = 7;

// Signals kept per (stage, microbatch) fit one flag byte: this signal's bit in it.
inline bool is_per_microbatch(Signal signal) {
    return static_cast<int>(signal) < kMicrobatchSignalCount;
}
inline std::uint8_t signal_bit(Signal signal) {
    return static_cast<std::uint8_t>(1u << static_cast<int>(signal));
}

// Where a rule's signal comes from, relative to the waiting part.
enum class Source : std::uint8_t {
    stage,          // stage + offset, microbatch + offset, on whichever rank runs that stage
    neighbour,      // like `stage`; but once lowered, a neighbour on another rank is reached
                    // through the part's own receive: `via_receive` of the part's own stage
    program_order,  // produced earlier on the same rank, if at all (UNSHARD, the rank's compute)
};

struct InputRule {
    Signal signal = Signal::forward;
    Source source = Source::stage;
    std::int8_t stage_offset = 0;
    std::int8_t microbatch_offset = 0;
    Signal via_receive = Signal::forward;  // neighbour only
};

// One thing a part waits for, resolved against a schedule. (No member initializers: the hot
// loops of the simulator build these by the million and must not pay for zeroing.)
struct Input {
    Signal signal;
    bool program_order;  // produced earlier on the waiting rank itself
    int stage;           // whose signal; the waiting part's for parameters, -1 for rank_compute
    int microbatch;      // -1 for per-stage and per-rank signals
    int holder;          // the rank that produces the signal
    int origin;          // the rank whose work it carries (the sender, for a receive)
};

// At most this many inputs per part (F/I/B: parameters, own state, neighbour, one extra).
inline constexpr int kMaxInputs = 6;
struct InputList {
    std::array<Input, kMaxInputs> items;  // the first `count` are set
    int count = 0;
    const Input* begin() const { return items.data(); }
    const Input* end() const { return items.data() + count; }
};

// What running one part of a kind produces.
struct Products {
    std::array<Signal, 3> signals{};
    int count = 0;
    const Signal* begin() const { return signals.data(); }
    const Signal* end() const { return signals.data() + count; }
};

class DependencyRules {
  public:
    // The rules PyTorch's runtime follows (torch.distributed.pipelining): the table above.
    static const DependencyRules& pytorch();
    // The same, except that a transfer starts only once its receive is posted: RECV_F/RECV_B
    // also wait for their rank's preceding computation, so where lowering puts a RECV shows.
    static const DependencyRules& pytorch_rendezvous();

    // A variant: `kind` also waits for `rule` (listed after its existing rules). Throws
    // std::invalid_argument for an offset beyond one stage, or more rules than a part can hold.
    DependencyRules with_input(ActionKind kind, InputRule rule) const;

    // What `part` (one part of an action, never an OVERLAP_F_B container) of a schedule waits
    // for when run on `rank`, in rule order. The schedule's form matters: before lowering there
    // are no receives, so neighbours are waited for directly.
    InputList inputs_of(const Schedule& schedule, int rank, const Action& part) const {
        InputList list;
        for_each_input(schedule, rank, part, [&](const Input& input) {
            list.items[list.count++] = input;
            return true;
        });
        return list;
    }
    // The same, handing each input to `visit(input) -> bool` until it returns false (the hot
    // path of the simulator and the dry run: nothing is built). Returns false if stopped.
    template <typename Visit>
    bool for_each_input(const Schedule& schedule, int rank, const Action& part,
                        Visit&& visit) const;

    const Products& products_of(ActionKind kind) const { return products_[static_cast<int>(kind)]; }

    // The ranks (at most four, possibly repeated, possibly `stage`'s own) whose parts can
    // wait for `signal` of `stage`: the ones to wake when it is produced.
    struct Waiters {
        std::array<int, 4> ranks{};
        int count = 0;
        const int* begin() const { return ranks.data(); }
        const int* end() const { return ranks.data() + count; }
    };
    Waiters waiters_of(const Schedule& schedule, Signal signal, int stage) const {
        Waiters waiters;
        const int index = static_cast<int>(signal);
        for (int i = 0; i < waiter_offset_count_[index]; ++i) {
            const int waiting_stage = stage - waiter_offsets_[index][i];
            if (waiting_stage >= 0 && waiting_stage < schedule.stage_count)
                waiters.ranks[waiters.count++] = schedule.stage_to_rank[waiting_stage];
        }
        return waiters;
    }

    // The kinds whose parts produce `signal`, the usual one first ("1B3", or else "1I3").
    struct Producers {
        std::array<ActionKind, 2> kinds{};
        int count = 0;
        const ActionKind* begin() const { return kinds.data(); }
        const ActionKind* end() const { return kinds.data() + count; }
    };
    Producers producers_of(Signal signal) const;

  private:
    DependencyRules();
    void add_input(ActionKind kind, InputRule rule);
    void index_waiters();

    struct KindRules {
        std::array<InputRule, kMaxInputs> inputs{};
        int count = 0;
    };
    std::array<KindRules, kActionKindCount> rules_{};
    std::array<Products, kActionKindCount> products_{};
    // Per signal, the stage offsets (waiting stage = signal's stage - offset) of its waiters.
    std::array<std::array<std::int8_t, 4>, kSignalCount> waiter_offsets_{};
    std::array<int, kSignalCount> waiter_offset_count_{};
};

template <typename Visit>
bool DependencyRules::for_each_input(const Schedule& schedule, int rank, const Action& part,
                                     Visit&& visit) const {
    const KindRules& rules = rules_[static_cast<int>(part.kind)];
    for (int index = 0; index < rules.count; ++index) {
        const InputRule& rule = rules.inputs[index];
        Input input;
        if (rule.source == Source::program_order) {
            const bool per_stage = rule.signal == Signal::parameters;
            input = Input{rule.signal, true, per_stage ? part.stage : -1, -1, rank, rank};
        } else {
            const int stage = part.stage + rule.stage_offset;
            const int microbatch = part.microbatch + rule.microbatch_offset;
            if (stage < 0 || stage >= schedule.stage_count || microbatch < 0 ||
                microbatch >= schedule.microbatch_count)
                continue;
            const int holder = schedule.stage_to_rank[stage];
            if (rule.source == Source::neighbour && schedule.has_communication && holder != rank)
                input = Input{rule.via_receive, false, part.stage, microbatch, rank, holder};
            else
                input = Input{rule.signal, false, stage, microbatch, holder, holder};
        }
        if (!visit(input))
            return false;
    }
    return true;
}

// The text of the action that produces `signal` of (stage, microbatch), e.g. "1SEND_F3".
std::string producer_text(const DependencyRules& rules, Signal signal, int stage, int microbatch);

}  // namespace pipelens
