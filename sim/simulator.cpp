// The simulator: a work list of ranks, each advancing through its actions in program order as
// long as the inputs of the next one have known times (the same wake-up rules as the dry run).
// Busy time, bubbles and the step's end are accounted as each action is placed, so the
// timeline is written once and never read back.
#include "sim/simulator.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens::sim {
namespace {

constexpr std::int64_t kUnknown = -1;

// Times known so far for one (stage, microbatch).
struct MicrobatchTimes {
    std::int64_t forward_end = kUnknown;
    std::int64_t backward_end = kUnknown;  // I or B: the input gradient exists
    std::int64_t input_end = kUnknown;     // I only: W may start
    std::int64_t send_forward_start = kUnknown;
    std::int64_t send_backward_start = kUnknown;
    std::int64_t recv_forward_end = kUnknown;
    std::int64_t recv_backward_end = kUnknown;
};

// When an input is available and which rank provided it (for bubble attribution).
struct Ready {
    std::int64_t time = 0;
    int provider = -1;
    bool known = true;
};

Ready unknown() {
    return {0, -1, false};
}

// Asks the kernel to back a large, not yet touched buffer with 2 MiB pages. On this kind of
// virtual machine a first-touch page fault costs about 10 us, so a 2 GB timeline spends most of
// its time faulting in 4 KiB pages; huge pages cut the faults 512-fold. Only advice: where
// transparent huge pages are off, nothing changes.
template <typename Value>
void prefer_huge_pages(std::vector<Value>& buffer) {
    constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
    const auto begin = reinterpret_cast<std::uintptr_t>(buffer.data());
    const std::uintptr_t end = begin + buffer.capacity() * sizeof(Value);
    const std::uintptr_t aligned_begin = (begin + kHugePage - 1) & ~(kHugePage - 1);
    const std::uintptr_t aligned_end = end & ~(kHugePage - 1);
    if (aligned_end > aligned_begin)
        madvise(reinterpret_cast<void*>(aligned_begin), aligned_end - aligned_begin, MADV_HUGEPAGE);
}

class Simulator {
  public:
    Simulator(const Schedule& schedule, const CostModel& costs)
        : schedule_(schedule),
          costs_(costs),
          next_(schedule.ranks.size(), 0),
          compute_free_(schedule.ranks.size(), 0),
          comm_free_(schedule.ranks.size(), 0),
          memory_(schedule.ranks.size(), 0),
          blocked_(schedule.ranks.size(), false),
          first_entry_(schedule.ranks.size() + 1, 0),
          ranks_(schedule.ranks.size()),
          computed_(schedule.ranks.size(), false) {
        for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
            first_entry_[rank + 1] = first_entry_[rank] + schedule.ranks[rank].size();
            ranks_[rank].rank = static_cast<int>(rank);
        }
        // Every action gets exactly one entry, written in place at its rank's offset: the
        // timeline is the result, never copied, and its pages are touched once.
        times_.reserve(static_cast<std::size_t>(schedule.stage_count) * schedule.microbatch_count);
        prefer_huge_pages(times_);
        times_.resize(times_.capacity());
        timeline_.reserve(first_entry_.back());
        prefer_huge_pages(timeline_);
        timeline_.resize(first_entry_.back());
    }

    SimulationResult run() {
        std::deque<int> work;
        for (int rank = 0; rank < static_cast<int>(schedule_.ranks.size()); ++rank)
            work.push_back(rank);
        while (!work.empty()) {
            const int rank = work.front();
            work.pop_front();
            blocked_[rank] = false;
            while (next_[rank] < schedule_.ranks[rank].size()) {
                if (!execute(rank, schedule_.ranks[rank][next_[rank]], work)) {
                    blocked_[rank] = true;
                    break;
                }
                ++next_[rank];
            }
        }
        for (std::size_t rank = 0; rank < schedule_.ranks.size(); ++rank)
            if (next_[rank] < schedule_.ranks[rank].size())
                throw ScheduleHangError(dry_run(schedule_).hang);
        return summarize();
    }

  private:
    MicrobatchTimes& at(int stage, int microbatch) {
        return times_[static_cast<std::size_t>(stage) * schedule_.microbatch_count + microbatch];
    }
    int owner(int stage) const { return schedule_.stage_to_rank[stage]; }
    int last_stage() const { return schedule_.stage_count - 1; }

    static Ready from(std::int64_t time, int provider) {
        return time == kUnknown ? unknown() : Ready{time, provider, true};
    }

    Ready input_of(int rank, const Action& part) {
        const int stage = part.stage;
        const int mb = part.microbatch;
        switch (part.kind) {
            case ActionKind::forward:
                if (stage == 0)
                    return {0, rank, true};
                if (owner(stage - 1) == rank)
                    return from(at(stage - 1, mb).forward_end, rank);
                return from(at(stage, mb).recv_forward_end, owner(stage - 1));
            case ActionKind::backward_input:
            case ActionKind::full_backward: {
                const Ready own_forward = from(at(stage, mb).forward_end, rank);
                if (!own_forward.known)
                    return unknown();
                Ready gradient = own_forward;
                if (stage != last_stage())
                    gradient = owner(stage + 1) == rank
                                   ? from(at(stage + 1, mb).backward_end, rank)
                                   : from(at(stage, mb).recv_backward_end, owner(stage + 1));
                if (!gradient.known)
                    return unknown();
                return gradient.time >= own_forward.time ? gradient : own_forward;
            }
            case ActionKind::backward_weight:
                return from(at(stage, mb).input_end, rank);
            case ActionKind::send_forward:
                return from(at(stage, mb).forward_end, rank);
            case ActionKind::send_backward:
                return from(at(stage, mb).backward_end, rank);
            case ActionKind::recv_forward:
                return from(at(stage - 1, mb).send_forward_start, owner(stage - 1));
            case ActionKind::recv_backward:
                return from(at(stage + 1, mb).send_backward_start, owner(stage + 1));
            case ActionKind::reduce_grad:
                // Placed right after the action completing the stage's last backward.
                return {compute_free_[rank], rank, true};
            default:
                return {0, rank, true};  // UNSHARD and RESHARD wait for nothing
        }
    }

    // A computation also needs its stage's parameters: the stage's latest UNSHARD (0 when the
    // schedule has none, i.e. the parameters are always there).
    Ready with_parameters(int rank, const Action& part, Ready ready) const {
        if (is_compute(part.kind) && unshard_end_[part.stage] > ready.time)
            return {unshard_end_[part.stage], rank, true};
        return ready;
    }

    void wake(int rank, std::deque<int>& work) {
        if (rank >= 0 && blocked_[rank]) {
            blocked_[rank] = false;
            work.push_back(rank);
        }
    }

    // Wakes the one other rank that may be waiting on what `part` just produced.
    void wake_consumer(const Action& part, std::deque<int>& work) {
        const bool downstream =
            part.kind == ActionKind::forward || part.kind == ActionKind::send_forward;
        const bool upstream = part.kind == ActionKind::backward_input ||
                              part.kind == ActionKind::full_backward ||
                              part.kind == ActionKind::send_backward;
        if (downstream && part.stage < last_stage())
            wake(owner(part.stage + 1), work);
        if (upstream && part.stage > 0)
            wake(owner(part.stage - 1), work);
    }

    void change_memory(int rank, std::int64_t time, std::int64_t delta) {
        if (delta == 0)
            return;
        memory_[rank] += delta;
        memory_samples_.push_back({rank, time, memory_[rank]});
    }

    void finish_compute_part(int rank, const Action& part, std::int64_t start, std::int64_t end,
                             std::deque<int>& work) {
        MicrobatchTimes& times = at(part.stage, part.microbatch);
        const std::int64_t bytes = costs_.held_bytes_of(part.stage);
        switch (part.kind) {
            case ActionKind::forward:
                times.forward_end = end;
                change_memory(rank, start, bytes);
                break;
            case ActionKind::backward_input:
                times.backward_end = times.input_end = end;
                break;
            case ActionKind::full_backward:
                times.backward_end = end;
                change_memory(rank, end, -bytes);
                break;
            case ActionKind::backward_weight:
                change_memory(rank, end, -bytes);
                break;
            default:
                return;
        }
        wake_consumer(part, work);
    }

    bool execute(int rank, const Action& action, std::deque<int>& work) {
        Ready ready{0, rank, true};
        for (const Action& part : schedule_.parts_of(action)) {
            const Ready input = with_parameters(rank, part, input_of(rank, part));
            if (!input.known)
                return false;
            if (input.time > ready.time)
                ready = input;
        }
        TimelineEntry& entry = timeline_[first_entry_[rank] + next_[rank]];
        entry.pair_id = is_communication(action.kind) ? action.link : kNoPair;

        if (is_communication(action.kind) || action.kind == ActionKind::unshard ||
            action.kind == ActionKind::reduce_grad) {
            execute_communication(rank, action, ready, entry, work);
        } else {
            std::int64_t duration = 0;
            for (const Action& part : schedule_.parts_of(action))
                duration = duration == 0 ? costs_.compute_ns(part)
                                         : costs_.overlap_ns(duration, costs_.compute_ns(part));
            entry.lane = Lane::compute;
            entry.start_ns = std::max(compute_free_[rank], ready.time);
            entry.end_ns = entry.start_ns + duration;
            account_compute(rank, entry, ready.provider);
            compute_free_[rank] = entry.end_ns;
            for (const Action& part : schedule_.parts_of(action))
                finish_compute_part(rank, part, entry.start_ns, entry.end_ns, work);
        }
        step_end_ = std::max(step_end_, entry.end_ns);
        return true;
    }

    // Busy time and the idle gap before each computation, attributed as the summary reports
    // it: before the first computation warm-up, later to the rank whose input came last.
    void account_compute(int rank, const TimelineEntry& entry, int provider) {
        RankResult& result = ranks_[rank];
        result.busy_ns += entry.end_ns - entry.start_ns;
        const std::int64_t gap = entry.start_ns - compute_free_[rank];
        if (!computed_[rank])
            result.bubbles.warmup_ns = entry.start_ns;
        else if (gap > 0)
            result.bubbles.waiting_on_rank[provider] += gap;
        computed_[rank] = true;
    }

    void execute_communication(int rank, const Action& action, const Ready& ready,
                               TimelineEntry& entry, std::deque<int>& work) {
        entry.lane = Lane::communication;
        const int stage = action.stage;
        const int mb = action.microbatch;
        switch (action.kind) {
            case ActionKind::send_forward:
            case ActionKind::send_backward: {
                const bool forward = action.kind == ActionKind::send_forward;
                const int peer_stage = forward ? stage + 1 : stage - 1;
                entry.bytes = costs_.bytes_of(forward ? stage : stage - 1);
                entry.start_ns = std::max(comm_free_[rank], ready.time);
                entry.end_ns =
                    entry.start_ns + costs_.transfer_ns(rank, owner(peer_stage), entry.bytes);
                (forward ? at(stage, mb).send_forward_start : at(stage, mb).send_backward_start) =
                    entry.start_ns;
                break;
            }
            case ActionKind::recv_forward:
            case ActionKind::recv_backward: {
                const bool forward = action.kind == ActionKind::recv_forward;
                const int peer_stage = forward ? stage - 1 : stage + 1;
                // A posted receive does not hold the stream: its data lands once the send has
                // started and the transfer time has passed.
                entry.bytes = costs_.bytes_of(forward ? stage - 1 : stage);
                entry.start_ns = ready.time;
                entry.end_ns =
                    ready.time + costs_.transfer_ns(owner(peer_stage), rank, entry.bytes);
                (forward ? at(stage, mb).recv_forward_end : at(stage, mb).recv_backward_end) =
                    entry.end_ns;
                wake_consumer(action, work);
                return;
            }
            default:  // UNSHARD, REDUCE_GRAD: collectives on the communication stream
                entry.start_ns = std::max(comm_free_[rank], ready.time);
                entry.end_ns = entry.start_ns + costs_.compute_ns(action);
                if (action.kind == ActionKind::unshard)
                    unshard_end_[stage] = entry.end_ns;
                break;
        }
        comm_free_[rank] = entry.end_ns;
        wake_consumer(action, work);
    }

    SimulationResult summarize() {
        SimulationResult result;
        result.step_time_ns = step_end_;
        std::int64_t total_bubble = 0;
        for (std::size_t rank = 0; rank < ranks_.size(); ++rank) {
            RankResult& summary = ranks_[rank];
            if (!computed_[rank])
                summary.bubbles.warmup_ns = result.step_time_ns;  // idles throughout
            else
                summary.bubbles.cooldown_ns = result.step_time_ns - compute_free_[rank];
            summary.bubble_ns = result.step_time_ns - summary.busy_ns;
            summary.bubble_ratio =
                result.step_time_ns > 0
                    ? static_cast<double>(summary.bubble_ns) / result.step_time_ns
                    : 0;
            total_bubble += summary.bubble_ns;
        }
        for (const MemorySample& sample : memory_samples_) {
            auto& peak = ranks_[sample.rank].peak_memory_bytes;
            peak = std::max(peak, sample.bytes);
        }
        if (result.step_time_ns > 0 && !ranks_.empty())
            result.bubble_ratio =
                static_cast<double>(total_bubble) /
                (static_cast<double>(result.step_time_ns) * static_cast<double>(ranks_.size()));
        result.ranks = std::move(ranks_);
        result.timeline = std::move(timeline_);
        result.first_entry = std::move(first_entry_);
        result.memory = std::move(memory_samples_);
        return result;
    }

    const Schedule& schedule_;
    const CostModel& costs_;
    std::vector<MicrobatchTimes> times_;
    std::vector<std::size_t> next_;
    std::vector<std::int64_t> compute_free_, comm_free_, memory_;
    std::vector<bool> blocked_;
    std::vector<std::size_t> first_entry_;  // per rank: index of its first timeline entry
    std::vector<TimelineEntry> timeline_;
    std::vector<RankResult> ranks_;
    std::vector<bool> computed_;  // per rank: has run a computation yet
    std::int64_t step_end_ = 0;   // latest end of any action so far
    std::vector<std::int64_t> unshard_end_ =
        std::vector<std::int64_t>(static_cast<std::size_t>(schedule_.stage_count), 0);
    std::vector<MemorySample> memory_samples_;
};

}  // namespace

std::int64_t BubbleBreakdown::waiting_ns() const {
    std::int64_t total = 0;
    for (const auto& [rank, idle] : waiting_on_rank)
        total += idle;
    return total;
}

SimulationResult simulate(const Schedule& schedule, const CostModel& costs) {
    if (!schedule.has_communication)
        return simulate(lower(schedule), costs);
    require_valid_structure(schedule);
    return Simulator(schedule, costs).run();
}

}  // namespace pipelens::sim
