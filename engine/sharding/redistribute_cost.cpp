// The cost walk of upstream's redistribute_cost (late 2025): the byte count starts as one
// shard's size and follows the collectives — an all-gather grows it by the mesh dim's size,
// a reduce-scatter shrinks it — so later mesh dims pay for what earlier ones produced.
#include "engine/sharding/redistribute_cost.hpp"

#include <limits>

namespace pipelens::sharding {
namespace {

double collective_cost(double bytes_gb, int hops, const MeshTopology& topology, int mesh_dim) {
    const int devices = topology.devices[mesh_dim];
    return kBaseCollectiveLatencyUs + hops * topology.latency_us[mesh_dim] +
           (bytes_gb * hops / devices) / topology.bandwidth_gb_per_s[mesh_dim] * 1e6;
}

}  // namespace

MeshTopology MeshTopology::of(const DeviceMesh& mesh) {
    MeshTopology topology;
    topology.bandwidth_gb_per_s.assign(mesh.ndim(), kIntraHostBandwidthGbPerS);
    topology.latency_us.assign(mesh.ndim(), kIntraHostLatencyUs);
    topology.devices.assign(mesh.ndim(), 1);
    long long inner = 1;
    for (int dim = mesh.ndim() - 1; dim >= 0; --dim) {
        topology.devices[dim] = mesh.size(dim);
        inner *= mesh.size(dim);
        if (inner > mesh.devices_per_host) {
            topology.bandwidth_gb_per_s[dim] *= kInterHostBandwidthFactor;
            topology.latency_us[dim] = kInterHostLatencyUs;
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

double redistribute_cost(const DTensorSpec& current, const DTensorSpec& target) {
    constexpr double infinity = std::numeric_limits<double>::infinity();
    if (!(current.mesh == target.mesh))
        return infinity;
    if (current.is_replicated())
        return 0;
    const MeshTopology topology = MeshTopology::of(current.mesh);
    double bytes_gb = static_cast<double>(current.tensor.byte_count()) / current.num_shards() /
                      (1024.0 * 1024.0 * 1024.0);
    double cost = 0;
    for (int dim = 0; dim < current.mesh.ndim(); ++dim) {
        const Placement& from = current.placements[dim];
        const Placement& to = target.placements[dim];
        if (from == to)
            continue;
        const int devices = topology.devices[dim];
        if (from.is_shard() && to.is_replicate()) {
            bytes_gb *= devices;
            cost += allgather_cost(bytes_gb, topology, dim);
        } else if (from.is_shard() && to.is_shard()) {
            cost += allgather_cost(bytes_gb, topology, dim) + kShardToShardPenaltyUs;
        } else if (from.is_partial() && to.is_replicate()) {
            cost += allreduce_cost(bytes_gb, topology, dim);
        } else if (from.is_partial() && to.is_shard()) {
            cost += reduce_scatter_cost(bytes_gb, topology, dim);
            bytes_gb /= devices;
        } else if (from.is_shard() && to.is_partial()) {
            return infinity;
        }
    }
    return cost;
}

}  // namespace pipelens::sharding
