// What held each action, and the critical path: the chain of actions and transfers that sets
// the step time, for simulated, executed and imported runs alike.
//
// An action is held by whichever it waited for that became ready last: its stream (compute or
// communication lane), free once the earlier actions holding it are done (a posted receive does
// not hold it: engine/schedule/action.hpp's holds_stream), or the producer of one of its inputs,
// the inputs being what engine/schedule/dependencies.hpp says (the one definition of the rules;
// nothing here adds a rule). A producer is ready when it ends. In a run that repeats its program
// (run --steps N), an input's producer is the one of the waiting action's own training step
// (training_steps.hpp), so each step's actions wait for that step's work, never the first step's.
// Ties go to an input over the stream, and among inputs to the later in rule order, as the rules
// file says. The critical path starts at the action that ends last and follows `held_by` back to an
// action that waited for nothing.
//
// Invariant: the path's shares tile [0, step end] exactly: each link owns the time from its
// holder's end (or its own start, if later) to its own end, and any gap before its start is
// waiting; so the shares sum to the end of the last action.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/analysis/timed_schedule.hpp"
#include "engine/schedule/dependencies.hpp"

namespace pipelens::analysis {

struct ActionRef {
    std::int32_t rank = -1;
    std::int32_t index = -1;  // position in the rank's program order (schedule.ranks[rank])
    friend bool operator==(const ActionRef&, const ActionRef&) = default;
};

// What the time on the path was spent on.
enum class PathShare : std::uint8_t {
    forward,          // F
    backward_input,   // I
    backward_weight,  // W
    full_backward,    // B
    overlap,          // OVERLAP_F_B
    communication,    // SEND/RECV: the transfers
    collective,       // UNSHARD, RESHARD, REDUCE_GRAD
    waiting,          // nothing on the path ran (host overhead, a late start)
};
inline constexpr int kPathShareCount = 8;
std::string_view share_name(
    PathShare share);  // "F", "I", "W", "B", "overlap", "communication", ...
PathShare share_of(ActionKind kind);

// For every action, what it waited for last (no holder: it waited for nothing, or only for
// actions that never ran).
class HoldGraph {
  public:
    explicit HoldGraph(const TimedSchedule& timed,
                       const DependencyRules& rules = DependencyRules::pytorch());

    std::optional<ActionRef> held_by(ActionRef action) const;

  private:
    std::vector<std::size_t> first_;  // rank -> index of its first action in holders_
    std::vector<ActionRef> holders_;  // rank < 0: none
};

struct PathLink {
    ActionRef action;
    std::int64_t from_ns = 0;  // the part of the action on the path: [from_ns, end_ns)
    std::int64_t end_ns = 0;
    std::int64_t waited_ns = 0;  // idle on the path just before from_ns
};

struct CriticalPath {
    std::vector<PathLink> links;  // earliest first
    // The step the path spans: from the earliest start of an action that ended (a RECV posted
    // before the clock's zero starts before it) to the end of the last; the shares add up to
    // its length, the step time.
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t length_ns() const { return end_ns - start_ns; }
    std::array<std::int64_t, kPathShareCount> share_ns{};  // by PathShare
};

// The critical path of a run; empty for a run with no ended action.
CriticalPath critical_path(const TimedSchedule& timed, const HoldGraph& holds);

// The run re-timed with each ended action taking `duration_ns(ref)`: each action's new end, index
// as timed.times (-1 for one that never ended). An action starts when the same dependencies
// as above are ready (its stream, unless it is a posted RECV, which waits only for its data, as
// the simulator times it; its inputs) at their new times, keeping two things from the
// record: how much earlier than a producer's end it started (a receive begins as its send is
// issued), and the time between its dependencies being ready and its start (host overhead).
// Slack after a dependency that was not the last is not kept: with new times another may be.
// Invariant: with every duration as recorded, every end is the recorded one.
//
// How a receive posted in program order (rules with rendezvous posting) gets its data: as it was
// sent, a receive posted before then waiting for it (a real run: Gloo's and small NCCL
// messages), or flowing once both its send is issued and it is posted, for as long as it flowed
// in the record (a simulation with --rendezvous, which times it so: re-timed exactly).
enum class ReceivedData { as_sent, once_posted };

std::vector<std::vector<std::int64_t>> retime(
    const TimedSchedule& timed, const std::function<std::int64_t(ActionRef)>& duration_ns,
    const DependencyRules& rules = DependencyRules::pytorch(),
    ReceivedData received = ReceivedData::as_sent);

// The latest end of `retime`'s result: the re-timed step time (0 for none).
std::int64_t retimed_end(const std::vector<std::vector<std::int64_t>>& ends);

}  // namespace pipelens::analysis
