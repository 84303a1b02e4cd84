// Bubble accounting: a rank's idle compute time in one step, split into warm-up (before its
// first computation), cool-down (after its last, until the step ends) and the gaps in between,
// each attributed to the peer rank whose work the computation after the gap waited for last.
// The one definition behind the simulator's summary, the records of real and imported runs, and
// the viewer's bubbles.
//
// Who a computation waited for is never decided here. The simulator knows it as it times each
// action: the dependency rules' Input::origin of the input that came last. For a recorded run,
// HoldGraph (critical_path.hpp, over engine/schedule/dependencies' rules) names what held the
// computation, and `waited_for` turns that holder into the rank whose work it carried: a receive
// carries its sender's (the transfer's peer, engine/schedule/action_facts), a computation on
// another rank that rank's.
//
// Invariants: a rank never waits on itself. A gap whose computation waited last for something
// on its own rank (its own earlier action, an UNSHARD on its communication stream, the V-shape's
// local hand-off between its two stages) or for nothing recorded (host overhead) is `local_ns`,
// never an entry of `waiting_on_rank`; the viewer calls such a gap "idle". With the rank's
// computations run one at a time inside [0, step end], as the simulator runs them,
// warmup_ns + waiting_ns() + local_ns + cooldown_ns == bubble_ns == step end - busy_ns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/timed_schedule.hpp"

namespace pipelens::analysis {

// Where a rank's idle compute time went.
struct BubbleSplit {
    std::int64_t warmup_ns = 0;    // before its first computation (all of the step if none)
    std::int64_t cooldown_ns = 0;  // after its last computation until the step ends
    std::int64_t local_ns = 0;     // in between, waiting on nothing from a peer
    std::map<int, std::int64_t> waiting_on_rank;  // in between, by the peer waited on

    std::int64_t waiting_ns() const;  // the sum over waiting_on_rank
};

struct RankBubbles {
    bool computed = false;       // it ran a computation
    std::int64_t busy_ns = 0;    // the computations' time
    std::int64_t bubble_ns = 0;  // step end - busy_ns, at least 0
    double bubble_ratio = 0;     // bubble_ns over the step (0 for an empty step)
    BubbleSplit split;
};

// One rank's computations, fed in program order as they are timed (the simulator's hot path:
// the gap test is inline and touches the map only for an attributed gap).
class RankBubbleAccount {
  public:
    explicit RankBubbleAccount(int rank) : rank_(rank) {}

    // A computation ran [start_ns, end_ns); `provider` is the rank whose work it waited for
    // last (the rank itself, or < 0, for none from a peer).
    void add_computation(std::int64_t start_ns, std::int64_t end_ns, int provider) {
        busy_ns_ += end_ns - start_ns;
        const std::int64_t gap = start_ns - free_ns_;
        if (!computed_)
            split_.warmup_ns = start_ns;
        else if (gap > 0)
            add_gap(gap, provider);
        computed_ = true;
        free_ns_ = std::max(free_ns_, end_ns);
    }

    // The rank's figures for a step that ends at `step_end_ns`.
    RankBubbles finish(std::int64_t step_end_ns) const;

  private:
    void add_gap(std::int64_t gap, int provider);

    int rank_;
    bool computed_ = false;
    std::int64_t free_ns_ = 0;  // the latest end of its computations so far
    std::int64_t busy_ns_ = 0;
    BubbleSplit split_;
};

// Whom a computation of a recorded run waited for, by what held it.
struct WaitedFor {
    int peer = -1;                       // the rank whose work it waited for; -1: none, local
    std::optional<ActionRef> held_by;    // what it waited for last (HoldGraph::held_by)
    std::optional<ActionRef> waited_on;  // the computation behind that, through transfers
};

// `holds` must be built from `timed`.
WaitedFor waited_for(const TimedSchedule& timed, const HoldGraph& holds, ActionRef computation);

// Every rank's figures for a recorded run whose step ends at `step_end_ns`: its ended
// computations (the actions on its compute lane) in program order, each gap attributed by
// `waited_for`. Index = rank.
std::vector<RankBubbles> account_bubbles(const TimedSchedule& timed, const HoldGraph& holds,
                                         std::int64_t step_end_ns);

}  // namespace pipelens::analysis
