// The one driver that walks every rank through its actions in program order, used by the dry
// run, the SEND/RECV placement and the simulator: a rank runs its next action when the caller
// says it can, and otherwise waits until something it may need is produced.
//
// Two orders, because one caller's result depends on the order and the others' do not:
//  - `turns`: every unfinished rank gets one turn per round, in ascending rank order, and runs
//    at most one action in it. This is PyTorch's `_add_send_recv`: where a RECV lands in the
//    receiver's list depends on when, in this order, its sender ran. A rank whose action could
//    not run is not asked again until it is woken (it would only fail again), so a round costs
//    the ranks that can move, not all of them: asking every rank every round made lowering
//    quadratic in pp (GPipe pp=16384 took 1.7 s). A rank woken by a lower rank runs later in the
//    same round, one woken by a higher rank in the next, exactly as asking every rank would.
//  - `until_blocked`: a rank runs until it blocks, then waits to be woken by the producer of
//    what it needs. Linear in the number of actions; the dry run and the simulator compute the
//    same result in any order, so they take this one.
//
// Both orders rely on the caller waking (wake()) every rank that may be waiting for what an
// action produced.
//
// Invariant: `run` returns once no rank can make progress; `finished()` tells whether that is
// because every rank ran everything, and `next_step(rank)` is where each rank stopped.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
#include <iterator>
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

    // Something `rank` may be waiting for was produced.
    void wake(int rank) {
        if (rank < 0 || !blocked_[rank])
            return;
        blocked_[rank] = false;
        if (order_ == WorkOrder::until_blocked)
            woken_.push_back(rank);
        else if (rank > turn_) {
            woken_this_round_.push_back(rank);
            std::push_heap(woken_this_round_.begin(), woken_this_round_.end(), std::greater<int>());
        } else {
            woken_next_round_.push_back(rank);
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

    // A round asks its ranks in rank order: those that ran in the last round (already in order)
    // merged with those woken since; ranks woken during the round above the one being asked
    // join it through a small heap. Nothing is sorted per action.
    template <typename TryRun>
    void run_in_turns(TryRun& try_run) {
        std::vector<int> round, ran;
        for (int rank = 0; rank < static_cast<int>(schedule_.ranks.size()); ++rank)
            if (!schedule_.ranks[rank].empty())
                round.push_back(rank);
        while (!round.empty()) {
            ran.clear();
            for (std::size_t at = 0;;) {
                if (!woken_this_round_.empty() &&
                    (at == round.size() || woken_this_round_.front() < round[at])) {
                    std::pop_heap(woken_this_round_.begin(), woken_this_round_.end(),
                                  std::greater<int>());
                    turn_ = woken_this_round_.back();
                    woken_this_round_.pop_back();
                } else if (at < round.size()) {
                    turn_ = round[at++];
                } else {
                    break;
                }
                const auto& actions = schedule_.ranks[turn_];
                if (!try_run(turn_, actions[next_[turn_]]))
                    blocked_[turn_] = true;
                else if (++next_[turn_] < actions.size())
                    ran.push_back(turn_);
            }
            turn_ = -1;
            std::sort(woken_next_round_.begin(), woken_next_round_.end());
            round.clear();
            std::merge(ran.begin(), ran.end(), woken_next_round_.begin(), woken_next_round_.end(),
                       std::back_inserter(round));
            woken_next_round_.clear();
        }
    }

    const Schedule& schedule_;
    WorkOrder order_;
    std::vector<std::size_t> next_;
    std::vector<bool> blocked_;
    std::deque<int> woken_;  // until_blocked: ranks to run again
    // turns: ranks woken above the one being asked (a min-heap), and below it (for next round).
    std::vector<int> woken_this_round_, woken_next_round_;
    int turn_ = -1;  // turns: the rank being asked
};

}  // namespace pipelens
