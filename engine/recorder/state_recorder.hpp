// StateRecorder: the only way a PipelineState changes. Each public call is recorded as an
// Event before it runs (so calls it makes are numbered after it and nest under it), applied,
// and removed again if it throws — the failure is kept in failures() for the trace's errors
// table, as PyTorch's record_shapeenv_event pops a failed event. replay() applies a recorded
// top-level event to this recorder through the very same calls, which is what makes a replayed
// state equal to the recorded one by construction rather than by a second implementation.
//
// Invariants: events()[i].sequence == i; the constructor is event 0; nested events are made
// only by their parent's call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/recorder/event.hpp"
#include "engine/recorder/pipeline_state.hpp"
#include "engine/schedule/schedule_kind.hpp"

namespace pipelens::recorder {

// Stamps each event with when its call was made (ns on a monotonic clock); a real rank passes
// its steady clock, while a simulation and a replay pass none and their events have no time.
using EventClock = std::function<std::int64_t()>;

struct EventFailure {
    Event event;  // the outermost call that failed, as it would have been recorded
    std::string message;
};

class StateRecorder {
  public:
    // Records event 0, "PipelineState" {rank, run_kind}.
    StateRecorder(int rank, std::string run_kind, EventClock clock = {});
    // Rebuilds a recorder from a recorded constructor event (std::invalid_argument otherwise).
    static StateRecorder from_constructor(const Event& constructor);

    void configure_transport(const TransportState& transport);
    void choose_schedule(const ScheduleShape& shape);
    void load_schedule_csv(const std::string& source, const std::string& text);
    void lower_schedule(bool keep_fsdp_actions);
    void set_cost_model(const CostModelState& costs);
    void set_stage_costs(int stage, const StageCostState& costs);
    // Splits `layer_names` over the schedule's stages (nested: assign_layers per stage).
    void split_model(const std::string& model, const std::vector<std::string>& layer_names,
                     const std::vector<std::string>& split_points);
    void set_stage_meta(int stage, const std::vector<TensorMeta>& inputs,
                        const std::vector<TensorMeta>& outputs);
    // The receive/send buffers of the stages this state holds, from the lowered schedule and
    // the stages' metadata (nested: plan_buffer per buffer).
    void plan_buffers();
    void set_stage_backend(int stage, const std::string& backend);
    // One op's sharding decision: its schema, the strategy chosen and what that costs.
    void decide_sharding(const std::string& op_schema, const std::string& strategy, double cost_us);

    // Applies a recorded top-level event through the matching call. Throws
    // std::invalid_argument naming the event when it is nested, unknown or malformed, and
    // whatever the call throws when it fails again.
    void replay(const Event& event);

    const PipelineState& state() const { return state_; }
    const std::vector<Event>& events() const { return events_; }
    const std::vector<EventFailure>& failures() const { return failures_; }

  private:
    template <class Apply>
    void record(std::string name, nlohmann::json arguments, Apply&& apply);

    void assign_layers(int stage, const std::vector<std::string>& layers, const std::string& split);
    void plan_buffer(const BufferPlan& plan);
    void use_schedule(Schedule schedule, const std::string& source);
    StageState& stage_at(int stage, const char* call);

    PipelineState state_;
    EventClock clock_;
    std::vector<Event> events_;
    std::vector<std::int64_t> open_;  // sequences of the calls under way, outermost first
    std::vector<EventFailure> failures_;
};

}  // namespace pipelens::recorder
