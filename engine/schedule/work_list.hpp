// The one driver that walks every rank through its actions in program order, used by the dry
// run, the SEND/RECV placement and the simulator: a rank runs its next action when the caller
// says it can, and otherwise waits until something it may need is produced.
//
// Two orders, because one caller's result depends on the order and the others' do not:
//  - `turns`: every unfinished rank gets one turn per round, in ascending rank order, and runs
//    at most one action in it. This is PyTorch's `_add_send_recv`: where a RECV lands in the
//    receiver's list depends on when, in this order, its sender ran.
//  - `until_blocked`: a rank runs until it blocks, then waits to be woken by the producer of
//    what it needs. Linear in the number of actions; the dry run and the simulator compute the
//    same result in any order, so they take this one.
//
// Invariant: `run` returns once no rank can make progress; `finished()` tells whether that is
// because every rank ran everything, and `next_step(rank)` is where each rank stopped.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

enum class WorkOrder { turns, until_blocked };

class WorkList {
  public:
    WorkList(const Schedule& schedule, WorkOrder order)
        : schedule_(schedule),
          order_(order),
          next_(schedule.ranks.size(), 0),
          blocked_(schedule.ranks.size(), false) {}

    // `try_run(rank, action)` runs the rank's next action and returns true, or returns false if
    // it cannot run yet. It may call wake() for ranks that may now be able to continue.
    template <typename TryRun>
    void run(TryRun&& try_run) {
        if (order_ == WorkOrder::turns)
            run_in_turns(try_run);
        else
            run_until_blocked(try_run);
    }

    // Something `rank` may be waiting for was produced (no effect in `turns` order, where every
    // rank is asked each round anyway).
    void wake(int rank) {
        if (rank >= 0 && blocked_[rank]) {
            blocked_[rank] = false;
            woken_.push_back(rank);
        }
    }

    std::size_t next_step(int rank) const { return next_[rank]; }
    bool finished() const {
        for (std::size_t rank = 0; rank < next_.size(); ++rank)
            if (next_[rank] < schedule_.ranks[rank].size())
                return false;
        return true;
    }

  private:
    template <typename TryRun>
    void run_until_blocked(TryRun& try_run) {
        for (int rank = 0; rank < static_cast<int>(schedule_.ranks.size()); ++rank)
            woken_.push_back(rank);
        while (!woken_.empty()) {
            const int rank = woken_.front();
            woken_.pop_front();
            const auto& actions = schedule_.ranks[rank];
            while (next_[rank] < actions.size()) {
                if (!try_run(rank, actions[next_[rank]])) {
                    blocked_[rank] = true;
                    break;
                }
                ++next_[rank];
            }
        }
    }

    template <typename TryRun>
    void run_in_turns(TryRun& try_run) {
        std::vector<int> active, still_active;
        for (int rank = 0; rank < static_cast<int>(schedule_.ranks.size()); ++rank)
            if (!schedule_.ranks[rank].empty())
                active.push_back(rank);
        while (!active.empty()) {
            bool progress = false;
            still_active.clear();
            for (int rank : active) {
                const auto& actions = schedule_.ranks[rank];
                if (try_run(rank, actions[next_[rank]])) {
                    ++next_[rank];
                    progress = true;
                }
                if (next_[rank] < actions.size())
                    still_active.push_back(rank);
            }
            woken_.clear();
            if (!progress)
                return;
            active.swap(still_active);
        }
    }

    const Schedule& schedule_;
    WorkOrder order_;
    std::vector<std::size_t> next_;
    std::vector<bool> blocked_;
    std::deque<int> woken_;
};

}  // namespace pipelens
