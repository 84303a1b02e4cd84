// `pipelens schedule`: generate a schedule (and optionally lower it) and print it as a table,
// PyTorch-compatible CSV, or JSON.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/output_file.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/experiment/units.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/schedule/schedule_table.hpp"

namespace pipelens::cli {
namespace {

struct ScheduleOptions {
    std::string kind;
    std::optional<int> pp;
    std::optional<int> v;
    std::optional<int> m;
    bool comms = false;
    bool fsdp = false;
    bool defer_recv = false;
    // ZeroBubbleAuto only: the times and memory limit it searches with.
    std::optional<std::string> forward, input, weight, communication, max_activations;
    std::string format = "table";
    std::string out;
};

std::string schedule_json(const Schedule& schedule) {
    nlohmann::ordered_json json;
    json["kind"] = schedule.name;
    json["pp"] = schedule.rank_count;
    json["v"] = schedule.stages_per_rank;
    json["m"] = schedule.microbatch_count;
    nlohmann::ordered_json mapping = nlohmann::ordered_json::object();
    for (int stage = 0; stage < schedule.stage_count; ++stage)
        mapping[std::to_string(stage)] = schedule.stage_to_rank[stage];
    json["stage_to_rank"] = std::move(mapping);
    nlohmann::ordered_json ranks = nlohmann::ordered_json::object();
    for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
        nlohmann::ordered_json actions = nlohmann::ordered_json::array();
        for (const Action& action : schedule.ranks[rank])
            actions.push_back(schedule.text(action));
        ranks[std::to_string(rank)] = std::move(actions);
    }
    json["ranks"] = std::move(ranks);
    return json_text(json) + "\n";
}

ZeroBubbleInputs zero_bubble_inputs(const ScheduleOptions& options, ScheduleKind kind) {
    const bool given = options.forward || options.input || options.weight ||
                       options.communication || options.max_activations;
    if (!given)
        return {};
    if (kind != ScheduleKind::zero_bubble_auto)
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens schedule: --f, --i, --w, --comm and "
                                         "--max-activations are what ZeroBubbleAuto searches "
                                         "with; {} takes none of them",
                                         schedule_kind_name(kind)));
    const auto duration = [](const std::optional<std::string>& text, const std::string& flag) {
        if (!text)
            return std::int64_t{1000};  // 1 us: a bare number given is in us too
        return parse_flag_text("pipelens schedule", flag, *text, parse_duration_ns);
    };
    ZeroBubbleInputs inputs;
    inputs.forward_ns = duration(options.forward, "f");
    inputs.input_ns = duration(options.input, "i");
    inputs.weight_ns = duration(options.weight, "w");
    inputs.communication_ns = options.communication ? duration(options.communication, "comm") : 0;
    if (options.max_activations)
        inputs.max_activations = parse_flag_text("pipelens schedule", "max-activations",
                                                 *options.max_activations, parse_activation_limit)
                                     .resolve(*options.pp);
    return inputs;
}

void run_schedule(const ScheduleOptions& options) {
    ScheduleShape shape;
    shape.kind = parse_schedule_kind(options.kind);
    shape.rank_count = *options.pp;
    shape.stages_per_rank = options.v.value_or(is_multi_stage(shape.kind) ? 2 : 1);
    shape.microbatch_count = *options.m;
    shape.zero_bubble = zero_bubble_inputs(options, shape.kind);
    check_schedule_fits(shape, available_memory_bytes());
    Schedule schedule = generate_schedule(shape);
    if (options.comms || options.fsdp || options.defer_recv) {
        LoweringOptions lowering;
        lowering.keep_fsdp_actions = options.fsdp;
        lowering.defer_receives = options.defer_recv;
        schedule = lower(std::move(schedule), lowering);
    }

    std::string text;
    if (options.format == "csv")
        text = format_schedule_csv(schedule);
    else if (options.format == "json")
        text = schedule_json(schedule);
    else
        text = format_schedule_table(schedule);

    if (options.out.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return;
    }
    write_output_file(options.out, text);
}

}  // namespace

void add_schedule_command(CLI::App& app) {
    auto options = std::make_shared<ScheduleOptions>();
    CLI::App* command = app.add_subcommand(
        "schedule", "Generate a pipeline schedule and print it (PyTorch action notation)");
    command
        ->add_option("--kind", options->kind,
                     "Schedule: GPipe, 1F1B, Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, "
                     "ZBVZeroBubble, DualPipeV, ZeroBubbleH2, ZeroBubbleAuto (case-insensitive, "
                     "'Schedule' prefix allowed)")
        ->required();
    add_count_option(*command, "--pp", options->pp, "Pipeline ranks", 1)->required();
    add_count_option(
        *command, "--v", options->v,
        "Stages per rank (default: 1 for GPipe, 1F1B, ZeroBubbleH2 and ZeroBubbleAuto, 2 for "
        "the others)",
        1);
    add_count_option(*command, "--m", options->m, "Microbatches", 1)->required();
    command->add_flag("--comms", options->comms, "Lower: add the SEND/RECV actions");
    command->add_flag("--fsdp", options->fsdp,
                      "Lower and keep the FSDP actions (UNSHARD, RESHARD, REDUCE_GRAD)");
    command->add_flag("--defer-recv", options->defer_recv,
                      "Lower with PyTorch's deferred receives (defer_pp_recv=True)");
    command->add_option("--f", options->forward,
                        "ZeroBubbleAuto: F time it searches with (us unless a unit; default 1us)");
    command->add_option("--i", options->input, "ZeroBubbleAuto: I (input-gradient) time");
    command->add_option("--w", options->weight, "ZeroBubbleAuto: W (weight-gradient) time");
    command->add_option("--comm", options->communication,
                        "ZeroBubbleAuto: time a boundary transfer takes (default 0)");
    command->add_option("--max-activations", options->max_activations,
                        "ZeroBubbleAuto: activations a stage may hold, in microbatches: a count "
                        "or a multiple of pp (p = ZB-1p, the default; 2p = ZB-2p)");
    command->add_option("--format", options->format, "Output format")
        ->transform(CLI::IsMember({"table", "csv", "json"}, CLI::ignore_case));
    command->add_option("--out", options->out, "Write to this file instead of standard output");
    command->callback([options] { run_schedule(*options); });
}

}  // namespace pipelens::cli
