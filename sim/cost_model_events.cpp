// CostModel <-> recorded state. Per-stage values are always recorded in full, so a state never
// depends on CostModel's "one entry means every stage" shorthand.
#include "sim/cost_model_events.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace pipelens::sim {

void record_cost_model(recorder::StateRecorder& recorder, const CostModel& costs) {
    recorder::CostModelState model;
    model.intra_host_latency_ns = costs.intra_host.latency_ns;
    model.intra_host_gb_per_s = costs.intra_host.bytes_per_ns;
    model.inter_host_latency_ns = costs.inter_host.latency_ns;
    model.inter_host_gb_per_s = costs.inter_host.bytes_per_ns;
    model.ranks_per_host = costs.ranks_per_host;
    model.rendezvous = costs.rendezvous;
    model.send_issue_ns = costs.send_issue_ns;
    model.posted_receive_buffers = costs.posted_receive_buffers;
    model.rank_slowdown = costs.rank_slowdown;
    model.overlap_efficiency = costs.overlap_efficiency;
    model.unshard_ns = costs.unshard_ns;
    model.reshard_ns = costs.reshard_ns;
    model.reduce_grad_ns = costs.reduce_grad_ns;
    recorder.set_cost_model(model);
    const int stage_count = recorder.state().schedule.stage_count;
    for (int stage = 0; stage < stage_count; ++stage) {
        const StageCost& cost = costs.stage(stage);
        recorder::StageCostState state;
        state.forward_ns = cost.forward_ns;
        state.input_ns = cost.input_ns;
        state.weight_ns = cost.weight_ns;
        state.backward_ns = cost.backward_ns();
        state.activation_bytes = costs.bytes_of(stage);
        state.held_bytes = costs.held_bytes_of(stage);
        state.gradient_bytes = costs.gradient_bytes_of(stage);
        state.backward_peak_bytes = costs.backward_peak_bytes_of(stage);
        state.kept_bytes = costs.kept_bytes_of(stage);
        state.input_kept_bytes = costs.input_kept_bytes_of(stage);
        state.forward_arithmetic_ns = cost.forward_arithmetic_ns;
        state.input_arithmetic_ns = cost.input_arithmetic_ns;
        state.weight_arithmetic_ns = cost.weight_arithmetic_ns;
        recorder.set_stage_costs(stage, state);
    }
}

CostModel cost_model_from_state(const recorder::PipelineState& state) {
    CostModel costs;
    const recorder::CostModelState& model = state.costs;
    costs.intra_host = {model.intra_host_latency_ns, model.intra_host_gb_per_s};
    costs.inter_host = {model.inter_host_latency_ns, model.inter_host_gb_per_s};
    costs.ranks_per_host = model.ranks_per_host;
    costs.rendezvous = model.rendezvous;
    costs.send_issue_ns = model.send_issue_ns;
    costs.posted_receive_buffers = model.posted_receive_buffers;
    costs.rank_slowdown = model.rank_slowdown;
    costs.overlap_efficiency = model.overlap_efficiency;
    costs.unshard_ns = model.unshard_ns;
    costs.reshard_ns = model.reshard_ns;
    costs.reduce_grad_ns = model.reduce_grad_ns;
    for (const recorder::StageState& stage : state.stages) {
        if (!stage.costs)
            throw std::invalid_argument(
                fmt::format("the recorded state has no costs for stage {}", stage.index));
        StageCost cost;
        cost.forward_ns = stage.costs->forward_ns;
        cost.input_ns = stage.costs->input_ns;
        cost.weight_ns = stage.costs->weight_ns;
        cost.full_backward_ns = stage.costs->backward_ns;
        cost.forward_arithmetic_ns = stage.costs->forward_arithmetic_ns;
        cost.input_arithmetic_ns = stage.costs->input_arithmetic_ns;
        cost.weight_arithmetic_ns = stage.costs->weight_arithmetic_ns;
        costs.stages.push_back(cost);
        costs.activation_bytes.push_back(stage.costs->activation_bytes);
        costs.held_activation_bytes.push_back(stage.costs->held_bytes);
        costs.gradient_bytes.push_back(stage.costs->gradient_bytes);
        costs.backward_peak_bytes.push_back(stage.costs->backward_peak_bytes);
        costs.kept_bytes.push_back(stage.costs->kept_bytes);
        costs.input_kept_bytes.push_back(stage.costs->input_kept_bytes);
    }
    return costs;
}

}  // namespace pipelens::sim
