// The sums. The overhead and the loss are added once per stage action, whatever its layers.
#include "sim/layer_costs.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace pipelens::sim {
namespace {

std::int64_t non_negative(std::int64_t value) {
    return std::max<std::int64_t>(value, 0);
}

void add_extra(LayerStage& stage, const StageExtra& extra, bool first_stage) {
    StageCost& cost = stage.cost;
    cost.forward_ns = non_negative(cost.forward_ns + extra.forward_ns);
    if (!first_stage)
        cost.input_ns = non_negative(cost.input_ns + extra.input_ns);
    cost.full_backward_ns = non_negative(cost.backward_ns() + extra.backward_ns);
    // The first stage's W runs its whole backward (its I is empty): W is B there, overhead and
    // all, never a figure of its own that could come out above B.
    cost.weight_ns =
        first_stage ? *cost.full_backward_ns : non_negative(cost.weight_ns + extra.weight_ns);
    stage.held_bytes = non_negative(stage.held_bytes + extra.held_bytes);
    stage.kept_bytes =
        std::clamp<std::int64_t>(stage.kept_bytes + extra.kept_bytes, 0, stage.held_bytes);
    if (!first_stage)  // the first stage's I computes nothing (sum_of_layers)
        stage.input_kept_bytes = non_negative(stage.input_kept_bytes + extra.input_kept_bytes);
}

}  // namespace

LayerStage sum_of_layers(const LayerCosts& costs, const runtime::StageLayers& layers,
                         bool first_stage) {
    LayerStage stage;
    stage.cost = {0, 0, 0, std::int64_t{0}};
    std::int64_t backward = 0;
    for (int layer = layers.first; layer < layers.first + layers.count; ++layer) {
        stage.cost.forward_ns += costs.forward_ns[layer];
        stage.cost.input_ns += costs.input_ns[layer];
        stage.cost.weight_ns += costs.weight_ns[layer];
        backward += costs.backward_ns[layer];
        stage.held_bytes += costs.held_bytes[layer];
        stage.gradient_bytes += costs.gradient_bytes[layer];
        stage.backward_peak_bytes =
            std::max(stage.backward_peak_bytes, costs.backward_peak_bytes[layer]);
        stage.output_bytes = costs.output_bytes[layer];
        if (!costs.input_kept_bytes.empty())
            stage.input_kept_bytes += costs.input_kept_bytes[layer];
    }
    stage.cost.full_backward_ns = backward;
    if (first_stage) {
        stage.cost.input_ns = 0;
        stage.cost.weight_ns = backward;
        // Its I computes nothing (no input needs a gradient) and keeps only the gradient it
        // was given, for its W to run the whole backward from.
        if (!costs.input_kept_bytes.empty())
            stage.input_kept_bytes = stage.output_bytes;
    }
    return stage;
}

StageCost stage_cost_of(const LayerCosts& costs, const runtime::StageLayers& layers,
                        bool first_stage, bool last_stage) {
    LayerStage stage = sum_of_layers(costs, layers, first_stage);
    add_extra(stage, costs.stage_overhead, first_stage);
    if (last_stage)
        add_extra(stage, costs.loss, first_stage);
    return stage.cost;
}

std::vector<LayerStage> stages_from_layers(const LayerCosts& costs,
                                           const std::vector<std::string>& split_points,
                                           int stage_count) {
    std::vector<runtime::SplitPoint> points;
    std::vector<runtime::StageLayers> split;
    try {
        for (const std::string& point : split_points)
            points.push_back(runtime::parse_split_point(point));
        split = runtime::split_layers(costs.names, stage_count, points);
    } catch (const runtime::SplitError& error) {
        throw ExperimentError(
            fmt::format("[layers] with model.split_points cannot make {} stages: {}", stage_count,
                        error.what()));
    }
    std::vector<LayerStage> stages;
    for (int index = 0; index < stage_count; ++index) {
        const bool first = index == 0;
        LayerStage stage = sum_of_layers(costs, split[index], first);
        add_extra(stage, costs.stage_overhead, first);
        if (index > 0)
            stage.held_bytes += stages.back().output_bytes;
        if (index == stage_count - 1) {
            stage.kept_bytes += stage.output_bytes;  // the model's output, kept to step end
            add_extra(stage, costs.loss, first);
            stage.output_bytes = 0;
        }
        stages.push_back(stage);
    }
    return stages;
}

}  // namespace pipelens::sim
