// `pipelens shard`: DTensor-style sharding propagation from the command line.
//   pipelens shard 'aten.mm(f32[1024,512](S(1)), f32[512,256](S(0)))' --mesh 'tp=4' [--json]
//   pipelens shard --block mlp --mesh 'dp=2,tp=4' [--out TRACE.db] [--json]
//   pipelens shard --show 'f32[8,8](S(0)S(1))' --mesh 'dp=2,tp=2'
//   pipelens shard --einsum 'bmk,kn->bmn' --mesh 'dp=2,tp=2' [--linearity] [--json]
// --devices-per-host defaults by device type (1 for cpu, 8 otherwise), as upstream's cost model
// counts a host's devices.
// A malformed op, tensor, equation or mesh is a usage error (exit 2); an op that cannot be
// propagated (no strategy, mixed meshes, unshardable shapes, only impossible moves) exits 1
// with the op in schema form.
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/json_text.hpp"
#include "engine/run_record/sharding_record.hpp"
#include "engine/sharding/einsum_strategy.hpp"
#include "engine/sharding/op_text.hpp"
#include "engine/sharding/sharding_blocks.hpp"
#include "engine/sharding/sharding_visualize.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::cli {
namespace {

struct ShardOptions {
    std::string call;
    std::string block;
    std::string show;
    std::string einsum;
    bool linearity = false;
    std::string mesh = "tp=4";
    std::string device_type = "cuda";
    std::optional<int> devices_per_host;  // unset: the device type's default
    std::string out;
    bool json = false;
};

nlohmann::json decision_json(const sharding::ShardingDecision& decision) {
    return {{"op", sharding::to_string(decision.schema)},
            {"strategies", nlohmann::json::parse(sharding::strategies_json(decision))},
            {"chosen", decision.chosen},
            {"chosen_strategy", sharding::to_string(decision.chosen_spec())},
            {"redistributions", nlohmann::json::parse(sharding::redistributions_json(decision))}};
}

std::int64_t record(const ShardOptions& options, const sharding::DeviceMesh& mesh,
                    const std::vector<sharding::ShardingDecision>& decisions) {
    traces::TraceWriter writer(options.out);
    return run_record::record_sharding_run(
        writer, mesh, decisions,
        json_text(nlohmann::json{{"block", options.block.empty() ? "op" : options.block},
                                 {"mesh", sharding::to_string(mesh)},
                                 {"devices_per_host", mesh.devices_per_host}}));
}

std::string dims_text(const std::string& dims) {
    return dims.empty() ? "-" : fmt::format("{}", fmt::join(dims, ","));
}

// The strategies gen_einsum_strategies makes for an equation on the mesh, without tensors or
// costs, so upstream's strategy counts (test_op_strategy.py) can be checked from the shell.
void print_einsum(const ShardOptions& options, const sharding::DeviceMesh& mesh) {
    sharding::EinsumDims dims;
    std::vector<sharding::OpSpec> strategies;
    try {
        dims = sharding::parse_einsum(options.einsum);
        strategies = sharding::einsum_strategies(options.einsum, mesh, options.linearity);
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: --einsum: {}", error.what()));
    }
    if (options.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const sharding::OpSpec& spec : strategies)
            list.push_back(sharding::to_string(spec));
        fmt::print("{}\n", json_text(nlohmann::json{{"mesh", sharding::to_string(mesh)},
                                                    {"einsum", options.einsum},
                                                    {"linearity", options.linearity},
                                                    {"batch", dims.batch},
                                                    {"contracting", dims.contracting},
                                                    {"lhs_only", dims.lhs_only},
                                                    {"rhs_only", dims.rhs_only},
                                                    {"strategies", std::move(list)}}));
        return;
    }
    fmt::print("einsum {} on {}{}\n", options.einsum, sharding::to_string(mesh),
               options.linearity ? " (linearity)" : "");
    fmt::print("dims: batch {}, contracting {}, lhs only {}, rhs only {}\n", dims_text(dims.batch),
               dims_text(dims.contracting), dims_text(dims.lhs_only), dims_text(dims.rhs_only));
    fmt::print("{} strategies:\n", strategies.size());
    for (std::size_t index = 0; index < strategies.size(); ++index)
        fmt::print("  {:>3}  {}\n", index, sharding::to_string(strategies[index]));
}

// What each device holds of `spec`, for a program: its coordinate, upstream's local shape and
// global offset, and per tensor dim the runs of indices it holds. Any number of dims (the
// drawing takes two at most); as many devices as a drawing shows.
nlohmann::json layout_json(const sharding::DTensorSpec& spec) {
    if (spec.mesh.size() > sharding::kLargestDrawnMesh)
        throw std::invalid_argument(fmt::format("--show lists at most {} devices; {} has {}",
                                                sharding::kLargestDrawnMesh,
                                                sharding::to_string(spec.mesh), spec.mesh.size()));
    nlohmann::json devices = nlohmann::json::array();
    for (int device = 0; device < spec.mesh.size(); ++device) {
        const std::vector<int> coordinate = spec.mesh.coordinate_of(device);
        const sharding::LocalShard shard = sharding::local_shard(spec, coordinate);
        nlohmann::json indices = nlohmann::json::array();
        for (int dim = 0; dim < static_cast<int>(spec.tensor.shape.size()); ++dim) {
            nlohmann::json runs = nlohmann::json::array();
            for (const sharding::IndexRun& run : sharding::held_indices(spec, coordinate, dim))
                runs.push_back({run.begin, run.end});
            indices.push_back(std::move(runs));
        }
        devices.push_back({{"device", fmt::format("{}:{}", spec.mesh.device_type, device)},
                           {"coordinate", coordinate},
                           {"local_shape", shard.shape},
                           {"offset", shard.offset},
                           {"indices", std::move(indices)}});
    }
    return {{"spec", sharding::to_string(spec)},
            {"mesh", sharding::to_string(spec.mesh)},
            {"partial", spec.has_partial()},
            {"devices", std::move(devices)}};
}

void run_shard(const ShardOptions& options) {
    const int modes = !options.call.empty() + !options.block.empty() + !options.show.empty() +
                      !options.einsum.empty();
    if (modes != 1)
        throw CommandFailure(kExitUsage,
                             "pipelens shard: give one of an op call ('aten.mm(...)'), "
                             "--block NAME, --show TENSOR or --einsum EQUATION");
    if (options.linearity && options.einsum.empty())
        throw CommandFailure(kExitUsage, "pipelens shard: --linearity goes with --einsum");
    if ((!options.einsum.empty() || !options.show.empty()) && !options.out.empty())
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens shard: --out records op or block decisions; "
                                         "{} makes none",
                                         options.einsum.empty() ? "--show" : "--einsum"));
    sharding::DeviceMesh mesh;
    try {
        mesh = sharding::parse_device_mesh(
            options.mesh, options.device_type,
            options.devices_per_host.value_or(
                sharding::default_devices_per_host(options.device_type)));
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: {}", error.what()));
    }
    if (!options.show.empty()) {
        try {
            const sharding::DTensorSpec spec = sharding::parse_tensor_spec(options.show, mesh);
            if (options.json)
                fmt::print("{}\n", json_text(layout_json(spec)));
            else
                fmt::print("{}", sharding::visualize_sharding(spec));
        } catch (const std::invalid_argument& error) {
            throw CommandFailure(kExitUsage, fmt::format("pipelens: --show: {}", error.what()));
        }
        return;
    }
    if (!options.einsum.empty()) {
        print_einsum(options, mesh);
        return;
    }
    std::vector<sharding::ShardingDecision> decisions;
    try {
        if (!options.block.empty()) {
            decisions = sharding::propagate_block(options.block, mesh);
        } else {
            decisions.push_back(sharding::propagate(sharding::parse_op_call(options.call, mesh)));
        }
    } catch (const sharding::ShardingError& error) {
        throw CommandFailure(kExitCheckFailed, fmt::format("pipelens: {}", error.what()));
    } catch (const std::invalid_argument& error) {
        throw CommandFailure(kExitUsage, fmt::format("pipelens: {}", error.what()));
    }
    std::optional<std::int64_t> run_id;
    if (!options.out.empty())
        run_id = record(options, mesh, decisions);
    if (options.json) {
        nlohmann::json json = {{"mesh", sharding::to_string(mesh)}};
        nlohmann::json list = nlohmann::json::array();
        for (const auto& decision : decisions)
            list.push_back(decision_json(decision));
        json["decisions"] = std::move(list);
        if (run_id)
            json["run_id"] = *run_id;
        fmt::print("{}\n", json_text(json));
        return;
    }
    for (std::size_t index = 0; index < decisions.size(); ++index)
        fmt::print("{}{}", index > 0 ? "\n" : "", sharding::format_decision(decisions[index]));
    if (run_id)
        fmt::print("recorded as run {} in {}\n", *run_id, options.out);
}

}  // namespace

void add_shard_command(CLI::App& app) {
    auto options = std::make_shared<ShardOptions>();
    CLI::App* command = app.add_subcommand(
        "shard", "Propagate DTensor-style sharding through an op or a block; draw a layout");
    command->add_option("call", options->call,
                        "Op call, e.g. 'aten.mm(f32[1024,512](S(1)), f32[512,256](S(0)))'");
    command->add_option("--block", options->block,
                        "Propagate a whole block: mlp, attention, embedding");
    command->add_option(
        "--show", options->show,
        "Draw which device holds which part of a tensor, e.g. 'f32[8,8](S(0)S(1))'");
    command->add_option("--einsum", options->einsum,
                        "List the strategies of an einsum equation, e.g. 'bmk,kn->bmn'");
    command->add_flag("--linearity", options->linearity,
                      "With --einsum: also the all-Partial choice of a linear op");
    command->add_option("--mesh", options->mesh, "Device mesh, e.g. 'dp=2,tp=4' (default tp=4)");
    command->add_option("--device-type", options->device_type, "Device type (default cuda)");
    command->add_option("--devices-per-host", options->devices_per_host,
                        "Devices per host: mesh dims beyond it pay inter-host costs (default 8; 1 "
                        "with --device-type cpu, as upstream counts one cpu device per host)");
    command->add_option("--out", options->out, "Trace file to record the decisions in");
    command->add_flag("--json", options->json, "Print JSON");
    command->callback([options] { run_shard(*options); });
}

}  // namespace pipelens::cli
