// ZeroBubbleAuto's inputs from the same cost model the simulator charges, so the order is
// searched for the times it will be simulated with.
#include "sim/zero_bubble_inputs.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/text/quantities.hpp"
#include "sim/experiment_costs.hpp"

namespace pipelens::sim {
namespace {

void require_equal(const std::vector<std::int64_t>& times, std::string_view what,
                   const Experiment& experiment) {
    if (std::adjacent_find(times.begin(), times.end(), std::not_equal_to<>()) == times.end())
        return;
    std::vector<std::string> shown;
    for (std::int64_t time : times)
        shown.push_back(format_duration(time));
    throw ExperimentError(fmt::format(
        "{}: ZeroBubbleAuto orders with one {} time for every stage, as the authors' scheduler "
        "does, but the stages differ ({}); give equal stages (costs, layers_per_stage) or "
        "choose a kind that takes uneven stages, e.g. ZeroBubbleH2",
        experiment.source, what, fmt::join(shown, ", ")));
}

}  // namespace

void resolve_zero_bubble_inputs(Experiment& experiment) {
    if (experiment.shape.kind != ScheduleKind::zero_bubble_auto ||
        !experiment.schedule_file.empty())
        return;
    validate_experiment(experiment);
    const int pp = experiment.shape.rank_count;
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
    require_equal(forward, "F", experiment);
    require_equal(input, "I", experiment);
    require_equal(weight, "W", experiment);
    ZeroBubbleInputs& inputs = experiment.shape.zero_bubble;
    inputs.forward_ns = forward.front();
    inputs.input_ns = input.front();
    inputs.weight_ns = weight.front();
    inputs.communication_ns = communication;
    inputs.max_activations =
        experiment.max_activations.count > 0 ? experiment.max_activations.resolve(pp) : pp;
}

}  // namespace pipelens::sim
