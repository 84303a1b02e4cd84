// The simulator: the one work list (engine/schedule/work_list.hpp) advances each rank through its
// actions in program order as long as the inputs of the next one, as the dependency rules name
// them, have known times. This file decides only *when* things happen (streams, durations,
// transfers, memory), never *what waits for what*. Busy time, bubbles and the step's end are
// accounted as each action is placed, so the timeline is written once and never read back.
#include "sim/simulator.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "engine/schedule/action_facts.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/static_check.hpp"
#include "engine/schedule/work_list.hpp"

namespace pipelens::sim {
namespace {

constexpr std::int64_t kUnknown = -1;
// The longest a drawn computation may take; the latest anything may end is kLatestSimulatedNs.
constexpr double kLongestDrawnNs = static_cast<double>(kLatestSimulatedNs) / 1024;

// When each per-microbatch signal of one (stage, microbatch) was produced: F, I/B, I ends; SEND
// starts (a receive waits for the send to be issued); RECV ends.
struct MicrobatchTimes {
    std::array<std::int64_t, kMicrobatchSignalCount> at;
    MicrobatchTimes() { at.fill(kUnknown); }
};

// With posted receive buffers, the bytes one (stage, microbatch)'s receives hold that their
// consumer has not taken yet: the stage's input (RECV_F) and its outputs' gradient (RECV_B).
struct PostedBytes {
    std::int64_t input = 0;
    std::int64_t gradient = 0;
};

// When an input is available and which rank provided it (for bubble attribution).
struct Ready {
    std::int64_t time = 0;
    int provider = -1;
    bool known = true;
};

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
    Simulator(const Schedule& schedule, const CostModel& costs, const DependencyRules& rules,
              const std::vector<double>* compute_factors = nullptr)
        : schedule_(schedule),
          costs_(costs),
          rules_(rules),
          compute_factors_(compute_factors),
          work_(schedule, WorkOrder::until_blocked),
          compute_free_(schedule.ranks.size(), 0),
          comm_free_(schedule.ranks.size(), 0),
          memory_(schedule.ranks.size(), 0),
          has_gradients_(schedule.stage_count, false),
          first_entry_(schedule.ranks.size() + 1, 0),
          ranks_(schedule.ranks.size()) {
        accounts_.reserve(schedule.ranks.size());
        for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
            first_entry_[rank + 1] = first_entry_[rank] + schedule.ranks[rank].size();
            ranks_[rank].rank = static_cast<int>(rank);
            accounts_.emplace_back(static_cast<int>(rank));
        }
        // Every action gets exactly one entry, written in place at its rank's offset: the
        // timeline is the result, never copied, and its pages are touched once.
        times_.reserve(static_cast<std::size_t>(schedule.stage_count) * schedule.microbatch_count);
        prefer_huge_pages(times_);
        times_.resize(times_.capacity());
        if (costs.posted_receive_buffers)
            posted_.resize(times_.size());
        timeline_.reserve(first_entry_.back());
        prefer_huge_pages(timeline_);
        timeline_.resize(first_entry_.back());
    }

    SimulationResult run() {
        work_.run([&](int rank, const Action& action) { return execute(rank, action); });
        if (!work_.finished())
            throw ScheduleHangError(dry_run(schedule_, rules_).hang);
        return summarize();
    }

  private:
    // Where one (stage, microbatch) sits in the tables kept per microbatch.
    std::size_t slot(int stage, int microbatch) const {
        return static_cast<std::size_t>(stage) * schedule_.microbatch_count + microbatch;
    }

    MicrobatchTimes& at(int stage, int microbatch) { return times_[slot(stage, microbatch)]; }

    std::int64_t time_of(int rank, const Input& input) {
        switch (input.signal) {
            case Signal::parameters:
                return unshard_end_[input.stage];  // 0 without UNSHARD: always resident
            case Signal::rank_compute:
                return compute_free_[rank];
            default:
                return at(input.stage, input.microbatch).at[static_cast<int>(input.signal)];
        }
    }

    // When all of the action's inputs are there and whose came last. Within a part, an input
    // arriving with an earlier one in rule order counts as the one waited for; across the parts
    // of an OVERLAP_F_B, the first part's wins.
    Ready ready_of(int rank, const Action& action) {
        Ready ready{0, rank, true};
        for (const Action& part : schedule_.parts_of(action)) {
            Ready part_ready{0, rank, true};
            const bool known =
                rules_.for_each_input(schedule_, rank, part, [&](const Input& input) {
                    const std::int64_t time = time_of(rank, input);
                    if (time == kUnknown)
                        return false;
                    if (time >= part_ready.time)
                        part_ready = {time, input.origin, true};
                    return true;
                });
            if (!known)
                return {0, -1, false};
            if (part_ready.time > ready.time)
                ready = part_ready;
        }
        return ready;
    }

    // Records that `part` produced its signals at `time` and wakes whoever may wait for them.
    void produce(const Action& part, std::int64_t time) {
        for (Signal signal : rules_.products_of(part.kind)) {
            if (signal == Signal::parameters)
                unshard_end_[part.stage] = time;
            if (!is_per_microbatch(signal))
                continue;
            at(part.stage, part.microbatch).at[static_cast<int>(signal)] = time;
            for (int waiter : rules_.waiters_of(schedule_, signal, part.stage))
                work_.wake(waiter);
        }
    }

    void change_memory(int rank, std::int64_t time, std::int64_t delta) {
        if (delta == 0)
            return;
        // Held bytes past int64 wrapped into a figure of no size: refused as out of range.
        if (__builtin_add_overflow(memory_[rank], delta, &memory_[rank]))
            throw std::overflow_error(fmt::format(
                "rank {}'s memory passes 2^63 bytes (8 EiB) at {} ns: an activation or gradient "
                "size is out of any machine's range",
                rank, time));
        memory_samples_.push_back({rank, time, memory_[rank]});
    }

    // Activations are held from the F until the backward that frees them (B, or W after I);
    // weight gradients from the stage's first backward to the end of the step; a backward's
    // temporaries while it runs; what a backward does not free (kept bytes) to the step's end;
    // what an I leaves for its W (input kept bytes) from the I's end to the W's. With posted
    // receive buffers (CostModel::posted_receive_buffers), a receive's buffer from its posting
    // until its consumer takes it: an input until its F starts (whose held activations count
    // it from there, as the profile measured them), a gradient until its B or I ends (an I's
    // input kept bytes hold it on to the W).
    void account_memory(int rank, const Action& part, std::int64_t start, std::int64_t end) {
        const std::int64_t bytes = costs_.held_bytes_of(part.stage);
        PostedBytes* posted = posted_of(part);
        if (part.kind == ActionKind::forward) {
            if (posted != nullptr)
                change_memory(rank, start, -std::exchange(posted->input, 0));
            change_memory(rank, start, bytes);
            return;
        }
        const bool frees =
            part.kind == ActionKind::full_backward || part.kind == ActionKind::backward_weight;
        if (!frees && part.kind != ActionKind::backward_input)
            return;
        if (!has_gradients_[part.stage]) {
            has_gradients_[part.stage] = true;
            change_memory(rank, start, costs_.gradient_bytes_of(part.stage));
        }
        const std::int64_t temporaries = costs_.backward_peak_bytes_of(part.stage);
        change_memory(rank, start, temporaries);
        const std::int64_t freed = frees ? bytes - costs_.kept_bytes_of(part.stage) : 0;
        const std::int64_t gradient = posted != nullptr && part.kind != ActionKind::backward_weight
                                          ? std::exchange(posted->gradient, 0)
                                          : 0;
        change_memory(rank, end, -temporaries - freed - gradient + left_for_weight(part));
    }

    // What an I leaves held for its W at its end (+), and its W lets go of at its end (-).
    std::int64_t left_for_weight(const Action& part) const {
        switch (part.kind) {
            case ActionKind::backward_input:
                return costs_.input_kept_bytes_of(part.stage);
            case ActionKind::backward_weight:
                return -costs_.input_kept_bytes_of(part.stage);
            default:
                return 0;
        }
    }

    // A rank posts a receive when its thread reaches it: once the computations before it in the
    // rank's order have run.
    void post_buffer(int rank, const Action& receive, std::int64_t bytes) {
        PostedBytes& posted = *posted_of(receive);
        (receive.kind == ActionKind::recv_forward ? posted.input : posted.gradient) += bytes;
        change_memory(rank, compute_free_[rank], bytes);
    }

    // Null without posted receive buffers (which then cost neither time nor memory), and for an
    // action of no microbatch (RESHARD, UNSHARD).
    PostedBytes* posted_of(const Action& action) {
        if (posted_.empty() || action.stage < 0 || action.microbatch < 0)
            return nullptr;
        return &posted_[slot(action.stage, action.microbatch)];
    }

    bool execute(int rank, const Action& action) {
        const Ready ready = ready_of(rank, action);
        if (!ready.known)
            return false;
        const std::size_t index = first_entry_[rank] + work_.next_step(rank);
        TimelineEntry& entry = timeline_[index];
        entry.pair_id = is_communication(action.kind) ? action.link : kNoPair;

        if (uses_communication_stream(action.kind)) {
            execute_communication(rank, action, ready, entry);
        } else {
            std::optional<Work> work;
            for (const Action& part : schedule_.parts_of(action))
                work = work ? costs_.overlap(*work, costs_.work_of(part)) : costs_.work_of(part);
            entry.lane = Lane::compute;
            entry.start_ns = std::max(compute_free_[rank], ready.time);
            entry.end_ns =
                ended(entry.start_ns, drawn(index, costs_.on_rank(rank, work ? work->ns : 0)));
            // Busy time and the gap before it, attributed to the rank whose input came last; an
            // input there before the rank's thread was free again (it was issuing its sends) was
            // not waited for: the gap is the rank's own.
            const int provider = ready.time >= compute_free_[rank] ? ready.provider : rank;
            accounts_[rank].add_computation(entry.start_ns, entry.end_ns, provider);
            ranks_[rank].arithmetic_ns += costs_.on_rank(rank, work ? work->arithmetic_ns : 0);
            compute_free_[rank] = entry.end_ns;
            for (const Action& part : schedule_.parts_of(action)) {
                account_memory(rank, part, entry.start_ns, entry.end_ns);
                produce(part, entry.end_ns);
            }
        }
        step_end_ = std::max(step_end_, entry.end_ns);
        return true;
    }

    // A computation's time in this draw (its cost when no factors were given).
    std::int64_t drawn(std::size_t index, std::int64_t ns) const {
        if (compute_factors_ == nullptr)
            return ns;
        const double factor = (*compute_factors_)[index];
        const double time = static_cast<double>(ns) * factor;
        if (!(time < kLongestDrawnNs))
            throw std::overflow_error(fmt::format(
                "a computation of {} ns drawn at {}x its cost would take more than {} ns", ns,
                factor, kLongestDrawnNs));
        return std::llround(time);
    }

    // Where an action starting at `start` for `ns` ends; refused past kLatestSimulatedNs rather
    // than overflowing.
    std::int64_t ended(std::int64_t start, std::int64_t ns) const {
        if (ns < 0)  // no cost is negative: one that wrapped round while it was computed
            throw std::overflow_error(fmt::format(
                "an action's time came out as {} ns, past int64's range while it was computed: "
                "a cost, latency, bandwidth or model size is out of any machine's range",
                ns));
        if (ns > kLatestSimulatedNs || start > kLatestSimulatedNs - ns)
            throw std::overflow_error(fmt::format(
                "the {}step runs past {} ns, about 146 years (an action of {} ns starting at {} "
                "ns): a cost, latency or bandwidth is out of any machine's range",
                compute_factors_ != nullptr ? "drawn " : "", kLatestSimulatedNs, ns, start));
        return start + ns;
    }

    void execute_communication(int rank, const Action& action, const Ready& ready,
                               TimelineEntry& entry) {
        entry.lane = Lane::communication;
        switch (action.kind) {
            case ActionKind::send_forward:
            case ActionKind::send_backward: {
                const int peer = transfer_peer_rank(schedule_, action);
                entry.bytes = costs_.message_bytes(action);
                entry.start_ns = std::max(comm_free_[rank], ready.time);
                if (costs_.send_issue_ns > 0) {
                    // Issued by the rank's thread in program order: after its computations so
                    // far, and the next one waits for the issue.
                    entry.start_ns = std::max(entry.start_ns, compute_free_[rank]);
                    compute_free_[rank] = ended(entry.start_ns, costs_.send_issue_ns);
                }
                entry.end_ns = ended(entry.start_ns, costs_.transfer_ns(rank, peer, entry.bytes));
                produce(action, entry.start_ns);  // the receive waits for the send's issue
                break;
            }
            case ActionKind::recv_forward:
            case ActionKind::recv_backward: {
                // A posted receive does not hold the stream: its data lands the transfer time
                // after its inputs (the send's start; with rendezvous, also its posting).
                const int peer = transfer_peer_rank(schedule_, action);
                entry.bytes = costs_.message_bytes(action);
                entry.start_ns = ready.time;
                entry.end_ns = ended(ready.time, costs_.transfer_ns(peer, rank, entry.bytes));
                produce(action, entry.end_ns);
                if (costs_.posted_receive_buffers)
                    post_buffer(rank, action, entry.bytes);
                break;
            }
            default:  // UNSHARD, REDUCE_GRAD: collectives on the communication stream
                entry.start_ns = std::max(comm_free_[rank], ready.time);
                entry.end_ns = ended(entry.start_ns, costs_.compute_ns(action));
                produce(action, entry.end_ns);
                break;
        }
        if (holds_stream(action.kind))
            comm_free_[rank] = entry.end_ns;
    }

    SimulationResult summarize() {
        SimulationResult result;
        result.step_time_ns = step_end_;
        result.memory_sizes_gradients = costs_.sizes_gradients();
        std::int64_t total_bubble = 0;
        for (std::size_t rank = 0; rank < ranks_.size(); ++rank) {
            RankResult& summary = ranks_[rank];
            analysis::RankBubbles figures = accounts_[rank].finish(result.step_time_ns);
            summary.busy_ns = figures.busy_ns;
            summary.bubble_ns = figures.bubble_ns;
            summary.bubble_ratio = figures.bubble_ratio;
            summary.bubbles = std::move(figures.split);
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
    const DependencyRules& rules_;
    const std::vector<double>* compute_factors_;  // per timeline entry; null: every factor 1
    WorkList work_;
    std::vector<MicrobatchTimes> times_;
    std::vector<PostedBytes> posted_;  // by (stage, microbatch); empty: no receive buffers
    std::vector<std::int64_t> compute_free_, comm_free_, memory_;
    std::vector<bool> has_gradients_;       // by stage: its first backward has run
    std::vector<std::size_t> first_entry_;  // per rank: index of its first timeline entry
    std::vector<TimelineEntry> timeline_;
    std::vector<RankResult> ranks_;
    std::vector<analysis::RankBubbleAccount> accounts_;  // per rank: busy time and bubbles
    std::int64_t step_end_ = 0;                          // latest end of any action so far
    std::vector<std::int64_t> unshard_end_ =
        std::vector<std::int64_t>(static_cast<std::size_t>(schedule_.stage_count), 0);
    std::vector<MemorySample> memory_samples_;
};

}  // namespace

const DependencyRules& rules_for(const CostModel& costs) {
    return costs.rendezvous ? DependencyRules::pytorch_rendezvous() : DependencyRules::pytorch();
}

SimulationResult simulate(const Schedule& schedule, const CostModel& costs) {
    return simulate(schedule, costs, rules_for(costs));
}

SimulationResult simulate(const Schedule& schedule, const CostModel& costs,
                          const DependencyRules& rules) {
    if (!schedule.has_communication) {
        LoweringOptions options;
        options.rules = &rules;
        return simulate(lower(schedule, options), costs, rules);
    }
    require_valid_structure(schedule);
    return Simulator(schedule, costs, rules).run();
}

SimulationResult simulate(const Schedule& schedule, const CostModel& costs,
                          const DependencyRules& rules,
                          const std::vector<double>& compute_factors) {
    if (!schedule.has_communication)
        throw std::invalid_argument(
            "simulate with per-action factors: the schedule is not lowered (its factors name "
            "the lowered actions)");
    const std::size_t actions = schedule.action_count();
    if (compute_factors.size() != actions)
        throw std::invalid_argument(
            fmt::format("simulate with per-action factors: {} factors for {} actions",
                        compute_factors.size(), actions));
    require_valid_structure(schedule);
    return Simulator(schedule, costs, rules, &compute_factors).run();
}

}  // namespace pipelens::sim
