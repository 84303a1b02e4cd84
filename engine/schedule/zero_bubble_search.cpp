// The zero-bubble heuristic and its eight-run search. Every comparison (< against <=), every
// iteration order and the tie rule follow the authors' code, because the published bubble rates
// depend on them; where the code is odd on purpose (the memory-driven W time is left out of the
// "skip the forward" test; idle time counts only after a stage's first F) it stays odd here.
//
// Invariants: on each stage, ops of one kind are placed in increasing microbatch order, so a
// kind's counter is the next microbatch; a stage's clock never goes back; times are integers.
#include "engine/schedule/zero_bubble_search.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace pipelens {
namespace {

constexpr int kForwardMemory = 2;  // half-microbatches of activations
constexpr int kInputMemory = -1;
constexpr int kWeightMemory = -1;

struct CannotFit : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum Op { F = 0, B = 1, W = 2 };

class Placement {
  public:
    Placement(int pp, int m, const ZeroBubbleInputs& inputs, ZeroBubbleHeuristics heuristics)
        : pp_(pp),
          m_(m),
          time_{inputs.forward_ns, inputs.input_ns, inputs.weight_ns},
          comm_(inputs.communication_ns),
          max_memory_(2 * static_cast<std::int64_t>(inputs.max_activations)),
          heuristics_(heuristics),
          clock_(pp, 0),
          memory_(pp, 0),
          bubble_(pp, 0),
          count_(pp, {0, 0, 0}),
          end_(3, std::vector<std::int64_t>(static_cast<std::size_t>(pp) * m, 0)),
          stages_(pp) {
        for (auto& stage : stages_)
            stage.reserve(3 * static_cast<std::size_t>(m));
    }

    ZeroBubbleRun run() {
        ZeroBubbleRun result;
        result.heuristics = heuristics_;
        try {
            warm_up();
            for (int round = 1; round < m_; ++round)
                steady_round(round);
            for (int stage = 0; stage < pp_; ++stage)
                while (count_[stage][W] < m_)
                    place(stage, W);
        } catch (const CannotFit&) {
            return result;
        }
        result.fits = true;
        for (int stage = 0; stage < pp_; ++stage)
            result.cost =
                std::max(result.cost, end(W, stage, m_ - 1) - end(F, stage, 0) + time_[F]);
        result.stages = std::move(stages_);
        return result;
    }

  private:
    std::int64_t& end(int op, int stage, int microbatch) {
        return end_[op][static_cast<std::size_t>(stage) * m_ + microbatch];
    }
    int memory_delta(int op) const {
        return op == F ? kForwardMemory : op == B ? kInputMemory : kWeightMemory;
    }
    bool weights_pending(int stage) const { return count_[stage][W] < count_[stage][B]; }
    // Bubbles only grow, so the worst one is kept as they do (the search stays O(pp * m)).
    std::int64_t max_bubble() const { return worst_bubble_; }

    void place(int stage, int op) {
        const int microbatch = count_[stage][op];
        const std::int64_t earliest = clock_[stage] + time_[op];
        std::int64_t finish = earliest;
        if (op == F && stage > 0)
            finish = std::max(finish, end(F, stage - 1, microbatch) + comm_ + time_[F]);
        if (op == B && stage < pp_ - 1)
            finish = std::max(finish, end(B, stage + 1, microbatch) + comm_ + time_[B]);
        if (memory_[stage] + memory_delta(op) > max_memory_)
            throw CannotFit("memory");
        if (count_[stage][F] > 0) {
            bubble_[stage] += finish - earliest;
            worst_bubble_ = std::max(worst_bubble_, bubble_[stage]);
        }
        clock_[stage] = finish;
        end(op, stage, microbatch) = finish;
        memory_[stage] += memory_delta(op);
        ++count_[stage][op];
        static constexpr ActionKind kKinds[] = {ActionKind::forward, ActionKind::backward_input,
                                                ActionKind::backward_weight};
        stages_[stage].push_back({kKinds[op], microbatch, finish});
    }

    // Round 0: F0 everywhere, then as many extra forwards per stage as fit before its first
    // backward's input can arrive (estimated from the last stage up), then B0 from the last
    // stage down.
    void warm_up() {
        for (int stage = 0; stage < pp_; ++stage)
            place(stage, F);
        std::vector<int> extra(pp_, 0);
        std::int64_t last = end(F, pp_ - 1, 0) + time_[B];
        for (int stage = pp_ - 2; stage >= 0; --stage) {
            std::int64_t memory = memory_[stage];
            std::int64_t clock = clock_[stage];
            while (count_[stage][F] + extra[stage] < m_ && memory + kForwardMemory <= max_memory_) {
                if (heuristics_.allow_bubble_before_first_backward ? clock + time_[F] > last + comm_
                                                                   : clock >= last + comm_)
                    break;
                memory += kForwardMemory;
                clock += time_[F];
                ++extra[stage];
            }
            last = std::max(clock, last + comm_) + time_[B];
        }
        for (int stage = 1; stage < pp_; ++stage)
            while (extra[stage] > 0 && extra[stage] >= extra[stage - 1] &&
                   count_[stage][F] + extra[stage] < m_)
                --extra[stage];
        for (int stage = 0; stage < pp_; ++stage)
            for (int i = 0; i < extra[stage]; ++i)
                place(stage, F);
        for (int stage = pp_ - 1; stage >= 0; --stage)
            place(stage, B);
    }

    bool wants_forward(int stage) {
        if (count_[stage][F] >= m_)
            return false;
        if (!heuristics_.prioritize_backward || stage + 1 >= pp_ ||
            count_[stage][F] < count_[stage + 1][F] + 2)
            return true;
        const std::int64_t next_arrival = clock_[stage + 1] + time_[F] + time_[B] + comm_;
        if (clock_[stage] >= next_arrival)
            return false;
        std::int64_t weight_time = 0;
        std::int64_t memory = memory_[stage] + kForwardMemory;
        for (int pending = 0; memory > max_memory_ && count_[stage][W] + pending < count_[stage][B];
             ++pending) {
            weight_time += time_[W];
            memory += kWeightMemory;
        }
        if (clock_[stage] + time_[F] + weight_time <= next_arrival)
            return true;
        // The authors compare the bare gap here, without the W's memory would need first.
        return !(next_arrival - clock_[stage] <= max_bubble() - bubble_[stage]);
    }

    // Fills the gap before an input arriving at `arrival` with whole W's, and with one more W
    // when leaving the rest of the gap idle would make this stage the worst.
    void fill_with_weights(int stage, std::int64_t arrival) {
        while (weights_pending(stage) && clock_[stage] + time_[W] <= arrival)
            place(stage, W);
        if (weights_pending(stage) && clock_[stage] < arrival) {
            if (arrival - clock_[stage] <= max_bubble() - bubble_[stage]) {
                if (heuristics_.no_bubble_greedy)
                    place(stage, W);
            } else {
                place(stage, W);
            }
        }
    }

    void make_room(int stage, int op) {
        while (memory_[stage] + memory_delta(op) > max_memory_) {
            if (!weights_pending(stage))
                throw CannotFit("memory");
            place(stage, W);
        }
    }

    void steady_round(int round) {
        std::vector<char> forward(pp_);
        for (int stage = 0; stage < pp_; ++stage)
            forward[stage] = wants_forward(stage);
        for (int stage = pp_ - 2; stage >= 0; --stage)
            forward[stage] = std::min(forward[stage], forward[stage + 1]);
        for (int stage = 0; stage < pp_; ++stage) {
            if (!forward[stage])
                continue;
            make_room(stage, F);
            if (stage > 0)
                fill_with_weights(stage, end(F, stage - 1, count_[stage][F]) + comm_);
            place(stage, F);
        }
        for (int stage = pp_ - 1; stage >= 0; --stage) {
            make_room(stage, B);
            if (stage < pp_ - 1)
                fill_with_weights(stage, end(B, stage + 1, round) + comm_);
            if (stage == 0 && count_[0][F] == m_)
                while (weights_pending(0))
                    place(0, W);
            place(stage, B);
        }
    }

    const int pp_, m_;
    const std::array<std::int64_t, 3> time_;
    const std::int64_t comm_;
    const std::int64_t max_memory_;
    const ZeroBubbleHeuristics heuristics_;
    std::vector<std::int64_t> clock_, memory_, bubble_;
    std::int64_t worst_bubble_ = 0;
    std::vector<std::array<int, 3>> count_;
    std::vector<std::vector<std::int64_t>> end_;  // [op][stage * m + microbatch]
    std::vector<std::vector<ZeroBubbleOp>> stages_;
};

// Unit times when the inputs give none; ZB-1p's limit when none is given.
ZeroBubbleInputs effective_zero_bubble_inputs(int pp, const ZeroBubbleInputs& inputs) {
    ZeroBubbleInputs effective = inputs;
    if (effective.forward_ns == 0 && effective.input_ns == 0 && effective.weight_ns == 0) {
        effective.forward_ns = effective.input_ns = effective.weight_ns = 1;
        effective.communication_ns = 0;
    }
    if (effective.max_activations == 0)
        effective.max_activations = pp;
    return effective;
}

}  // namespace

ZeroBubbleSearch search_zero_bubble(int pp, int m, const ZeroBubbleInputs& inputs) {
    const ZeroBubbleInputs effective = effective_zero_bubble_inputs(pp, inputs);
    ZeroBubbleSearch search;
    for (const bool allow_bubble : {true, false})
        for (const bool prioritize : {true, false})
            for (const bool greedy : {true, false}) {
                search.runs.push_back(
                    Placement(pp, m, effective, {allow_bubble, prioritize, greedy}).run());
                ZeroBubbleRun& run = search.runs.back();
                // Only the best run's orders are kept: eight full orders of a large pipeline
                // would be most of the memory the search uses.
                if (run.fits && (search.best < 0 || run.cost < search.runs[search.best].cost)) {
                    if (search.best >= 0)
                        search.runs[search.best].stages = {};
                    search.best = static_cast<int>(search.runs.size()) - 1;
                } else {
                    run.stages = {};
                }
            }
    if (search.best < 0)
        throw ScheduleConfigError(fmt::format(
            "ZeroBubbleAuto: no schedule for pp={} m={} keeps within {} microbatches of "
            "activations per stage; raise the limit (--max-activations)",
            pp, m, effective.max_activations));
    return search;
}

}  // namespace pipelens
