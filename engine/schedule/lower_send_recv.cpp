// SEND/RECV lowering, the turn-based placement of PyTorch's `_add_send_recv`: the one work list
// in `turns` order asks, rank by rank, whether the next action's inputs are known to arrive,
// using the dependency rules on the compute-only schedule (so a cross-rank neighbour counts once
// its producer has been placed: that is when the sender places the receiver's RECV). PyTorch's
// per-rank "previous actions" sets become one flag byte per (stage, microbatch), since a stage
// runs on exactly one rank. A rank whose next action lacks an input waits for that input (listed
// under its stage) and is asked again only once it is produced, so the work grows with the actions
// placed, not with ranks times turns.
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/schedule/action_facts.hpp"
#include "engine/schedule/dependencies.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/send_recv_placement.hpp"
#include "engine/schedule/stage_microbatch_flags.hpp"
#include "engine/schedule/static_check.hpp"
#include "engine/schedule/work_list.hpp"

namespace pipelens {
namespace {

class SendRecvPlacer {
  public:
    SendRecvPlacer(const Schedule& schedule, const DependencyRules& rules)
        : schedule_(schedule),
          rules_(rules),
          done_(schedule.stage_count, schedule.microbatch_count),
          awaited_(schedule.ranks.size()),
          waiting_on_stage_(schedule.stage_count) {}

    Schedule place() {
        Schedule result = empty_like(schedule_);
        result.parts = schedule_.parts;
        result.has_communication = true;
        reserve_output(result);
        WorkList work(schedule_, WorkOrder::turns);
        work.run([&](int rank, const Action& action) {
            if (!ready(rank, action))
                return false;
            emit(result, rank, action, work);
            return true;
        });
        if (!work.finished())
            throw ScheduleHangError(dry_run(schedule_, rules_).hang);
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

    // The SEND that carries a crossing computation's output: F's activations, I's or B's
    // input gradient.
    static Action send_of(const Action& part) {
        const bool forward = part.kind == ActionKind::forward;
        return make_action(part.stage,
                           forward ? ActionKind::send_forward : ActionKind::send_backward,
                           part.microbatch);
    }

    // Whether the rank's next action has every input; if not, the rank waits for the first one
    // missing and is woken (emit) when it is produced.
    bool ready(int rank, const Action& action) {
        for (const Action& part : schedule_.parts_of(action))
            if (!rules_.for_each_input(schedule_, rank, part, [&](const Input& input) {
                    if (input.program_order ||
                        done_.has(input.stage, input.microbatch, signal_bit(input.signal)))
                        return true;
                    awaited_[rank] = {input.microbatch, signal_bit(input.signal)};
                    waiting_on_stage_[input.stage].push_back(rank);
                    return false;
                }))
                return false;
        return true;
    }

    void emit(Schedule& result, int rank, const Action& action, WorkList& work) {
        result.ranks[rank].push_back(action);
        for (const Action& part : schedule_.parts_of(action)) {
            for (Signal signal : rules_.products_of(part.kind))
                if (is_per_microbatch(signal)) {
                    done_.set(part.stage, part.microbatch, signal_bit(signal));
                    wake_waiting(work, part.stage, {part.microbatch, signal_bit(signal)});
                }
            if (!crosses_ranks(part))
                continue;
            const bool forward = part.kind == ActionKind::forward;
            Action send = send_of(part);
            Action recv = make_action(
                transfer_peer_stage(send),
                forward ? ActionKind::recv_forward : ActionKind::recv_backward, part.microbatch);
            send.link = recv.link = result.pair_count++;
            result.ranks[rank].push_back(send);
            result.ranks[transfer_peer_rank(schedule_, send)].push_back(recv);
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
                        ++sizes[transfer_peer_rank(schedule_, send_of(part))];
                    }
        }
        for (std::size_t rank = 0; rank < sizes.size(); ++rank)
            result.ranks[rank].reserve(sizes[rank]);
    }

    // What a rank waits for, of one stage: a microbatch and a signal bit.
    using Awaited = std::pair<int, std::uint8_t>;

    // Wakes the ranks waiting for what `stage` just produced. Few ranks wait on one stage (its
    // neighbours' owners), so a short list per stage, reused, is all the index there is.
    void wake_waiting(WorkList& work, int stage, const Awaited& produced) {
        std::vector<int>& waiting = waiting_on_stage_[stage];
        for (std::size_t at = 0; at < waiting.size();) {
            if (awaited_[waiting[at]] != produced) {
                ++at;
                continue;
            }
            work.wake(waiting[at]);
            waiting[at] = waiting.back();
            waiting.pop_back();
        }
    }

    const Schedule& schedule_;
    const DependencyRules& rules_;
    StageMicrobatchFlags done_;
    std::vector<Awaited> awaited_;                    // by rank: the input it waits for
    std::vector<std::vector<int>> waiting_on_stage_;  // by stage: the ranks waiting on it
};

}  // namespace

Schedule lower_send_recv(const Schedule& schedule, const DependencyRules& rules) {
    if (schedule.has_communication)
        throw ScheduleCheckError(
            CheckReport{{"the schedule already has SEND/RECV actions; "
                         "lower_send_recv takes a compute-only schedule"}});
    require_valid_structure(schedule);
    return place_send_recv(schedule, rules);
}

Schedule place_send_recv(const Schedule& schedule, const DependencyRules& rules) {
    return SendRecvPlacer(schedule, rules).place();
}

}  // namespace pipelens
