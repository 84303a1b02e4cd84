// SEND/RECV lowering, the turn-based placement of PyTorch's `_add_send_recv`, with the
// per-rank "previous actions" sets replaced by one flag byte per (stage, microbatch): a stage
// runs on exactly one rank, so "X is in rank r's previous actions" is "X is done and X's stage
// runs on r". That keeps the pass linear in the number of turns and allocation-free inside.
#include <vector>

#include <fmt/format.h>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/send_recv_placement.hpp"
#include "engine/schedule/stage_microbatch_flags.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {
namespace {

enum DoneFlag : std::uint8_t {
    kForwardDone = 1 << 0,
    kInputGradDone = 1 << 1,  // I or B
    kRecvForwardDone = 1 << 2,
    kRecvBackwardDone = 1 << 3,
};

class SendRecvPlacer {
  public:
    explicit SendRecvPlacer(const Schedule& schedule)
        : schedule_(schedule), done_(schedule.stage_count, schedule.microbatch_count) {}

    Schedule place() {
        Schedule result = empty_like(schedule_);
        result.parts = schedule_.parts;
        result.has_communication = true;
        reserve_output(result);

        const int rank_count = static_cast<int>(schedule_.ranks.size());
        std::vector<std::size_t> next(rank_count, 0);
        std::vector<int> active, still_active;
        for (int rank = 0; rank < rank_count; ++rank)
            if (!schedule_.ranks[rank].empty())
                active.push_back(rank);

        while (!active.empty()) {
            bool progress = false;
            still_active.clear();
            for (int rank : active) {
                const Action& action = schedule_.ranks[rank][next[rank]];
                if (ready(rank, action)) {
                    emit(result, rank, action);
                    ++next[rank];
                    progress = true;
                }
                if (next[rank] < schedule_.ranks[rank].size())
                    still_active.push_back(rank);
            }
            if (!progress)
                throw ScheduleHangError(dry_run(schedule_).hang);
            active.swap(still_active);
        }
        return result;
    }

  private:
    int owner(int stage) const { return schedule_.stage_to_rank[stage]; }

    bool crosses_ranks(const Action& part) const {
        if (part.kind == ActionKind::forward)
            return part.stage != schedule_.stage_count - 1 &&
                   owner(part.stage + 1) != owner(part.stage);
        if (part.kind == ActionKind::backward_input || part.kind == ActionKind::full_backward)
            return part.stage != 0 && owner(part.stage - 1) != owner(part.stage);
        return false;
    }

    bool ready_part(int rank, const Action& part) {
        const int stage = part.stage;
        if (part.kind == ActionKind::forward) {
            if (stage == 0)
                return true;
            return done_.has(stage, part.microbatch, kRecvForwardDone) ||
                   (owner(stage - 1) == rank &&
                    done_.has(stage - 1, part.microbatch, kForwardDone));
        }
        if (part.kind == ActionKind::backward_input || part.kind == ActionKind::full_backward) {
            if (stage == schedule_.stage_count - 1)
                return true;
            return done_.has(stage, part.microbatch, kRecvBackwardDone) ||
                   (owner(stage + 1) == rank &&
                    done_.has(stage + 1, part.microbatch, kInputGradDone));
        }
        return true;
    }

    bool ready(int rank, const Action& action) {
        for (const Action& part : schedule_.parts_of(action))
            if (!ready_part(rank, part))
                return false;
        return true;
    }

    void emit(Schedule& result, int rank, const Action& action) {
        result.ranks[rank].push_back(action);
        for (const Action& part : schedule_.parts_of(action)) {
            if (part.kind == ActionKind::forward)
                done_.set(part.stage, part.microbatch, kForwardDone);
            if (part.kind == ActionKind::backward_input || part.kind == ActionKind::full_backward)
                done_.set(part.stage, part.microbatch, kInputGradDone);
            if (!crosses_ranks(part))
                continue;
            const bool forward = part.kind == ActionKind::forward;
            Action send = make_action(
                part.stage, forward ? ActionKind::send_forward : ActionKind::send_backward,
                part.microbatch);
            const int peer_stage = forward ? part.stage + 1 : part.stage - 1;
            Action recv = make_action(
                peer_stage, forward ? ActionKind::recv_forward : ActionKind::recv_backward,
                part.microbatch);
            send.link = recv.link = result.pair_count++;
            result.ranks[rank].push_back(send);
            result.ranks[owner(peer_stage)].push_back(recv);
            done_.set(peer_stage, part.microbatch, forward ? kRecvForwardDone : kRecvBackwardDone);
        }
    }

    void reserve_output(Schedule& result) const {
        std::vector<std::size_t> sizes(schedule_.ranks.size());
        for (std::size_t rank = 0; rank < schedule_.ranks.size(); ++rank) {
            sizes[rank] += schedule_.ranks[rank].size();
            for (const Action& action : schedule_.ranks[rank])
                for (const Action& part : schedule_.parts_of(action))
                    if (crosses_ranks(part)) {
                        ++sizes[rank];
                        const int peer =
                            part.kind == ActionKind::forward ? part.stage + 1 : part.stage - 1;
                        ++sizes[owner(peer)];
                    }
        }
        for (std::size_t rank = 0; rank < sizes.size(); ++rank)
            result.ranks[rank].reserve(sizes[rank]);
    }

    const Schedule& schedule_;
    StageMicrobatchFlags done_;
};

}  // namespace

Schedule lower_send_recv(const Schedule& schedule) {
    if (schedule.has_communication)
        throw ScheduleCheckError(
            CheckReport{{"the schedule already has SEND/RECV actions; "
                         "lower_send_recv takes a compute-only schedule"}});
    require_valid_structure(schedule);
    return place_send_recv(schedule);
}

Schedule place_send_recv(const Schedule& schedule) {
    return SendRecvPlacer(schedule).place();
}

}  // namespace pipelens
