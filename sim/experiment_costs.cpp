// Cost model construction. Per-stage lists are expanded to one value per stage here, so the
// CostModel never has to guess whether a single value means "all stages", and per-model or
// per-layer figures (costs.per) are divided over the stages here and nowhere else.
#include "sim/experiment_costs.hpp"

#include <algorithm>

#include "engine/stage_plan/stage_split.hpp"
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

// model.layers split over the stages at model.split_points (evenly without them).
std::vector<int> split_model_layers(const Experiment& experiment, int stage_count) {
    std::vector<std::string> names;
    for (int layer = 0; layer < experiment.model.layers; ++layer)
        names.push_back("layers." + std::to_string(layer));
    std::vector<runtime::SplitPoint> points;
    for (const std::string& point : experiment.model.split_points)
        points.push_back(runtime::parse_split_point(point));
    std::vector<int> layers;
    for (const runtime::StageLayers& stage : runtime::split_layers(names, stage_count, points))
        layers.push_back(stage.count);
    return layers;
}

// How a flat [costs] figure becomes each stage's: as given (per stage), an even share of the
// whole (per model: the shares add up to the figure exactly), or the figure times the stage's
// layers (per layer, split as a real run splits them).
class StageShares {
  public:
    StageShares(const Experiment& experiment, int stage_count)
        : scope_(experiment.cost_scope), stage_count_(stage_count) {
        if (scope_ == CostScope::layer)
            layers_ = split_model_layers(experiment, stage_count);
    }

    std::int64_t of(const std::vector<std::int64_t>& values, int stage,
                    std::int64_t fallback) const {
        const std::int64_t given = value_for(values, stage, fallback);
        if (values.empty() || scope_ == CostScope::stage)
            return given;
        if (scope_ == CostScope::layer)
            return given * layers_[stage];
        const auto share_end = [&](int end) {
            return static_cast<std::int64_t>(static_cast<__int128>(given) * end / stage_count_);
        };
        return share_end(stage + 1) - share_end(stage);
    }

  private:
    CostScope scope_;
    int stage_count_;
    std::vector<int> layers_;  // per stage, for CostScope::layer
};

void add_transformer_costs(const TransformerSpec& spec, int stage_count, CostModel& costs) {
    const LayerFlops flops = transformer_layer_flops(spec);
    const std::vector<int> layers = layers_of_stages(spec, stage_count);
    for (int stage = 0; stage < stage_count; ++stage) {
        // The last stage's output layer: its logits in each pass (none without a vocabulary).
        const double output = stage + 1 == stage_count ? output_layer_flops(spec) : 0;
        StageCost cost;
        cost.forward_ns = flops_to_ns(flops.forward * layers[stage] + output, spec);
        cost.input_ns = flops_to_ns(flops.input_gradient * layers[stage] + output, spec);
        cost.weight_ns = flops_to_ns(flops.weight_gradient * layers[stage] + output, spec);
        // All of it is arithmetic: no communication inside a stage is modelled.
        cost.forward_arithmetic_ns = cost.forward_ns;
        cost.input_arithmetic_ns = cost.input_ns;
        cost.weight_arithmetic_ns = cost.weight_ns;
        costs.stages.push_back(cost);
        costs.held_activation_bytes.push_back(layer_held_activation_bytes(spec) * layers[stage]);
    }
    costs.activation_bytes.assign(1, boundary_activation_bytes(spec));
}

// A B stated without its parts is split so that the schedules that run I and W (the zero-bubble
// ones, DualPipeV's backwards) take the same backward as those that run B: halves when neither
// part is stated (the zero-bubble paper's I = W), else the rest of B beside the stated part.
// Left alone, the parts kept their 1 us placeholders and a zero-bubble schedule looked up to
// three times faster than 1F1B on the same costs.
void split_stated_backward(const Experiment& experiment, std::int64_t backward_ns,
                           StageCost& cost) {
    const bool input_stated = !experiment.input_ns.empty();
    const bool weight_stated = !experiment.weight_ns.empty();
    if (!input_stated && !weight_stated) {
        cost.input_ns = backward_ns / 2;
        cost.weight_ns = backward_ns - cost.input_ns;
    } else if (!input_stated) {
        cost.input_ns = std::max<std::int64_t>(0, backward_ns - cost.weight_ns);
    } else if (!weight_stated) {
        cost.weight_ns = std::max<std::int64_t>(0, backward_ns - cost.input_ns);
    }
}

}  // namespace

std::vector<int> layers_per_stage(const Experiment& experiment, int stage_count) {
    if (experiment.transformer)
        return layers_of_stages(*experiment.transformer, stage_count);
    if (experiment.cost_scope == CostScope::layer && !experiment.layers)
        return split_model_layers(experiment, stage_count);
    return {};
}

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
            costs.input_kept_bytes.push_back(stage.input_kept_bytes);
        }
    } else {
        const StageShares shares(experiment, stage_count);
        for (int stage = 0; stage < stage_count; ++stage) {
            StageCost cost;
            cost.forward_ns = shares.of(experiment.forward_ns, stage, kDefaultTimeNs);
            cost.input_ns = shares.of(experiment.input_ns, stage, kDefaultTimeNs);
            cost.weight_ns = shares.of(experiment.weight_ns, stage, kDefaultTimeNs);
            if (!experiment.backward_ns.empty()) {
                cost.full_backward_ns = shares.of(experiment.backward_ns, stage, 0);
                split_stated_backward(experiment, *cost.full_backward_ns, cost);
            }
            costs.stages.push_back(cost);
        }
    }
    if (!experiment.activation_bytes.empty()) {
        costs.activation_bytes.clear();
        for (int stage = 0; stage < stage_count; ++stage)
            costs.activation_bytes.push_back(value_for(experiment.activation_bytes, stage, 0));
    }
    if (!experiment.held_activation_bytes.empty()) {
        const StageShares shares(experiment, stage_count);
        costs.held_activation_bytes.clear();
        for (int stage = 0; stage < stage_count; ++stage)
            costs.held_activation_bytes.push_back(
                shares.of(experiment.held_activation_bytes, stage, 0));
    }
    costs.intra_host = {experiment.intra_host.latency_ns, experiment.intra_host.bytes_per_ns};
    costs.inter_host = {experiment.inter_host.latency_ns, experiment.inter_host.bytes_per_ns};
    costs.ranks_per_host = experiment.ranks_per_host;
    costs.rendezvous = experiment.rendezvous;
    costs.send_issue_ns = experiment.send_issue_ns;
    costs.posted_receive_buffers = experiment.posted_receive_buffers;
    costs.overlap_efficiency = experiment.overlap_efficiency;
    costs.rank_slowdown = experiment.rank_slowdown;
    costs.unshard_ns = experiment.unshard_ns;
    costs.reshard_ns = experiment.reshard_ns;
    costs.reduce_grad_ns = experiment.reduce_grad_ns;
    return costs;
}

}  // namespace pipelens::sim
