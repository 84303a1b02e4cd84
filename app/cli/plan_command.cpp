// `pipelens plan`: which tensor x pipeline x data parallel layout, schedule and microbatching
// to train a transformer with on a cluster (sim/training_plan.hpp does the work). Prints the
// top layouts with a breakdown, or all of them as JSON, each with its layer split as a
// Megatron-LM layout string; --out records the best one (pipeline simulated, the
// tensor-parallel blocks' sharding decisions) so the viewer shows it. --layout pins the split
// (and pp, v); otherwise each layout's best uneven split is searched unless --even-split.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/ci_gates.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/plan_gemm_rates.hpp"
#include "app/cli/progress_bar.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/experiment/flag_file.hpp"
#include "engine/experiment/units.hpp"
#include "engine/run_record/sharding_record.hpp"
#include "engine/sharding/sharding_blocks.hpp"
#include "engine/stage_plan/megatron_layout.hpp"
#include "engine/text/shortened.hpp"
#include "sim/experiment_simulation.hpp"
#include "sim/partition.hpp"
#include "sim/plan_split.hpp"
#include "sim/rank_hosts.hpp"
#include "sim/training_plan.hpp"
#include "traces/text/quantities.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::cli {
namespace {

struct PlanFlags {
    std::string file;  // TOML [model], [cluster], [plan]: values for flags not given
    sim::ModelSpec model;
    sim::ClusterSpec cluster;
    sim::PlanOptions options;
    // Quantities with units, parsed after CLI11 so errors name the flag.
    std::string gpu_memory = "80GB";
    std::string intra_bandwidth = "450GB/s", intra_latency = "1us";
    std::string inter_bandwidth = "50GB/s", inter_latency = "5us";
    std::string collective_latency = "6.6us";
    std::string intra_collective_bandwidth = "0";  // 0: the intra-host link's
    std::string hbm_bandwidth =
        "3.35TB/s";  // H100 SXM, as the other defaults; 0 leaves it unpriced
    std::string dtype = "bf16";
    std::string recompute = "none";
    std::string attention = "flash";
    std::string gemm_rates;    // a CSV of measured GEMM rates (plan_gemm_rates.hpp)
    bool gemm_shapes = false;  // print the shapes to measure instead of planning
    std::optional<std::string> schedule;
    std::optional<std::string> layout;  // a Megatron-LM --pipeline-model-parallel-layout
    bool even_split = false;
    bool sequence_parallel = false, zero1 = false, no_overlap = false;
    int top = 10;
    bool json = false;
    std::string out;
    GateOptions gates;
    // The flags whose values came from it, each with where: "job.toml:2:10: model.layers".
    std::map<std::string, std::string> file_flags;
    std::set<std::string> unset_flags;  // the model and cluster sizes nothing gave
};

// The model and cluster sizes with no default: the command line or the file must give each.
constexpr std::array<std::pair<const char*, const char*>, 6> kRequiredSizes{{
    {"layers", "model"},
    {"hidden", "model"},
    {"heads", "model"},
    {"sequence", "model"},
    {"global-batch", "model"},
    {"gpus", "cluster"},
}};

// Who an error about `flag` names: where in the file the value came from, when it did (its line,
// column and key), beside the flag.
std::string source_of(const PlanFlags& flags, const std::string& flag) {
    const auto from_file = flags.file_flags.find(flag);
    return from_file != flags.file_flags.end() ? "pipelens plan: " + from_file->second
                                               : "pipelens plan";
}

void apply_units(PlanFlags& flags) {
    flags.cluster.memory_per_gpu_bytes =
        parse_flag_text(source_of(flags, "gpu-memory"), "gpu-memory", flags.gpu_memory,
                        [](const std::string& t) { return parse_byte_count(t); });
    const auto bandwidth = [](const std::string& t) { return parse_bandwidth_bytes_per_ns(t); };
    const auto latency_us = [](const std::string& t) { return parse_duration_ns(t) / 1000.0; };
    flags.cluster.links.intra_host_gb_per_s =
        parse_flag_text(source_of(flags, "intra-host-bandwidth"), "intra-host-bandwidth",
                        flags.intra_bandwidth, bandwidth);
    flags.cluster.links.inter_host_gb_per_s =
        parse_flag_text(source_of(flags, "inter-host-bandwidth"), "inter-host-bandwidth",
                        flags.inter_bandwidth, bandwidth);
    flags.cluster.links.intra_host_latency_us =
        parse_flag_text(source_of(flags, "intra-host-latency"), "intra-host-latency",
                        flags.intra_latency, latency_us);
    flags.cluster.links.inter_host_latency_us =
        parse_flag_text(source_of(flags, "inter-host-latency"), "inter-host-latency",
                        flags.inter_latency, latency_us);
    flags.cluster.links.collective_latency_us =
        parse_flag_text(source_of(flags, "collective-latency"), "collective-latency",
                        flags.collective_latency, latency_us);
    flags.cluster.intra_host_collective_gb_per_s =
        flags.intra_collective_bandwidth == "0"
            ? 0
            : parse_flag_text(source_of(flags, "intra-host-collective-bandwidth"),
                              "intra-host-collective-bandwidth", flags.intra_collective_bandwidth,
                              bandwidth);
    flags.cluster.memory_gb_per_s =
        flags.hbm_bandwidth == "0"
            ? 0
            : parse_flag_text(source_of(flags, "hbm-bandwidth"), "hbm-bandwidth",
                              flags.hbm_bandwidth, bandwidth);
    flags.options.dtype = parse_flag_text(source_of(flags, "dtype"), "dtype", flags.dtype,
                                          [](const std::string& t) { return sim::parse_dtype(t); });
    const std::map<std::string, sim::Recompute> recompute{{"none", sim::Recompute::none},
                                                          {"selective", sim::Recompute::selective},
                                                          {"full", sim::Recompute::full}};
    if (!recompute.contains(flags.recompute))
        throw CommandFailure(
            kExitUsage, fmt::format("pipelens plan: --recompute {}: use none, selective or full",
                                    flags.recompute));
    flags.options.recompute = recompute.at(flags.recompute);
    if (!flags.gemm_rates.empty())
        flags.cluster.gemm_rates = read_gemm_rates(flags.gemm_rates);
    if (flags.attention != "flash" && flags.attention != "unfused")
        throw CommandFailure(
            kExitUsage,
            fmt::format("pipelens plan: --attention {}: use flash or unfused", flags.attention));
    flags.options.attention =
        flags.attention == "flash" ? sim::Attention::flash : sim::Attention::unfused;
    if (flags.options.attention_matmul_memory && flags.options.attention == sim::Attention::flash)
        throw CommandFailure(kExitUsage,
                             "pipelens plan: --attention-matmul-memory prices unfused attention's "
                             "score tensor, which fused attention never writes; give --attention "
                             "unfused with it");
    flags.options.sequence_parallel = flags.sequence_parallel;
    flags.options.zero1 = flags.zero1;
    flags.options.overlap_gradient_reduce = !flags.no_overlap;
    flags.options.uneven_splits = !flags.even_split;
    flags.options.uneven_split_top = static_cast<std::size_t>(std::max(flags.top, 0));
    if (flags.layout) {
        try {
            flags.options.pins.layers_per_stage = runtime::parse_megatron_layout(*flags.layout);
        } catch (const runtime::LayoutError& error) {
            // The column says where; a layout too long to read on one line is shown by its start.
            throw CommandFailure(kExitUsage,
                                 fmt::format("pipelens plan: --layout \"{}\": {}",
                                             shortened(*flags.layout, 80), error.what()));
        }
    }
    if (flags.schedule)
        flags.options.pins.schedule = parse_flag_text(
            source_of(flags, "schedule"), "schedule", *flags.schedule, [](const std::string& t) {
                const ScheduleKind kind = parse_schedule_kind(t);
                if (kind == ScheduleKind::zero_bubble_auto)
                    throw std::invalid_argument(
                        "ZeroBubbleAuto searches its order with one time per "
                        "stage, and the plan's stages differ (embedding, loss); "
                        "plan with ZeroBubbleH2 or InterleavedZeroBubble, or "
                        "simulate ZeroBubbleAuto with `pipelens simulate`");
                return kind;
            });
}

// The file's values, for the flags the command line did not give.
void apply_file(CLI::App& command, PlanFlags& flags) {
    const std::string& file = flags.file;
    // Switches are TOML booleans (CLI11 would take any number for a flag), counts integers.
    using enum FlagKind;
    const FlagFileKeys allowed{{"model",
                                {{"layers", integer},
                                 {"hidden", integer},
                                 {"heads", integer},
                                 {"sequence", integer},
                                 {"vocabulary", integer},
                                 {"global_batch", integer}}},
                               {"cluster",
                                {{"gpus", integer},
                                 {"gpus_per_host", integer},
                                 {"gpu_memory", quantity},
                                 {"peak_tflops", number},
                                 {"achieved_fraction", quantity},
                                 {"intra_host_bandwidth", quantity},
                                 {"intra_host_latency", quantity},
                                 {"inter_host_bandwidth", quantity},
                                 {"inter_host_latency", quantity},
                                 {"collective_latency", quantity},
                                 {"hbm_bandwidth", quantity},
                                 {"gemm_rates", text}}},
                               {"plan",
                                {{"recompute", text},
                                 {"attention", text},
                                 {"sequence_parallel", boolean},
                                 {"zero1", boolean},
                                 {"no_overlap_grad_reduce", boolean},
                                 {"overlap_efficiency", quantity},
                                 {"tp", integer},
                                 {"pp", integer},
                                 {"dp", integer},
                                 {"schedule", text},
                                 {"v", integer},
                                 {"microbatch_size", integer},
                                 {"m", integer},
                                 {"top", integer},
                                 {"dtype", text},
                                 {"layout", text},
                                 {"even_split", boolean}}}};
    std::vector<FlagValue> values;
    try {
        values = read_flag_file(file, allowed);
    } catch (const ExperimentError& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens plan: {}", error.what()));
    }
    for (FlagValue& value : values) {
        CLI::Option* option = command.get_option("--" + value.flag);
        if (option->count() > 0)
            continue;
        // A file named in the plan file is where its author sees it: beside the plan file, not
        // wherever the command happens to run.
        if (value.flag == "gemm-rates" && !value.text.empty() &&
            std::filesystem::path(value.text).is_relative())
            value.text = (std::filesystem::path(file).parent_path() / value.text).string();
        flags.file_flags[value.flag] = value.where;
        option->add_result(value.text);
        try {
            option->run_callback();
        } catch (const CLI::Error&) {
            throw CommandFailure(kExitUsage,
                                 fmt::format("pipelens plan: {}: {} is not a valid value for --{}",
                                             value.where, value.text, value.flag));
        } catch (const ExperimentError& error) {  // the flag's own reading names why
            throw CommandFailure(kExitUsage,
                                 fmt::format("pipelens plan: {}: {}", value.where, error.what()));
        }
    }
}

// The largest model size taken (as `partition` and experiment files take).
constexpr std::int64_t kMostModelSize = 1'000'000'000;

void check_sizes(const PlanFlags& flags) {
    for (const auto& [flag, table] : kRequiredSizes) {
        if (!flags.unset_flags.contains(flag))
            continue;
        std::string key = flag;
        std::replace(key.begin(), key.end(), '-', '_');
        throw CommandFailure(
            kExitUsage,
            flags.file.empty()
                ? fmt::format("pipelens plan: --{} is required (or give a plan file whose [{}] "
                              "sets {})",
                              flag, table, key)
                : fmt::format("pipelens plan: {}: [{}] has no {}, and --{} is not given: set one",
                              flags.file, table, key, flag));
    }
    const auto& shape = flags.model.shape;
    const auto& cluster = flags.cluster;
    const std::pair<const char*, double> required[] = {
        {"layers", static_cast<double>(shape.layers)},
        {"hidden", static_cast<double>(shape.hidden)},
        {"heads", static_cast<double>(shape.heads)},
        {"sequence", static_cast<double>(shape.sequence)},
        {"vocabulary", static_cast<double>(shape.vocabulary)},
        {"global-batch", static_cast<double>(flags.model.global_batch)},
        {"gpus", static_cast<double>(cluster.gpus)},
        {"gpus-per-host", static_cast<double>(cluster.gpus_per_host)},
        {"gpu-memory", static_cast<double>(cluster.memory_per_gpu_bytes)},
        {"peak-tflops", cluster.peak_tflops},
        {"achieved-fraction", cluster.achieved_fraction},
        // A link of no bandwidth makes every transfer take forever (and the step wrap round).
        {"intra-host-bandwidth", cluster.links.intra_host_gb_per_s},
        {"inter-host-bandwidth", cluster.links.inter_host_gb_per_s}};
    for (const auto& [flag, value] : required)
        if (!(value > 0) || !std::isfinite(value))
            throw CommandFailure(kExitUsage, fmt::format("{}: --{} must be a positive number",
                                                         source_of(flags, flag), flag));
    // Past these the per-stage layer counts (int) wrapped and the model priced was another one:
    // --layers 4294967320 planned 24 layers and reported 3.5e10 TFLOP/s. (A global batch too
    // large is refused with the schedule it would make, below.)
    const std::pair<const char*, std::int64_t> bounded[] = {{"layers", shape.layers},
                                                            {"hidden", shape.hidden},
                                                            {"heads", shape.heads},
                                                            {"sequence", shape.sequence},
                                                            {"vocabulary", shape.vocabulary}};
    for (const auto& [flag, value] : bounded)
        if (value > kMostModelSize)  // int64's largest: what a longer number was read as
            throw CommandFailure(
                kExitUsage,
                fmt::format("{}: --{} {}is out of range (at most {})", source_of(flags, flag), flag,
                            value == std::numeric_limits<std::int64_t>::max()
                                ? std::string()
                                : std::to_string(value) + " ",
                            kMostModelSize));
    if (!flags.even_split && shape.layers > static_cast<std::int64_t>(sim::kMaxPartitionLayers))
        throw CommandFailure(
            kExitTooLarge,
            fmt::format("{}: --layers {}: the uneven split search prices every run of consecutive "
                        "layers as a stage, for at most {} layers; give --even-split",
                        source_of(flags, "layers"), shape.layers, sim::kMaxPartitionLayers));
    if (flags.top < 1)
        throw CommandFailure(kExitUsage, fmt::format("{}: --top must be at least 1, got {}",
                                                     source_of(flags, "top"), flags.top));
    // A pin of 0 divided the search by zero; a negative one pinned nothing.
    const std::pair<const char*, std::optional<int>> pins[] = {
        {"tp", flags.options.pins.tp},
        {"pp", flags.options.pins.pp},
        {"dp", flags.options.pins.dp},
        {"v", flags.options.pins.v},
        {"microbatch-size", flags.options.pins.microbatch_size},
        {"m", flags.options.pins.m}};
    for (const auto& [flag, pin] : pins)
        if (pin && *pin < 1)
            throw CommandFailure(
                kExitUsage, fmt::format("pipelens plan: --{} {} pins nothing: give 1 or more, or "
                                        "leave it out to search it",
                                        flag, *pin));
    if (cluster.streaming_multiprocessors < 0)
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens plan: --streaming-multiprocessors {} is not a "
                                         "count (0 leaves wave quantization unpriced)",
                                         cluster.streaming_multiprocessors));
    // Attention splits the hidden size into equal heads.
    if (shape.hidden % shape.heads != 0)
        throw CommandFailure(
            kExitUsage, fmt::format("pipelens plan: --hidden {} does not split into --heads {} "
                                    "equal heads (give a hidden size that --heads divides)",
                                    shape.hidden, shape.heads));
}

std::string layout_text(const sim::PlanLayout& layout) {
    return fmt::format("tp={} pp={} dp={} {} v={} mb={} m={}", layout.tp, layout.pp, layout.dp,
                       schedule_kind_name(layout.schedule), layout.v, layout.microbatch_size,
                       layout.m);
}

// The result's layers per stage as Megatron-LM's --pipeline-model-parallel-layout.
std::string split_text(const sim::PlanResult& result, const sim::ModelSpec& model) {
    return runtime::megatron_layout(
        sim::stage_layer_counts(result.layout, model.shape, result.layers_per_stage));
}

nlohmann::json result_json(const sim::PlanResult& result, const sim::ModelSpec& model,
                           std::int64_t memory_per_gpu) {
    const auto& l = result.layout;
    const auto& b = result.breakdown;
    return {{"tp", l.tp},
            {"pp", l.pp},
            {"dp", l.dp},
            {"schedule", std::string(schedule_kind_name(l.schedule))},
            {"v", l.v},
            {"microbatch_size", l.microbatch_size},
            {"m", l.m},
            {"layout", split_text(result, model)},
            {"step_time_s", static_cast<double>(result.step_time_ns) * 1e-9},
            {"even_split_step_time_s", static_cast<double>(result.even_step_time_ns) * 1e-9},
            {"tflops_per_gpu", result.tflops_per_gpu},
            {"bubble_ratio", result.pipeline_bubble_ratio},
            {"memory_per_gpu_bytes", result.memory_per_gpu_bytes},
            {"fits", result.fits},
            {"over_memory_bytes",
             std::max<std::int64_t>(0, result.memory_per_gpu_bytes - memory_per_gpu)},
            {"breakdown",
             {{"compute_s", static_cast<double>(b.compute_ns) * 1e-9},
              {"tensor_parallel_s", static_cast<double>(b.tensor_parallel_ns) * 1e-9},
              {"pipeline_bubble_s", static_cast<double>(b.bubble_ns) * 1e-9},
              {"data_parallel_s", static_cast<double>(b.data_parallel_ns) * 1e-9},
              {"memory_bound_s", static_cast<double>(b.memory_bound_ns) * 1e-9},
              {"eager_passes_s", static_cast<double>(b.eager_passes_ns) * 1e-9},
              {"attention_memory_s", static_cast<double>(b.attention_memory_ns) * 1e-9},
              {"wave_quantization_s", static_cast<double>(b.wave_quantization_ns) * 1e-9},
              {"pipeline_transfer_s", static_cast<double>(b.pipeline_transfer_ns) * 1e-9},
              {"embedding_reduce_s", static_cast<double>(b.embedding_reduce_ns) * 1e-9},
              {"embedding_and_output_s", static_cast<double>(b.embedding_and_output_ns) * 1e-9},
              {"gradient_accumulation_s", static_cast<double>(b.gradient_accumulation_ns) * 1e-9},
              {"optimizer_s", static_cast<double>(b.optimizer_ns) * 1e-9},
              {"output_matmul_s", static_cast<double>(b.output_matmul_ns) * 1e-9},
              {"weights_and_optimizer_bytes", b.weight_bytes},
              {"activation_bytes", b.activation_bytes}}}};
}

// The best layout's step, one line per kind of work, once memory-bound work is priced.
void print_best_breakdown(const sim::PlanResult& best) {
    const auto& b = best.breakdown;
    const std::pair<const char*, std::int64_t> lines[] = {
        {"matrix multiplies", b.compute_ns},
        {"  of which the output layer", b.output_matmul_ns},
        {"GEMM wave quantization", b.wave_quantization_ns},
        {"memory-bound layer work", b.memory_bound_ns},
        {"eager element-wise passes", b.eager_passes_ns},
        {"attention matmuls' memory", b.attention_memory_ns},
        {"embedding and output layer", b.embedding_and_output_ns},
        {"gradient accumulation", b.gradient_accumulation_ns},
        {"tensor-parallel collectives", b.tensor_parallel_ns},
        {"blocking pipeline transfers", b.pipeline_transfer_ns},
        {"pipeline bubble", b.bubble_ns},
        {"data-parallel reduction", b.data_parallel_ns},
        {"embedding gradient reduction", b.embedding_reduce_ns},
        {"optimizer step", b.optimizer_ns}};
    fmt::print("best layout's step, on its busiest rank:\n");
    for (const auto& [name, ns] : lines)
        fmt::print("  {:<30} {:>11}\n", name, format_duration(ns));
}

// The listed layouts whose uneven split beat the even one, with both steps.
void print_uneven_splits(const std::vector<sim::PlanResult>& results, const PlanFlags& flags) {
    for (std::size_t index = 0;
         index < results.size() && index < static_cast<std::size_t>(flags.top); ++index) {
        const auto& r = results[index];
        if (r.step_time_ns == r.even_step_time_ns)
            continue;
        fmt::print(
            "#{} splits its layers unevenly: {} against {} for the even split {} ({:.1f}% "
            "faster)\n",
            index + 1, format_duration(r.step_time_ns), format_duration(r.even_step_time_ns),
            runtime::megatron_layout(sim::stage_layer_counts(r.layout, flags.model.shape)),
            100.0 * static_cast<double>(r.even_step_time_ns - r.step_time_ns) /
                static_cast<double>(r.even_step_time_ns));
    }
}

void print_table(const std::vector<sim::PlanResult>& results, const PlanFlags& flags) {
    fmt::print("{} layouts of {} GPUs; {} fit in {} per GPU\n", results.size(), flags.cluster.gpus,
               std::count_if(results.begin(), results.end(), [](const auto& r) { return r.fits; }),
               format_bytes(flags.cluster.memory_per_gpu_bytes));
    fmt::print("{:>3}  {:<46} {:>11} {:>8} {:>11}  {:>10} {:>10} {:>10} {:>10}  {}\n", "#",
               "layout", "step", "TFLOP/s", "memory", "compute", "tp comm", "bubble", "dp comm",
               "split (Megatron-LM layout)");
    for (std::size_t index = 0;
         index < results.size() && index < static_cast<std::size_t>(flags.top); ++index) {
        const auto& r = results[index];
        // Over memory: by how much, where the layout's own need would say less.
        const std::string memory =
            r.fits
                ? format_bytes(r.memory_per_gpu_bytes)
                : "+" + format_bytes(r.memory_per_gpu_bytes - flags.cluster.memory_per_gpu_bytes);
        fmt::print("{:>3}  {:<46} {:>11} {:>8.1f} {:>11}  {:>10} {:>10} {:>10} {:>10}  {}\n",
                   index + 1, layout_text(r.layout), format_duration(r.step_time_ns),
                   r.tflops_per_gpu, memory, format_duration(r.breakdown.compute_ns),
                   format_duration(r.breakdown.tensor_parallel_ns),
                   format_duration(r.breakdown.bubble_ns),
                   format_duration(r.breakdown.data_parallel_ns), split_text(r, flags.model));
    }
    print_uneven_splits(results, flags);
    fmt::print(
        "step = compute + tp comm + bubble + dp comm{}, on the busiest rank: compute is the "
        "arithmetic alone, tp and dp comm what no overlap hid\n",
        flags.cluster.memory_gb_per_s > 0 ? " + memory-bound work + optimizer" : "");
    if (!results.empty() && flags.cluster.memory_gb_per_s > 0)
        print_best_breakdown(results.front());
    if (!results.empty() && !results.front().fits)
        fmt::print("no layout fits: the smallest needs {} per GPU, {} over\n",
                   format_bytes(results.front().memory_per_gpu_bytes),
                   format_bytes(results.front().memory_per_gpu_bytes -
                                flags.cluster.memory_per_gpu_bytes));
}

// The best layout as a simulated run and, with tp > 1, its tensor-parallel blocks' sharding
// decisions as a second run beside it (as `pipelens shard --out` records them).
std::int64_t record_best(const PlanFlags& flags, const sim::PlanResult& best) {
    const sim::PlanLayout& layout = best.layout;
    const sim::CostModel costs = sim::plan_cost_model(layout, flags.model, flags.cluster,
                                                      flags.options, best.layers_per_stage);
    const std::int64_t run_id =
        *sim::simulate_shape(
             {layout.schedule, layout.pp, layout.v, layout.m}, costs,
             json_text(result_json(best, flags.model, flags.cluster.memory_per_gpu_bytes)),
             flags.out)
             .run_id;
    if (layout.tp > 1) {
        traces::TraceWriter writer(flags.out);
        // Priced as the plan priced it: across hosts where tp groups straddle them.
        const int host = sim::host_gpus(flags.cluster.gpus, flags.cluster.gpus_per_host);
        sharding::DeviceMesh mesh = sharding::parse_device_mesh(
            fmt::format("tp={}", layout.tp), "cuda", sim::block_devices_per_host(layout.tp, host));
        mesh.links = flags.cluster.links;
        const auto& shape = flags.model.shape;
        const sharding::BlockShape block{
            layout.microbatch_size, shape.sequence,
            shape.hidden,           shape.heads,
            shape.vocabulary,       sim::sharding_dtype(flags.options.dtype)};
        std::vector<sharding::ShardingDecision> decisions;
        for (const char* name : {"attention", "mlp"})
            for (auto& decision : sharding::propagate_block(name, mesh, block))
                decisions.push_back(std::move(decision));
        run_record::record_sharding_run(
            writer, mesh, decisions,
            json_text(nlohmann::json{{"plan", layout_text(layout)},
                                     {"blocks", {"attention", "mlp"}},
                                     {"mesh", sharding::to_string(mesh)}}));
    }
    return run_id;
}

void run_plan(PlanFlags flags) {
    apply_units(flags);
    check_sizes(flags);
    const GateLimits limits = gate_limits(flags.gates);
    if (flags.gemm_shapes && (limits.any() || !flags.gates.junit.empty()))
        throw CommandFailure(kExitUsage,
                             "pipelens plan: --gemm-shapes prints the shapes to measure and plans "
                             "nothing, so there is no step for a gate or --junit to check");
    if (!flags.out.empty())  // before the search runs, not after
        traces::check_trace_destination(flags.out);
    std::vector<sim::PlanResult> results;
    try {
        if (flags.gemm_shapes) {
            print_gemm_shapes(flags.model, flags.cluster, flags.options);
            return;
        }
        // A bar per phase, on a terminal only, once the phase has run long enough to read one.
        PhaseBars bars([](std::string_view phase) {
            return PhaseBars::Unit{"layouts",
                                   phase == sim::kUnevenSplitPhase ? sim::kSearchShares : 1};
        });
        results = sim::plan_training(flags.model, flags.cluster, flags.options, std::ref(bars));
    } catch (const sim::PlanError& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens plan: {}", error.what()));
    } catch (const sim::GemmRateError& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens plan: {}", error.what()));
    } catch (const std::overflow_error& error) {
        // The plan's costs come from the model: name the sizes they were computed from.
        const auto& shape = flags.model.shape;
        throw CommandFailure(
            kExitTooLarge,
            fmt::format("pipelens plan: {}; here the costs come from the model: --layers {} "
                        "--hidden {} --sequence {} --vocabulary {} --global-batch {} (a size in "
                        "the wrong unit?) on {} GPUs at {} TFLOP/s",
                        error.what(), shape.layers, shape.hidden, shape.sequence, shape.vocabulary,
                        flags.model.global_batch, flags.cluster.gpus, flags.cluster.peak_tflops));
    }
    if (flags.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& result : results)
            list.push_back(result_json(result, flags.model, flags.cluster.memory_per_gpu_bytes));
        fmt::print("{}\n", json_text(list));
    } else {
        print_table(results, flags);
    }
    const sim::PlanResult& best = results.front();
    if (!flags.out.empty()) {
        const std::int64_t run_id = record_best(flags, best);
        if (!flags.json)
            fmt::print("recorded {} as run {} in {}\n", layout_text(best.layout), run_id,
                       flags.out);
    }
    if (limits.any() || !flags.gates.junit.empty()) {
        const GateFigures figures{layout_text(best.layout), best.step_time_ns,
                                  best.pipeline_bubble_ratio, best.memory_per_gpu_bytes, -1};
        enforce_gates(flags.gates, "pipelens plan", {{figures, check_gates(limits, figures)}});
    }
}

// The flags of the model, the cluster and the search, each group as [model], [cluster] and
// [plan] of the file name them.
void add_model_flags(CLI::App* command, PlanFlags& flags) {
    command->add_option("--layers", flags.model.shape.layers, "Transformer layers");
    command->add_option("--hidden", flags.model.shape.hidden, "Hidden size");
    command->add_option("--heads", flags.model.shape.heads, "Attention heads");
    command->add_option("--sequence", flags.model.shape.sequence, "Sequence length");
    command->add_option("--vocabulary", flags.model.shape.vocabulary, "Vocabulary (default 51200)");
    command->add_option("--global-batch", flags.model.global_batch, "Sequences per step");
}

void add_cluster_flags(CLI::App* command, PlanFlags& flags) {
    command->add_option("--gpus", flags.cluster.gpus, "GPUs");
    command->add_option("--gpus-per-host", flags.cluster.gpus_per_host,
                        "GPUs per host (default 8)");
    command->add_option("--gpu-memory", flags.gpu_memory, "Memory per GPU (default 80GB)");
    command->add_option("--peak-tflops", flags.cluster.peak_tflops,
                        "Dense 16-bit peak per GPU (default 989, H100 SXM)");
    add_ratio_option(*command, "--achieved-fraction", flags.cluster.achieved_fraction,
                     "Share of peak large matrix multiplies reach (default 0.7, or 70%)");
    command->add_option("--intra-host-bandwidth", flags.intra_bandwidth,
                        "Per GPU (default 450GB/s)");
    command->add_option("--intra-host-latency", flags.intra_latency, "Default 1us");
    command->add_option("--inter-host-bandwidth", flags.inter_bandwidth,
                        "Per GPU (default 50GB/s)");
    command->add_option("--inter-host-latency", flags.inter_latency, "Default 5us");
    command->add_option("--streaming-multiprocessors", flags.cluster.streaming_multiprocessors,
                        "SMs per GPU: prices the wave quantization of the layers' GEMMs "
                        "(256 x 128 tiles; default 0: not priced)");
    command->add_option("--intra-host-collective-bandwidth", flags.intra_collective_bandwidth,
                        "NCCL's achieved bus bandwidth inside a host, for the tensor-parallel "
                        "collectives (default 0: the intra-host bandwidth)");
    command->add_option("--collective-latency", flags.collective_latency,
                        "Fixed cost of each collective (default 6.6us, upstream DTensor's)");
    command->add_option("--hbm-bandwidth", flags.hbm_bandwidth,
                        "GPU memory bandwidth for memory-bound work and the optimizer, e.g. "
                        "3.35TB/s (default 3.35TB/s, H100 SXM; 0: not priced)");
    command->add_option("--gemm-rates", flags.gemm_rates,
                        "CSV m,n,k,tflops of measured GEMM rates: each layer and logits GEMM "
                        "runs at its own rate, not peak x achieved fraction");
    command->add_flag("--gemm-shapes", flags.gemm_shapes,
                      "Print the GEMM shapes (CSV m,n,k) the plan prices, to measure for "
                      "--gemm-rates, and stop");
}

void add_search_flags(CLI::App* command, PlanFlags& flags) {
    command->add_option("--recompute", flags.recompute, "none, selective or full (default none)");
    command->add_option(
        "--attention", flags.attention,
        "flash: fused attention that never writes the s x s scores (FlashAttention, "
        "PyTorch SDPA); unfused: softmax and dropout over the whole score tensor "
        "(default flash)");
    command->add_option("--dtype", flags.dtype,
                        "fp32 (TF32 peak, half the 16-bit one), bf16 or fp16 (default bf16)");
    command->add_flag("--sequence-parallel", flags.sequence_parallel,
                      "Megatron sequence parallelism");
    command->add_flag("--zero1", flags.zero1, "Optimizer state split over data parallel (ZeRO-1)");
    command->add_flag("--no-overlap-grad-reduce", flags.no_overlap,
                      "Reduce gradients after the pipeline, not during the last backward");
    command->add_flag("--blocking-p2p", flags.options.blocking_pipeline_transfers,
                      "Pipeline transfers stall the GPU, split over tp and all-gathered "
                      "(Megatron-LM 2021)");
    command->add_flag("--embedding-grad-reduce", flags.options.embedding_gradient_reduce,
                      "All-reduce the word embedding's gradient between the first and last stage");
    command->add_flag("--attention-matmul-memory", flags.options.attention_matmul_memory,
                      "Attention's batched matmuls move the score tensor at HBM bandwidth "
                      "(unfused attention)");
    command->add_flag("--grads-in-dtype", flags.options.gradients_in_dtype,
                      "Accumulate and all-reduce gradients in --dtype, not fp32");
    command->add_flag("--eager-layer-passes", flags.options.eager_layer_passes,
                      "Price an eager PyTorch 1.8 layer's extra element-wise passes: bias adds and "
                      "bias-gradient sums of their own, the layer norms' second read, unfused "
                      "attention's layout copies (Megatron-LM 2021)");
    add_ratio_option(*command, "--overlap-efficiency", flags.options.overlap_efficiency,
                     "DualPipeV's OVERLAP_F_B: the share of one part's tensor-parallel "
                     "collectives hidden behind the other's arithmetic, 0 to 1 (default 0)");
    command->add_option("--tp", flags.options.pins.tp, "Pin tensor parallel size");
    command->add_option("--pp", flags.options.pins.pp, "Pin pipeline parallel size");
    command->add_option("--dp", flags.options.pins.dp, "Pin data parallel size");
    command->add_option("--schedule", flags.schedule, "Pin the schedule kind");
    command->add_option("--v", flags.options.pins.v, "Pin stages per rank");
    command->add_option("--microbatch-size", flags.options.pins.microbatch_size,
                        "Pin the microbatch size");
    command->add_option("--m", flags.options.pins.m, "Pin the microbatch count");
    command->add_option(
        "--layout", flags.layout,
        "Pin the layers per stage as a Megatron-LM layout, e.g. \"Et*3|t*3|t*3|t*2L\" "
        "(pins pp, and v when it has more stages than --pp)");
    command->add_flag("--even-split", flags.even_split,
                      "Split layers evenly only; by default each layout's best uneven split is "
                      "searched too");
}

}  // namespace

void add_plan_command(CLI::App& app) {
    auto flags = std::make_shared<PlanFlags>();
    flags->cluster.gpus_per_host = 8;
    flags->cluster.peak_tflops = 989;  // H100 SXM dense BF16 (data sheet)
    flags->cluster.achieved_fraction = 0.7;
    flags->model.shape.vocabulary = 51200;
    CLI::App* command = app.add_subcommand(
        "plan",
        "Search tensor x pipeline x data parallel layouts, schedules and microbatching for a "
        "transformer on a cluster");
    command
        ->add_option("file", flags->file,
                     "TOML file with [model], [cluster] and [plan] (flags override it)")
        ->check(input_file("plan", {traces::FileKind::plan_toml, traces::FileKind::experiment_toml},
                           "a plan (TOML)"));
    add_model_flags(command, *flags);
    add_cluster_flags(command, *flags);
    add_search_flags(command, *flags);
    command->add_option("--top", flags->top, "Layouts to print (default 10)");
    command->add_flag("--json", flags->json, "Print every layout as JSON");
    command->add_option("--out", flags->out, "Record the best layout in this trace file");
    add_gate_options(*command, flags->gates);
    command->callback([flags, command] {
        if (!flags->file.empty())
            apply_file(*command, *flags);
        for (const auto& [flag, table] : kRequiredSizes)
            if (command->get_option(std::string("--") + flag)->count() == 0)
                flags->unset_flags.insert(flag);
        run_with_junit_report(flags->gates, "pipelens plan", {flags->file, flags->gemm_rates},
                              {{"--out", flags->out}}, [&] { run_plan(*flags); });
    });
}

}  // namespace pipelens::cli
