// The redistribution plan and its cost walk (upstream since late 2025: redistribute_cost prices
// the steps of _gen_transform_infos, not the mesh dims 0..n-1). The order matters because the
// bytes a collective moves depend on what the earlier steps did: undoing S(0)S(0) to reach
// RS(0) gathers mesh dim 1 first and then mesh dim 0 with the whole tensor, which on a mesh
// whose dim 0 crosses hosts is the expensive part.
#include "engine/sharding/redistribute_cost.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace pipelens::sharding {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double collective_cost(double bytes_gb, int hops, const MeshTopology& topology, int mesh_dim) {
    const int devices = topology.devices[mesh_dim];
    return topology.collective_latency_us + hops * topology.latency_us[mesh_dim] +
           (bytes_gb * hops / devices) / topology.bandwidth_gb_per_s[mesh_dim] * 1e6;
}

// Whether the mesh dims before `mesh_dim` shard `tensor_dim` differently in the two placement
// lists: then a Shard(tensor_dim) on `mesh_dim` splits different pieces in each, and the
// planner must gather it before it can shard it again.
bool nested_sharding_differs(const std::vector<Placement>& current,
                             const std::vector<Placement>& target, int mesh_dim, int tensor_dim) {
    for (int dim = 0; dim < mesh_dim; ++dim)
        if (current[dim].is_shard(tensor_dim) != target[dim].is_shard(tensor_dim))
            return true;
    return false;
}

// Why one mesh dim cannot go from `from` to `to` ("" when it can): no collective turns a Shard
// into a pending reduction, and a pending reduction of one kind is not one of another (a sum of
// averages is not a sum).
std::string impossible_step(const Placement& from, const Placement& to) {
    if (from == to)
        return "";
    if (from.is_shard() && to.is_partial())
        return "a Shard cannot become a Partial";
    if (from.is_partial() && to.is_partial())
        return "one Partial kind cannot become another";
    return "";
}

// The cost of one step given the bytes each device holds before it; updates those bytes.
double step_cost(const RedistributeStep& step, const MeshTopology& topology, double& bytes_gb) {
    const Placement& from = step.from;
    const Placement& to = step.to;
    if (from == to)
        return 0;
    const int devices = topology.devices[step.mesh_dim];
    if (from.is_shard() && to.is_replicate()) {
        bytes_gb *= devices;
        return allgather_cost(bytes_gb, topology, step.mesh_dim);
    }
    if (from.is_shard() && to.is_shard())  // an all-to-all, priced as a gather plus a penalty
        return allgather_cost(bytes_gb, topology, step.mesh_dim) + kShardToShardPenaltyUs;
    if (from.is_partial() && to.is_replicate())
        return allreduce_cost(bytes_gb, topology, step.mesh_dim);
    if (from.is_partial() && to.is_shard()) {
        const double cost = reduce_scatter_cost(bytes_gb, topology, step.mesh_dim);
        bytes_gb /= devices;
        return cost;
    }
    if (!impossible_step(from, to).empty())
        return kInfinity;
    if (from.is_replicate() && to.is_shard())  // a local split: free, and later steps move less
        bytes_gb /= devices;
    return 0;
}

// Upstream main (2026) leaves a spec with a strided shard without a shard order and prices any
// move from or to one at infinity ("TODO: Support _StridedShard redistribution"); pipelens has
// no rule of its own to put in its place, so it does not price one either.
bool unpriced_strided_move(const DTensorSpec& current, const DTensorSpec& target) {
    return current.placements != target.placements &&
           (current.has_strided_shard() || target.has_strided_shard());
}

}  // namespace

MeshTopology MeshTopology::of(const DeviceMesh& mesh) {
    MeshTopology topology;
    topology.bandwidth_gb_per_s.assign(mesh.ndim(), mesh.links.intra_host_gb_per_s);
    topology.latency_us.assign(mesh.ndim(), mesh.links.intra_host_latency_us);
    topology.devices.assign(mesh.ndim(), 1);
    topology.collective_latency_us = mesh.links.collective_latency_us;
    long long inner = 1;
    for (int dim = mesh.ndim() - 1; dim >= 0; --dim) {
        topology.devices[dim] = mesh.size(dim);
        inner *= mesh.size(dim);
        if (inner > mesh.devices_per_host) {
            topology.bandwidth_gb_per_s[dim] = mesh.links.inter_host_gb_per_s;
            topology.latency_us[dim] = mesh.links.inter_host_latency_us;
        }
    }
    return topology;
}

double allgather_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim) {
    return collective_cost(bytes_gb, topology.devices[mesh_dim] - 1, topology, mesh_dim);
}

double allreduce_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim) {
    return collective_cost(bytes_gb, 2 * (topology.devices[mesh_dim] - 1), topology, mesh_dim);
}

double reduce_scatter_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim) {
    return collective_cost(bytes_gb, topology.devices[mesh_dim] - 1, topology, mesh_dim);
}

std::string to_string(const RedistributeStep& step) {
    return fmt::format("mesh dim {}: {} -> {}", step.mesh_dim, to_string(step.from),
                       to_string(step.to));
}

std::vector<RedistributeStep> redistribute_steps(const DTensorSpec& current,
                                                 const DTensorSpec& target) {
    const int ndim = current.mesh.ndim();
    if (ndim == 1)
        return {{0, current.placements[0], target.placements[0]}};
    std::vector<RedistributeStep> steps;
    std::vector<Placement> placements = current.placements;
    const auto move = [&](int mesh_dim, const Placement& to) {
        if (placements[mesh_dim] == to)
            return;
        steps.push_back({mesh_dim, placements[mesh_dim], to});
        placements[mesh_dim] = to;
    };
    // Innermost first: a target Shard whose outer mesh dims shard its tensor dim differently
    // from now cannot be reached in place, so that mesh dim is replicated on the way.
    if (current.num_shards() > 1)
        for (int mesh_dim = ndim - 1; mesh_dim >= 0; --mesh_dim) {
            const Placement& wanted = target.placements[mesh_dim];
            const bool nested =
                wanted.is_shard() &&
                nested_sharding_differs(placements, target.placements, mesh_dim, wanted.dim);
            move(mesh_dim, nested ? Placement::replicate() : wanted);
        }
    for (int mesh_dim = 0; mesh_dim < ndim; ++mesh_dim)
        move(mesh_dim, target.placements[mesh_dim]);
    return steps;
}

double redistribute_cost(const DTensorSpec& current, const DTensorSpec& target) {
    if (!(current.mesh == target.mesh))
        return kInfinity;
    if (current.is_replicated() || current.placements == target.placements)
        return 0;
    if (unpriced_strided_move(current, target))
        return kInfinity;
    const MeshTopology topology = MeshTopology::of(current.mesh);
    double bytes_gb = static_cast<double>(current.tensor.byte_count()) / current.num_shards() /
                      (1024.0 * 1024.0 * 1024.0);
    double cost = 0;
    for (const RedistributeStep& step : redistribute_steps(current, target)) {
        cost += step_cost(step, topology, bytes_gb);
        if (std::isinf(cost))
            return kInfinity;
    }
    return cost;
}

std::string impossible_redistribution(const DTensorSpec& current, const DTensorSpec& target) {
    if (!(current.mesh == target.mesh))
        return "another device mesh";
    if (current.is_replicated())
        return "";
    if (unpriced_strided_move(current, target))
        return fmt::format(
            "{} -> {}: a move from or to a strided shard (_S) has no price (upstream's "
            "redistribute_cost gives it infinity)",
            to_string(current.placements), to_string(target.placements));
    for (const RedistributeStep& step : redistribute_steps(current, target))
        if (const std::string why = impossible_step(step.from, step.to); !why.empty())
            return fmt::format("{}: {}", to_string(step), why);
    return "";
}

}  // namespace pipelens::sharding
