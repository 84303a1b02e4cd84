// What moving a tensor from one spec to another costs, in microseconds, with upstream's
// alpha-beta model (torch/distributed/tensor/_collective_utils.py): per mesh dim a bandwidth
// and a latency — 87.7 GB/s and 0.6 us inside a host, 0.22 x that bandwidth and 2.7 us once
// the devices of that dim and the dims inside it no longer fit on one host — and per
// collective 6.6 us + hops x latency + (bytes x hops / n) / bandwidth. Mesh dims are walked
// outermost first; an impossible move (Shard to Partial, another mesh) costs infinity.
#pragma once

#include <vector>

#include "engine/sharding/dtensor_spec.hpp"

namespace pipelens::sharding {

struct MeshTopology {
    std::vector<double> bandwidth_gb_per_s;
    std::vector<double> latency_us;
    std::vector<int> devices;

    static MeshTopology of(const DeviceMesh& mesh);
};

inline constexpr double kBaseCollectiveLatencyUs = 6.6;
inline constexpr double kIntraHostBandwidthGbPerS = 87.7;
inline constexpr double kIntraHostLatencyUs = 0.6;
inline constexpr double kInterHostBandwidthFactor = 0.22;
inline constexpr double kInterHostLatencyUs = 2.7;
inline constexpr double kShardToShardPenaltyUs = 1.0;

// `bytes_gb`: bytes / 1024^3 as each device holds them before the collective.
double allgather_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim);
double allreduce_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim);
double reduce_scatter_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim);

// 0 when equal or when `current` is replicated; infinity across meshes or from Shard to
// Partial.
double redistribute_cost(const DTensorSpec& current, const DTensorSpec& target);

}  // namespace pipelens::sharding
