// `pipelens partition`: the split of a model's layers over the pp x v stages that gives the
// shortest simulated step for a schedule (sim/partition.hpp), printed stage by stage against
// the even split, and as the flags that apply it: `--split` for pipelens run and Megatron-LM's
// --pipeline-model-parallel-layout.
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/progress_bar.hpp"
#include "engine/stage_plan/megatron_layout.hpp"
#include "sim/partition.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::cli {
namespace {

struct PartitionOptions {
    ExperimentOptions experiment;
    std::optional<int> max_splits;
};

std::string percent_faster(std::int64_t slower, std::int64_t faster) {
    return fmt::format("{:.1f}%", 100.0 * static_cast<double>(slower - faster) /
                                      static_cast<double>(std::max<std::int64_t>(slower, 1)));
}

void print_partition(const Experiment& experiment, const LayerCosts& costs,
                     const sim::PartitionResult& result) {
    const ScheduleShape& shape = experiment.shape;
    fmt::print("partition of {} layers over {} stages ({} pp={} v={} m={})\n", costs.names.size(),
               result.layers_per_stage.size(), schedule_kind_name(shape.kind), shape.rank_count,
               shape.stages_per_rank, shape.microbatch_count);
    fmt::print("{:>5}  {:>6}  {:>4}  {}\n", "stage", "layers", "even", "first layer");
    int first = 0;
    for (std::size_t stage = 0; stage < result.layers_per_stage.size(); ++stage) {
        fmt::print("{:>5}  {:>6}  {:>4}  {}\n", stage, result.layers_per_stage[stage],
                   result.even_layers_per_stage[stage], costs.names[first]);
        first += result.layers_per_stage[stage];
    }
    fmt::print("predicted step: {} against {} for the even split ({} faster)\n",
               format_duration(result.step_ns), format_duration(result.even_step_ns),
               percent_faster(result.even_step_ns, result.step_ns));
    if (result.proven_optimal)
        fmt::print(
            "optimal: no split simulates faster ({} splits simulated, {} partial splits "
            "bounded)\n",
            result.splits_simulated, result.nodes);
    else
        fmt::print(
            "not proven optimal: the search stopped at its limits ({} splits simulated, {} "
            "partial splits); no split is faster than {} (raise --max-splits to search "
            "further)\n",
            result.splits_simulated, result.nodes, format_duration(result.lower_bound_ns));
    std::vector<std::string> flags;
    for (const std::string& point : sim::split_points_for(costs, result.layers_per_stage))
        flags.push_back("--split " + point);
    fmt::print("pipelens run: {}\n",
               flags.empty() ? "(one stage)" : fmt::format("{}", fmt::join(flags, " ")));
    fmt::print("Megatron-LM: --pipeline-model-parallel-layout \"{}\"\n",
               runtime::megatron_layout(result.layers_per_stage));
}

void run_partition(const PartitionOptions& options) {
    Experiment experiment = load_experiment(options.experiment);
    sim::PartitionLimits limits;
    if (options.max_splits)
        limits.max_splits_simulated = static_cast<std::size_t>(*options.max_splits);
    // A bar per phase, on a terminal only (ProgressBar): near the layer limit, pricing the stage
    // table and simulating splits take minutes.
    PhaseBars bars([](std::string_view phase) {
        return PhaseBars::Unit{phase == "pricing stages"            ? "first layers"
                               : phase == "bounding partial splits" ? "partial splits"
                                                                    : "splits"};
    });
    const sim::PartitionResult result =
        sim::best_partition(experiment, limits, std::ref(bars));  // validates
    bars.finish();
    print_partition(experiment, sim::partition_layer_costs(experiment), result);
}

}  // namespace

void add_partition_command(CLI::App& app) {
    auto options = std::make_shared<PartitionOptions>();
    CLI::App* command = app.add_subcommand(
        "partition",
        "The split of a model's layers over the stages that gives the shortest simulated step, "
        "against the even split, as --split flags and a Megatron-LM layout");
    add_experiment_options(*command, options->experiment);
    add_count_option(*command, "--max-splits", options->max_splits,
                     "Splits the search may simulate before it stops with the best found "
                     "(default 64)",
                     1);
    command->callback([options] { run_partition(*options); });
}

}  // namespace pipelens::cli
