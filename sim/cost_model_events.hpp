// The cost model as recorded state: a simulation records its links and every stage's costs as
// events (set_cost_model, set_stage_costs) and then simulates with the cost model read back from
// the recorded state, so what a replay rebuilds is exactly what was simulated.
#pragma once

#include "engine/recorder/state_recorder.hpp"
#include "sim/cost_model.hpp"

namespace pipelens::sim {

// One set_cost_model and one set_stage_costs per stage of the recorder's schedule.
void record_cost_model(recorder::StateRecorder& recorder, const CostModel& costs);

// The cost model a state describes (std::invalid_argument when a stage has no costs).
CostModel cost_model_from_state(const recorder::PipelineState& state);

}  // namespace pipelens::sim
