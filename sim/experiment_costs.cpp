// Cost model construction. Per-stage lists are expanded to one value per stage here, so the
// CostModel never has to guess whether a single value means "all stages".
#include "sim/experiment_costs.hpp"

#include "sim/layer_costs.hpp"
#include "sim/transformer_flops.hpp"

namespace pipelens::sim {
namespace {

constexpr std::int64_t kDefaultTimeNs = 1000;  // 1 us: unit times when nothing is given

std::int64_t value_for(const std::vector<std::int64_t>& values, int stage, std::int64_t fallback) {
    if (values.empty())
        return fallback;
    return values.size() == 1 ? values.front() : values[stage];
}

void add_transformer_costs(const TransformerSpec& spec, int stage_count, CostModel& costs) {
    const LayerFlops flops = transformer_layer_flops(spec);
    const std::vector<int> layers = layers_of_stages(spec, stage_count);
    for (int stage = 0; stage < stage_count; ++stage) {
        StageCost cost;
        cost.forward_ns = flops_to_ns(flops.forward * layers[stage], spec);
        cost.input_ns = flops_to_ns(flops.input_gradient * layers[stage], spec);
        cost.weight_ns = flops_to_ns(flops.weight_gradient * layers[stage], spec);
        costs.stages.push_back(cost);
        costs.held_activation_bytes.push_back(layer_held_activation_bytes(spec) * layers[stage]);
    }
    costs.activation_bytes.assign(1, boundary_activation_bytes(spec));
}

}  // namespace

CostModel cost_model_for(const Experiment& experiment, int stage_count) {
    CostModel costs;
    if (experiment.transformer) {
        add_transformer_costs(*experiment.transformer, stage_count, costs);
    } else if (experiment.layers) {
        for (const LayerStage& stage :
             stages_from_layers(*experiment.layers, experiment.model.split_points, stage_count)) {
            costs.stages.push_back(stage.cost);
            costs.activation_bytes.push_back(stage.output_bytes);
            costs.held_activation_bytes.push_back(stage.held_bytes);
            costs.gradient_bytes.push_back(stage.gradient_bytes);
            costs.backward_peak_bytes.push_back(stage.backward_peak_bytes);
            costs.kept_bytes.push_back(stage.kept_bytes);
        }
    } else {
        for (int stage = 0; stage < stage_count; ++stage) {
            StageCost cost;
            cost.forward_ns = value_for(experiment.forward_ns, stage, kDefaultTimeNs);
            cost.input_ns = value_for(experiment.input_ns, stage, kDefaultTimeNs);
            cost.weight_ns = value_for(experiment.weight_ns, stage, kDefaultTimeNs);
            if (!experiment.backward_ns.empty())
                cost.full_backward_ns = value_for(experiment.backward_ns, stage, 0);
            costs.stages.push_back(cost);
        }
    }
    if (!experiment.activation_bytes.empty()) {
        costs.activation_bytes.clear();
        for (int stage = 0; stage < stage_count; ++stage)
            costs.activation_bytes.push_back(value_for(experiment.activation_bytes, stage, 0));
    }
    if (!experiment.held_activation_bytes.empty()) {
        costs.held_activation_bytes.clear();
        for (int stage = 0; stage < stage_count; ++stage)
            costs.held_activation_bytes.push_back(
                value_for(experiment.held_activation_bytes, stage, 0));
    }
    costs.intra_host = {experiment.intra_host.latency_ns, experiment.intra_host.bytes_per_ns};
    costs.inter_host = {experiment.inter_host.latency_ns, experiment.inter_host.bytes_per_ns};
    costs.ranks_per_host = experiment.ranks_per_host;
    costs.rendezvous = experiment.rendezvous;
    costs.overlap_efficiency = experiment.overlap_efficiency;
    costs.rank_slowdown = experiment.rank_slowdown;
    costs.unshard_ns = experiment.unshard_ns;
    costs.reshard_ns = experiment.reshard_ns;
    costs.reduce_grad_ns = experiment.reduce_grad_ns;
    return costs;
}

}  // namespace pipelens::sim
