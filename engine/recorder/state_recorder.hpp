// StateRecorder: the only way a PipelineState changes. Each call is recorded as an Event (one
// of the kinds in event_table.hpp) before it is applied (so calls it makes are numbered after it
// and nest under it), and removed again if it throws — the failure is kept in failures() for
// the trace's errors table, as PyTorch's record_shapeenv_event pops a failed event. replay()
// reads a recorded top-level event back into its kind and applies it through the very same
// record(), which is what makes a replayed state equal to the recorded one by construction
// rather than by a second implementation.
//
// Invariants: events()[i].sequence == i; the constructor is event 0; nested events are made
// only by their parent's call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/recorder/event.hpp"
#include "engine/recorder/event_table.hpp"
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

class StateRecorder : private EventTarget {
  public:
    // Records event 0, "PipelineState" {rank, run_kind}.
    StateRecorder(int rank, std::string run_kind, EventClock clock = {});
    // Rebuilds a recorder from a recorded constructor event (std::invalid_argument otherwise).
    static StateRecorder from_constructor(const Event& constructor);

    // Records `event` (nested under the call under way, if any) and applies it. Throws what
    // applying it throws, having dropped the event and whatever it made.
    void record(AnyEvent event) override;

    // The calls, one per kind of top-level event (see event_table.hpp for what each does).
    void configure_transport(const TransportState& transport) {
        record(ConfigureTransport{transport});
    }
    void choose_schedule(const ScheduleShape& shape) { record(ChooseSchedule{shape}); }
    void load_schedule_csv(const std::string& source, const std::string& text) {
        record(LoadScheduleCsv{source, text});
    }
    void lower_schedule(bool keep_fsdp_actions, bool defer_receives = false) {
        record(LowerSchedule{keep_fsdp_actions, defer_receives});
    }
    void set_cost_model(const CostModelState& costs) { record(SetCostModel{costs}); }
    void set_stage_costs(int stage, const StageCostState& costs) {
        record(SetStageCosts{stage, costs});
    }
    void split_model(const std::string& model, const std::vector<std::string>& layer_names,
                     const std::vector<std::string>& split_points) {
        record(SplitModel{model, layer_names, split_points});
    }
    void set_stage_meta(int stage, const std::vector<TensorMeta>& inputs,
                        const std::vector<TensorMeta>& outputs) {
        record(SetStageMeta{stage, inputs, outputs});
    }
    void plan_buffers() { record(PlanBuffers{}); }
    void set_stage_backend(int stage, const std::string& backend) {
        record(SetStageBackend{stage, backend});
    }
    void decide_sharding(const std::string& op_schema, const std::string& strategy,
                         double cost_us) {
        record(DecideSharding{op_schema, strategy, cost_us});
    }

    // Applies a recorded top-level event through record(). Throws std::invalid_argument naming
    // the problem when it is nested, a constructor, made only by another call, of an unknown
    // kind or malformed (EventFormatError), and whatever the call throws when it fails again.
    void replay(const Event& event);

    const PipelineState& state() const { return state_; }
    const std::vector<Event>& events() const { return events_; }
    const std::vector<EventFailure>& failures() const { return failures_; }

  private:
    PipelineState& mutable_state() override { return state_; }

    PipelineState state_;
    EventClock clock_;
    std::vector<Event> events_;
    std::vector<std::int64_t> open_;  // sequences of the calls under way, outermost first
    std::vector<EventFailure> failures_;
};

}  // namespace pipelens::recorder
