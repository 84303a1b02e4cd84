// The dry run: a work list of ranks, each running until it blocks; finishing an action wakes
// the one rank that can be waiting for it. Linear in the number of actions. On a hang the wait
// links are rebuilt from where each rank stopped, then followed from the lowest stuck rank.
#include "engine/schedule/dry_run.hpp"

#include "engine/schedule/stage_microbatch_flags.hpp"
#include "engine/schedule/static_check.hpp"

#include <deque>
#include <optional>

#include <fmt/format.h>

namespace pipelens {
namespace {

enum DoneFlag : std::uint8_t {
    kForward = 1 << 0,
    kInput = 1 << 1,  // I
    kFull = 1 << 2,   // B
    kSendForward = 1 << 3,
    kRecvForward = 1 << 4,
    kSendBackward = 1 << 5,
    kRecvBackward = 1 << 6,
};

// What a blocked action needs: an action (kind/stage/microbatch) expected on `holder`.
struct Need {
    Action action;
    int holder = 0;
    bool either_backward = false;  // satisfied by I or B of that stage and microbatch
};

class DryRunner {
  public:
    explicit DryRunner(const Schedule& schedule)
        : schedule_(schedule),
          last_stage_(schedule.stage_count - 1),
          done_(schedule.stage_count, schedule.microbatch_count),
          next_(schedule.ranks.size(), 0),
          blocked_(schedule.ranks.size(), false) {}

    DryRunResult run() {
        DryRunResult result;
        std::deque<int> work;
        for (int rank = 0; rank < static_cast<int>(schedule_.ranks.size()); ++rank)
            work.push_back(rank);
        while (!work.empty()) {
            const int rank = work.front();
            work.pop_front();
            blocked_[rank] = false;
            const auto& actions = schedule_.ranks[rank];
            while (next_[rank] < actions.size()) {
                const Action& action = actions[next_[rank]];
                if (first_need(rank, action)) {
                    blocked_[rank] = true;
                    break;
                }
                for (const Action& part : schedule_.parts_of(action))
                    complete(part, work);
                ++next_[rank];
                ++result.actions_run;
            }
        }
        for (std::size_t rank = 0; rank < schedule_.ranks.size(); ++rank)
            if (next_[rank] < schedule_.ranks[rank].size())
                result.completed = false;
        if (!result.completed)
            result.hang = explain();
        return result;
    }

  private:
    int owner(int stage) const { return schedule_.stage_to_rank[stage]; }
    std::uint8_t done(int stage, int microbatch) const { return done_.get(stage, microbatch); }

    std::optional<Need> need(int stage, ActionKind kind, int microbatch,
                             bool either = false) const {
        return Need{make_action(stage, kind, microbatch), owner(stage), either};
    }

    std::optional<Need> part_need(int rank, const Action& part) const {
        const int stage = part.stage;
        const int mb = part.microbatch;
        const bool lowered = schedule_.has_communication;
        switch (part.kind) {
            case ActionKind::forward:
                if (stage == 0)
                    return std::nullopt;
                if (!lowered || owner(stage - 1) == rank)
                    return done(stage - 1, mb) & kForward
                               ? std::nullopt
                               : need(stage - 1, ActionKind::forward, mb);
                return done(stage, mb) & kRecvForward ? std::nullopt
                                                      : need(stage, ActionKind::recv_forward, mb);
            case ActionKind::backward_input:
            case ActionKind::full_backward:
                if (!(done(stage, mb) & kForward))
                    return need(stage, ActionKind::forward, mb);
                if (stage == last_stage_)
                    return std::nullopt;
                if (!lowered || owner(stage + 1) == rank)
                    return done(stage + 1, mb) & (kInput | kFull)
                               ? std::nullopt
                               : need(stage + 1, ActionKind::full_backward, mb, true);
                return done(stage, mb) & kRecvBackward ? std::nullopt
                                                       : need(stage, ActionKind::recv_backward, mb);
            case ActionKind::backward_weight:
                return done(stage, mb) & kInput ? std::nullopt
                                                : need(stage, ActionKind::backward_input, mb);
            case ActionKind::send_forward:
                return done(stage, mb) & kForward ? std::nullopt
                                                  : need(stage, ActionKind::forward, mb);
            case ActionKind::send_backward:
                return done(stage, mb) & (kInput | kFull)
                           ? std::nullopt
                           : need(stage, ActionKind::full_backward, mb, true);
            case ActionKind::recv_forward:
                return done(stage - 1, mb) & kSendForward
                           ? std::nullopt
                           : need(stage - 1, ActionKind::send_forward, mb);
            case ActionKind::recv_backward:
                return done(stage + 1, mb) & kSendBackward
                           ? std::nullopt
                           : need(stage + 1, ActionKind::send_backward, mb);
            default:
                return std::nullopt;  // UNSHARD, RESHARD, REDUCE_GRAD
        }
    }

    std::optional<Need> first_need(int rank, const Action& action) const {
        for (const Action& part : schedule_.parts_of(action))
            if (auto missing = part_need(rank, part))
                return missing;
        return std::nullopt;
    }

    void wake(int rank, std::deque<int>& work) {
        if (rank >= 0 && blocked_[rank]) {
            blocked_[rank] = false;
            work.push_back(rank);
        }
    }

    void complete(const Action& part, std::deque<int>& work) {
        const int stage = part.stage;
        std::uint8_t flag = 0;
        int waiter = -1;  // the one other rank that may be blocked on this action
        switch (part.kind) {
            case ActionKind::forward:
                flag = kForward;
                if (stage < last_stage_)
                    waiter = owner(stage + 1);
                break;
            case ActionKind::backward_input:
            case ActionKind::full_backward:
                flag = part.kind == ActionKind::backward_input ? kInput : kFull;
                if (stage > 0)
                    waiter = owner(stage - 1);
                break;
            case ActionKind::send_forward:
                flag = kSendForward;
                if (stage < last_stage_)
                    waiter = owner(stage + 1);
                break;
            case ActionKind::send_backward:
                flag = kSendBackward;
                if (stage > 0)
                    waiter = owner(stage - 1);
                break;
            case ActionKind::recv_forward:
                flag = kRecvForward;
                break;
            case ActionKind::recv_backward:
                flag = kRecvBackward;
                break;
            default:
                return;
        }
        done_.set(stage, part.microbatch, flag);
        wake(waiter, work);
    }

    // Where the holder rank runs the needed action, at or after the step it is stuck at.
    int find_step(const Need& missing) const {
        const auto& actions = schedule_.ranks[missing.holder];
        for (std::size_t step = next_[missing.holder]; step < actions.size(); ++step)
            for (const Action& part : schedule_.parts_of(actions[step])) {
                const bool kind_matches =
                    part.kind == missing.action.kind ||
                    (missing.either_backward && part.kind == ActionKind::backward_input);
                if (kind_matches && part.stage == missing.action.stage &&
                    part.microbatch == missing.action.microbatch)
                    return static_cast<int>(step);
            }
        return -1;
    }

    WaitLink link_for(int rank) const {
        const Action& action = schedule_.ranks[rank][next_[rank]];
        const Need missing = *first_need(rank, action);
        WaitLink link;
        link.rank = rank;
        link.step = static_cast<int>(next_[rank]);
        link.action = schedule_.text(action);
        link.holder_rank = missing.holder;
        link.holder_step = find_step(missing);
        link.needed = schedule_.text(missing.action);
        if (missing.either_backward) {
            // Name the backward the holder actually runs, I or B.
            if (link.holder_step >= 0)
                for (const Action& part :
                     schedule_.parts_of(schedule_.ranks[missing.holder][link.holder_step]))
                    if (part.stage == missing.action.stage &&
                        part.microbatch == missing.action.microbatch &&
                        (part.kind == ActionKind::backward_input ||
                         part.kind == ActionKind::full_backward))
                        link.needed = schedule_.text(part);
            if (link.holder_step < 0)
                link.needed +=
                    fmt::format(" (or {}I{})", missing.action.stage, missing.action.microbatch);
        }
        return link;
    }

    HangReport explain() const {
        HangReport report;
        std::vector<int> link_index(schedule_.ranks.size(), -1);
        for (int rank = 0; rank < static_cast<int>(schedule_.ranks.size()); ++rank)
            if (next_[rank] < schedule_.ranks[rank].size()) {
                link_index[rank] = static_cast<int>(report.blocked.size());
                report.blocked.push_back(link_for(rank));
            }
        // Follow the waits from the lowest stuck rank until a rank repeats or the chain ends.
        std::vector<bool> visited(schedule_.ranks.size(), false);
        int rank = report.blocked.front().rank;
        std::vector<WaitLink> chain;
        while (!visited[rank]) {
            visited[rank] = true;
            const WaitLink& link = report.blocked[link_index[rank]];
            chain.push_back(link);
            if (link.holder_step < 0 || link_index[link.holder_rank] < 0)
                break;
            rank = link.holder_rank;
        }
        // Keep only the cycle itself when the chain closes on a rank further along it.
        if (chain.back().holder_step >= 0) {
            const int closing = chain.back().holder_rank;
            std::size_t start = 0;
            while (start < chain.size() && chain[start].rank != closing)
                ++start;
            chain.erase(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(start));
        }
        report.cycle = std::move(chain);
        return report;
    }

    const Schedule& schedule_;
    int last_stage_;
    StageMicrobatchFlags done_;
    std::vector<std::size_t> next_;
    std::vector<bool> blocked_;
};

std::string describe(const WaitLink& link) {
    std::string line = fmt::format("rank {} is stuck at step {} ({}): it needs {}, ", link.rank,
                                   link.step, link.action, link.needed);
    if (link.holder_step < 0)
        return line + "which no rank ever runs";
    if (link.holder_rank == link.rank)
        return line + fmt::format("which rank {} itself only runs later, at step {}", link.rank,
                                  link.holder_step);
    return line +
           fmt::format("which rank {} only runs at step {}", link.holder_rank, link.holder_step);
}

}  // namespace

std::string HangReport::text() const {
    if (cycle.empty())
        return "schedule runs to completion";
    std::string out;
    if (!closes_cycle()) {
        out = "schedule can hang: a rank waits for an action that never runs";
    } else if (cycle.size() == 1) {
        out = fmt::format("schedule can hang: rank {} waits on itself", cycle.front().rank);
    } else {
        std::string ranks;
        for (const auto& link : cycle)
            ranks += fmt::format("rank {} -> ", link.rank);
        out = fmt::format("schedule can hang: wait cycle {}rank {}", ranks, cycle.front().rank);
    }
    for (const auto& link : cycle)
        out += "\n  " + describe(link);
    std::size_t others = 0;
    for (const auto& link : blocked) {
        bool in_cycle = false;
        for (const auto& cycle_link : cycle)
            in_cycle |= cycle_link.rank == link.rank;
        if (in_cycle)
            continue;
        if (others++ == 0)
            out += "\n also stuck:";
        out += "\n  " + describe(link);
    }
    return out;
}

DryRunResult dry_run(const Schedule& schedule) {
    require_valid_structure(schedule);
    return DryRunner(schedule).run();
}

ScheduleHangError::ScheduleHangError(HangReport report)
    : std::runtime_error(report.text()), report_(std::move(report)) {}

}  // namespace pipelens
