// PipelineState: the configuration a pipeline engine builds before it runs a step — transport,
// schedule (generated and lowered), the model's split into stages, the tensor metadata shape
// inference fixed at every boundary, the receive/send buffers planned from them, per-stage
// backends and costs. StateRecorder is the only code that changes it, one recorded event at a
// time, so the same events replayed on a fresh state rebuild it exactly.
//
// What counts as state is what state_fields() prints: the identity (rank, run kind) and the
// non-state members (the schedule IR cache, the applied-event counter) are left out, so states
// of two ranks, or of yesterday's and today's run, compare field by field. Values print in a
// normalised form (tensor metadata as `f32[64, 512]`, strides only when not contiguous).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/schedule/schedule.hpp"
#include "engine/tensor/tensor_meta.hpp"

namespace pipelens::recorder {

struct TransportState {
    std::string kind = "none";  // local, gloo, nccl, simulated
    int world_size = 0;
    std::int64_t timeout_ns = 0;
    std::string device;  // "cpu", "cuda:0"
    // The floating-point type a real run computes in, where it is not float32 ("bfloat16");
    // empty for float32 and for runs recorded before runs had a choice. The initializer keeps
    // brace lists of the four fields above free of -Wmissing-field-initializers.
    std::string dtype{};
};

struct ScheduleState {
    std::string source = "none";  // "generated" or the CSV file it was read from
    std::string kind;             // PyTorch's name, or the CSV's
    int pp = 0;
    int v = 0;
    int m = 0;
    int stage_count = 0;
    std::vector<int> stage_to_rank;
    bool lowered = false;
    bool receives_deferred = false;  // lowered with PyTorch's defer_pp_recv
    // ZeroBubbleAuto: the times and memory limit its order was searched with ("" otherwise).
    std::string zero_bubble_inputs;
    // Not state: the IR the fields fingerprint, kept so the engine runs what was recorded.
    std::shared_ptr<const Schedule> schedule;
};

// What the simulator charges for a stage (all times in ns, sizes in bytes).
struct StageCostState {
    std::int64_t forward_ns = 0;
    std::int64_t input_ns = 0;
    std::int64_t weight_ns = 0;
    std::int64_t backward_ns = 0;
    std::int64_t activation_bytes = 0;     // sent per microbatch
    std::int64_t held_bytes = 0;           // kept from F until its backward
    std::int64_t gradient_bytes = 0;       // weight gradients, from the first backward on
    std::int64_t backward_peak_bytes = 0;  // a backward's temporaries while it runs
    std::int64_t kept_bytes = 0;           // of held, not freed by the backward
    std::int64_t input_kept_bytes = 0;     // what an I leaves held until its W
    // Of forward, input and weight, the arithmetic (FLOPs at the device's rate), which an
    // OVERLAP_F_B cannot hide; 0 where unknown (stated or measured times).
    std::int64_t forward_arithmetic_ns = 0;
    std::int64_t input_arithmetic_ns = 0;
    std::int64_t weight_arithmetic_ns = 0;
};

// Links and FSDP costs of a simulation.
struct CostModelState {
    bool known = false;
    std::int64_t intra_host_latency_ns = 0;
    double intra_host_gb_per_s = 0;  // 0: unlimited
    std::int64_t inter_host_latency_ns = 0;
    double inter_host_gb_per_s = 0;
    int ranks_per_host = 0;
    double overlap_efficiency = 0;
    std::int64_t unshard_ns = 0;
    std::int64_t reshard_ns = 0;
    std::int64_t reduce_grad_ns = 0;
    bool rendezvous = false;              // transfers start once their receive is posted too
    std::vector<double> rank_slowdown;    // per rank, its compute x this; empty: all 1
    std::int64_t send_issue_ns = 0;       // host time a SEND holds its rank's computations up
    bool posted_receive_buffers = false;  // a receive holds its buffers from its posting
};

struct StageState {
    int index = 0;
    int rank = -1;
    std::vector<std::string> layers;
    std::string split;  // why it starts where it does: "even split" or "split point layers.4"
    std::optional<std::vector<TensorMeta>> inputs;   // known once shape inference ran
    std::optional<std::vector<TensorMeta>> outputs;  // empty list for the last stage
    std::string backend = "eager";
    std::optional<StageCostState> costs;
};

// A buffer a rank allocates for one direction of one stage's communication.
enum class BufferDirection { recv_forward, send_forward, recv_backward, send_backward };

// The buffer carries the stage's inputs (or their gradients) and so faces the previous stage:
// forward receives and backward sends; the others carry outputs to or from the next stage.
inline bool faces_previous_stage(BufferDirection direction) {
    return direction == BufferDirection::recv_forward ||
           direction == BufferDirection::send_backward;
}
std::string_view buffer_direction_name(BufferDirection direction);  // "recv_forward"
BufferDirection parse_buffer_direction(std::string_view name);      // std::invalid_argument

struct BufferPlan {
    int stage = 0;
    BufferDirection direction = BufferDirection::recv_forward;
    int peer_stage = 0;
    int peer_rank = 0;
    std::vector<TensorMeta> metas;  // empty when the run knows sizes only (a simulation)
    std::int64_t bytes = 0;
};

// What a buffer of `stage` in `direction` must hold: its inputs (forward receive) or outputs
// (forward send), and for backward the gradients of those that require one. Empty while the
// stage's metadata is unknown.
std::vector<TensorMeta> expected_buffer_metas(const StageState& stage, BufferDirection direction);

struct PipelineState {
    // Identity, printed by `replay` but not compared.
    int rank = -1;  // -1: the whole pipeline (a simulation)
    std::string run_kind;

    TransportState transport;
    ScheduleState schedule;
    CostModelState costs;
    std::string model = "none";
    std::vector<std::string> split_points;
    std::vector<StageState> stages;
    std::vector<BufferPlan> buffers;
    // Sharding decisions in propagation order: "OP SCHEMA: CHOSEN STRATEGY (COST us)".
    std::vector<std::string> sharding;

    // This state's rank runs the stage (every stage for a whole-pipeline state).
    bool holds(int stage) const;
};

struct StateField {
    std::string name;  // "stage[1].outputs_meta"
    std::string value;
    friend bool operator==(const StateField&, const StateField&) = default;
};

// The state as comparable fields, in a fixed order.
std::vector<StateField> state_fields(const PipelineState& state);

// Consistency problems a run would hit: a stage's outputs that its successor does not expect,
// a buffer planned with other metadata than its stage's, a split that does not match the
// schedule. Empty when the state is consistent.
std::vector<std::string> validate_state(const PipelineState& state);

}  // namespace pipelens::recorder
