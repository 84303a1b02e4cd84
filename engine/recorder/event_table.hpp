// The table of recorded events: one struct per kind of event, holding that event's fields, and
// one definition of those fields (fields()) from which its JSON is written and read. Each kind's
// apply() is how it changes PipelineState. StateRecorder records and applies these, replay reads
// them back through parse_event(), so adding a field to an event means editing its struct here.
//
// Invariants: an event's arguments are the JSON object of exactly the fields fields() visits,
// under those names (nlohmann::json keeps keys sorted, so the text a trace holds does not depend
// on the order fields are listed in); event_arguments(parse_event(name, json)) == json for every
// JSON an event of this engine wrote. Kinds with kMadeBy are made only by that call (nested).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/recorder/event.hpp"
#include "engine/recorder/pipeline_state.hpp"
#include "engine/schedule/schedule_kind.hpp"

namespace pipelens::recorder {

class EventTarget;

// Event 0 of every stream: who records (rank, -1 for the whole pipeline) and what kind of run.
struct ConstructState {
    static constexpr std::string_view kName = "PipelineState";
    int rank = -1;
    std::string run_kind;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("rank", self.rank);
        visit("run_kind", self.run_kind);
    }
    void apply(EventTarget& target) const;
};

struct ConfigureTransport {
    static constexpr std::string_view kName = "configure_transport";
    TransportState transport;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("kind", self.transport.kind);
        visit("world_size", self.transport.world_size);
        visit("timeout_ns", self.transport.timeout_ns);
        visit("device", self.transport.device);
        visit("dtype", self.transport.dtype);
    }
    void apply(EventTarget& target) const;
};

struct ChooseSchedule {
    static constexpr std::string_view kName = "choose_schedule";
    ScheduleShape shape;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("kind", self.shape.kind);
        visit("pp", self.shape.rank_count);
        visit("v", self.shape.stages_per_rank);
        visit("m", self.shape.microbatch_count);
        visit("zero_bubble_f_ns", self.shape.zero_bubble.forward_ns);
        visit("zero_bubble_i_ns", self.shape.zero_bubble.input_ns);
        visit("zero_bubble_w_ns", self.shape.zero_bubble.weight_ns);
        visit("zero_bubble_comm_ns", self.shape.zero_bubble.communication_ns);
        visit("max_activations", self.shape.zero_bubble.max_activations);
    }
    void apply(EventTarget& target) const;
};

struct LoadScheduleCsv {
    static constexpr std::string_view kName = "load_schedule_csv";
    std::string source;
    std::string csv;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("source", self.source);
        visit("csv", self.csv);
    }
    void apply(EventTarget& target) const;
};

struct LowerSchedule {
    static constexpr std::string_view kName = "lower_schedule";
    bool keep_fsdp_actions = false;
    bool defer_recv = false;  // PyTorch's defer_pp_recv
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("keep_fsdp_actions", self.keep_fsdp_actions);
        visit("defer_recv", self.defer_recv);
    }
    void apply(EventTarget& target) const;
};

struct SetCostModel {
    static constexpr std::string_view kName = "set_cost_model";
    CostModelState costs;  // `known` is not an argument: setting the model makes it known
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("intra_host_latency_ns", self.costs.intra_host_latency_ns);
        visit("intra_host_gb_per_s", self.costs.intra_host_gb_per_s);
        visit("inter_host_latency_ns", self.costs.inter_host_latency_ns);
        visit("inter_host_gb_per_s", self.costs.inter_host_gb_per_s);
        visit("ranks_per_host", self.costs.ranks_per_host);
        visit("rendezvous", self.costs.rendezvous);
        visit("send_issue_ns", self.costs.send_issue_ns);
        visit("posted_receive_buffers", self.costs.posted_receive_buffers);
        visit("rank_slowdown", self.costs.rank_slowdown);
        visit("overlap_efficiency", self.costs.overlap_efficiency);
        visit("unshard_ns", self.costs.unshard_ns);
        visit("reshard_ns", self.costs.reshard_ns);
        visit("reduce_grad_ns", self.costs.reduce_grad_ns);
    }
    void apply(EventTarget& target) const;
};

struct SetStageCosts {
    static constexpr std::string_view kName = "set_stage_costs";
    int stage = 0;
    StageCostState costs;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("stage", self.stage);
        visit("forward_ns", self.costs.forward_ns);
        visit("input_ns", self.costs.input_ns);
        visit("weight_ns", self.costs.weight_ns);
        visit("backward_ns", self.costs.backward_ns);
        visit("activation_bytes", self.costs.activation_bytes);
        visit("held_bytes", self.costs.held_bytes);
        visit("gradient_bytes", self.costs.gradient_bytes);  // see added_later()
        visit("backward_peak_bytes", self.costs.backward_peak_bytes);
        visit("kept_bytes", self.costs.kept_bytes);
        visit("input_kept_bytes", self.costs.input_kept_bytes);
        visit("forward_arithmetic_ns", self.costs.forward_arithmetic_ns);
        visit("input_arithmetic_ns", self.costs.input_arithmetic_ns);
        visit("weight_arithmetic_ns", self.costs.weight_arithmetic_ns);
    }
    void apply(EventTarget& target) const;
};

// Splits `layers` over the schedule's stages; makes one AssignLayers per stage.
struct SplitModel {
    static constexpr std::string_view kName = "split_model";
    std::string model;
    std::vector<std::string> layers;
    std::vector<std::string> split_points;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("model", self.model);
        visit("layers", self.layers);
        visit("split_points", self.split_points);
    }
    void apply(EventTarget& target) const;
};

struct AssignLayers {
    static constexpr std::string_view kName = "assign_layers";
    static constexpr std::string_view kMadeBy = SplitModel::kName;
    int stage = 0;
    std::vector<std::string> layers;
    std::string split;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("stage", self.stage);
        visit("layers", self.layers);
        visit("split", self.split);
    }
    void apply(EventTarget& target) const;
};

struct SetStageMeta {
    static constexpr std::string_view kName = "set_stage_meta";
    int stage = 0;
    std::vector<TensorMeta> inputs;
    std::vector<TensorMeta> outputs;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("stage", self.stage);
        visit("inputs", self.inputs);
        visit("outputs", self.outputs);
    }
    void apply(EventTarget& target) const;
};

// Plans the buffers of the stages the state holds from the lowered schedule and the stages'
// metadata (or costs); makes one PlanBuffer per buffer.
struct PlanBuffers {
    static constexpr std::string_view kName = "plan_buffers";
    template <class Self, class Visit>
    static void fields(Self&, Visit&&) {}
    void apply(EventTarget& target) const;
};

struct PlanBuffer {
    static constexpr std::string_view kName = "plan_buffer";
    static constexpr std::string_view kMadeBy = PlanBuffers::kName;
    BufferPlan plan;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("stage", self.plan.stage);
        visit("direction", self.plan.direction);
        visit("peer_stage", self.plan.peer_stage);
        visit("peer_rank", self.plan.peer_rank);
        visit("metas", self.plan.metas);
        visit("bytes", self.plan.bytes);
    }
    void apply(EventTarget& target) const;
};

struct SetStageBackend {
    static constexpr std::string_view kName = "set_stage_backend";
    int stage = 0;
    std::string backend;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("stage", self.stage);
        visit("backend", self.backend);
    }
    void apply(EventTarget& target) const;
};

// One op's sharding decision: its schema, the strategy chosen and what that costs.
struct DecideSharding {
    static constexpr std::string_view kName = "decide_sharding";
    std::string op;
    std::string strategy;
    double cost_us = 0;
    template <class Self, class Visit>
    static void fields(Self& self, Visit&& visit) {
        visit("op", self.op);
        visit("strategy", self.strategy);
        visit("cost_us", self.cost_us);
    }
    void apply(EventTarget& target) const;
};

// Every kind of event; parse_event() finds a kind by its kName here.
using AnyEvent =
    std::variant<ConstructState, ConfigureTransport, ChooseSchedule, LoadScheduleCsv, LowerSchedule,
                 SetCostModel, SetStageCosts, SplitModel, AssignLayers, SetStageMeta, PlanBuffers,
                 PlanBuffer, SetStageBackend, DecideSharding>;

// What apply() may change: the state, and (for calls that make nested events) the recorder.
class EventTarget {
  public:
    virtual PipelineState& mutable_state() = 0;
    // Records `nested` under the event being applied, then applies it.
    virtual void record(AnyEvent nested) = 0;

  protected:
    ~EventTarget() = default;
};

// A recorded event that cannot be read: an unknown name, a missing or mistyped field.
class EventFormatError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

std::string_view event_name(const AnyEvent& event);
// The call that makes this kind of event, when only a call makes it (empty otherwise).
std::string_view made_by(const AnyEvent& event);
// The names of every kind, in the table's order.
std::vector<std::string_view> event_names();

// The event's fields as JSON, as traces hold them.
nlohmann::json event_arguments(const AnyEvent& event);
// Reads an event of kind `name`. Throws EventFormatError: "no recorded call has this name", or
// "malformed arguments: field 'pp' must be an integer, got \"four\"" (missing fields likewise).
AnyEvent parse_event(std::string_view name, const nlohmann::json& arguments);
AnyEvent parse_event(const Event& event);

// The stage a recorded event is about, when its kind has a `stage` field and it can be read.
std::optional<int> event_stage(const Event& event);

}  // namespace pipelens::recorder
