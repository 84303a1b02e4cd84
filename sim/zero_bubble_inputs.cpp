// ZeroBubbleAuto's inputs from the same cost model the simulator charges, so the order is
// searched for the times it will be simulated with. Like the authors' runtime, which orders with
// the median of its stages' profiled times, per-stage times (measured, or a stage's overhead or
// the loss) enter as their median; a split the user declares uneven is refused instead, since
// the order would then be searched for stages the run does not have.
#include "sim/zero_bubble_inputs.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/run_record/statistics.hpp"
#include "sim/experiment_costs.hpp"

namespace pipelens::sim {
namespace {

void refuse_uneven_split(const Experiment& experiment, int stage_count) {
    const std::vector<int> layers = layers_per_stage(experiment, stage_count);
    if (std::adjacent_find(layers.begin(), layers.end(), std::not_equal_to<>()) == layers.end())
        return;
    throw ExperimentError(fmt::format(
        "{}: ZeroBubbleAuto searches one order for equal stages, as the authors' scheduler "
        "does, but the {} split unevenly over the {} stages ([{}]); give a layer count the "
        "stages divide, or choose a kind that takes uneven stages, e.g. ZeroBubbleH2",
        experiment.source,
        experiment.transformer ? "transformer's layers" : "model's layers (costs per layer)",
        stage_count, fmt::join(layers, ", ")));
}

}  // namespace

void resolve_zero_bubble_inputs(Experiment& experiment) {
    if (experiment.shape.kind != ScheduleKind::zero_bubble_auto ||
        !experiment.schedule_file.empty())
        return;
    validate_experiment(experiment);
    const int pp = experiment.shape.rank_count;
    refuse_uneven_split(experiment, pp);
    const CostModel costs = cost_model_for(experiment, pp);
    std::vector<std::int64_t> forward, input, weight;
    std::int64_t communication = 0;
    for (int stage = 0; stage < pp; ++stage) {
        forward.push_back(costs.stage(stage).forward_ns);
        input.push_back(costs.stage(stage).input_ns);
        weight.push_back(costs.stage(stage).weight_ns);
        if (stage + 1 < pp)
            communication =
                std::max(communication, costs.transfer_ns(stage, stage + 1, costs.bytes_of(stage)));
    }
    ZeroBubbleInputs& inputs = experiment.shape.zero_bubble;
    inputs.forward_ns = run_record::median_of(forward);
    inputs.input_ns = run_record::median_of(input);
    inputs.weight_ns = run_record::median_of(weight);
    inputs.communication_ns = communication;
    inputs.max_activations =
        experiment.max_activations.count > 0 ? experiment.max_activations.resolve(pp) : pp;
}

}  // namespace pipelens::sim
