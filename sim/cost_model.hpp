// The cost model the simulator charges actions with: per-stage compute times (F, I, W and B,
// with B = I + W unless given), point-to-point links (latency + bytes / bandwidth, separate
// values inside a host and across hosts), activation bytes per stage and microbatch, and the
// overlap efficiency of OVERLAP_F_B.
// An OVERLAP_F_B runs its parts at once on one device, sharing its arithmetic units: the overlap
// hides what is not arithmetic (communication inside an action, a device left idle by one action
// alone), never FLOPs. Where the times come from FLOP counts, StageCost says how much of each is
// arithmetic, and a pair never takes less than the sum of its parts' arithmetic.
// Memory counts activations a stage holds between F and B/W (held_activation_bytes, which
// default to the boundary size). Times are integer nanoseconds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/schedule/action.hpp"

namespace pipelens::sim {

// The latest a simulated time may be, about 146 years: far from int64's end, so adding one more
// action never overflows. A cost, a transfer or a step past it is refused as too large
// (std::overflow_error), not converted or wrapped round.
inline constexpr std::int64_t kLatestSimulatedNs = std::int64_t{1} << 62;

// A time computed in floating point, rounded up to int64 nanoseconds. One not below
// kLatestSimulatedNs (or not a number) is std::overflow_error naming `what` and the time as it
// came out, checked before any conversion (past int64's range that is undefined).
std::int64_t ceil_ns(double ns, const char* what);

// `numerator` / `denominator` nanoseconds as ceil_ns takes them; a quotient past double's range
// (FLOPs over 1e-300 TFLOP/s) is reported with its magnitude, computed in long double.
std::int64_t ceil_quotient_ns(double numerator, double denominator, const char* what);

struct StageCost {
    std::int64_t forward_ns = 1000;
    std::int64_t input_ns = 1000;                  // I: gradient with respect to the stage input
    std::int64_t weight_ns = 1000;                 // W: gradient with respect to the weights
    std::optional<std::int64_t> full_backward_ns;  // B; defaults to I + W

    // Of forward_ns, input_ns and weight_ns, the arithmetic: the FLOPs at the device's achieved
    // rate, known when the times come from FLOP counts ([transformer], `plan`). 0 when the split
    // is unknown (stated or measured times): the overlap efficiency then stands for the whole.
    std::int64_t forward_arithmetic_ns = 0;
    std::int64_t input_arithmetic_ns = 0;
    std::int64_t weight_arithmetic_ns = 0;

    std::int64_t backward_ns() const { return full_backward_ns.value_or(input_ns + weight_ns); }
    std::int64_t backward_arithmetic_ns() const {
        return std::min(backward_ns(), input_arithmetic_ns + weight_arithmetic_ns);
    }
};

// A computation's time and, of it, the arithmetic an overlap cannot hide.
struct Work {
    std::int64_t ns = 0;
    std::int64_t arithmetic_ns = 0;
};

struct Link {
    std::int64_t latency_ns = 0;
    double bytes_per_ns = 0;  // GB/s; 0 means unlimited bandwidth

    std::int64_t transfer_ns(std::int64_t bytes) const;
};

struct CostModel {
    std::vector<StageCost> stages;               // one per stage, or one for all stages
    std::vector<std::int64_t> activation_bytes;  // sent per stage and microbatch; empty = none
    // Kept per stage and microbatch from F until B (or W); empty = activation_bytes.
    std::vector<std::int64_t> held_activation_bytes;
    // Per stage, empty = none: weight gradients, allocated by the stage's first backward and kept
    // to the end of the step; and the temporaries a backward (B, I or W) holds while it runs.
    std::vector<std::int64_t> gradient_bytes;
    std::vector<std::int64_t> backward_peak_bytes;
    // Per stage, empty = none: of the held bytes, what the backward does not free (kept to the
    // end of the step, as the last stage's outputs are).
    std::vector<std::int64_t> kept_bytes;
    // Per stage, empty = none: what an I leaves held until its W (the gradients W reads).
    std::vector<std::int64_t> input_kept_bytes;
    Link intra_host;
    Link inter_host;
    int ranks_per_host = 8;
    // Transfers start only once their receive is posted: simulated with
    // DependencyRules::pytorch_rendezvous (see rules_for).
    bool rendezvous = false;
    // Host time to issue a SEND, during which the rank's next computation cannot start
    // (Experiment::send_issue_ns); 0: none.
    std::int64_t send_issue_ns = 0;
    // Receives hold their buffers from their posting (Experiment::posted_receive_buffers).
    bool posted_receive_buffers = false;
    // The share of an OVERLAP_F_B's hideable time that it hides (see overlap): 0, no overlap,
    // unless measured (calibration) or stated; 1, the shorter part entirely where nothing says
    // it is arithmetic.
    double overlap_efficiency = 0;
    // A straggler: rank r's computations take rank_slowdown[r] times their stage's costs (a
    // slower or throttled device, a noisy neighbour). Empty: every rank at 1.
    std::vector<double> rank_slowdown;
    std::int64_t on_rank(int rank, std::int64_t compute_ns) const;
    std::int64_t unshard_ns = 0;
    std::int64_t reshard_ns = 0;
    std::int64_t reduce_grad_ns = 0;

    const StageCost& stage(int stage_index) const;
    std::int64_t compute_ns(const Action& leaf) const;  // F, I, W, B, FSDP actions
    Work work_of(const Action& leaf) const;             // compute_ns and its arithmetic
    // Two parts run at once: first + second less overlap_efficiency x the hideable time, which is
    // at most the shorter part and at most what is not arithmetic in the two.
    Work overlap(const Work& first, const Work& second) const;
    std::int64_t bytes_of(int stage_index) const;
    // What a SEND_*/RECV_* carries: the activation crossing the boundary after stage s (SEND_F
    // of s, RECV_F of s + 1) or its gradient (SEND_B of s + 1, RECV_B of s).
    std::int64_t message_bytes(const Action& communication) const;
    std::int64_t held_bytes_of(int stage_index) const;
    std::int64_t gradient_bytes_of(int stage_index) const;
    std::int64_t backward_peak_bytes_of(int stage_index) const;
    std::int64_t kept_bytes_of(int stage_index) const;
    std::int64_t input_kept_bytes_of(int stage_index) const;
    // Whether any stage has weight-gradient or backward-temporary bytes: memory then counts more
    // than activations.
    bool sizes_gradients() const;
    std::int64_t transfer_ns(int from_rank, int to_rank, std::int64_t bytes) const;
};

}  // namespace pipelens::sim
