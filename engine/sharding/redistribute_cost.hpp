// What moving a tensor from one spec to another costs, in microseconds, with upstream's
// alpha-beta model (torch/distributed/tensor/_collective_utils.py): per mesh dim a bandwidth
// and a latency — the mesh's intra-host link, or its inter-host link once the devices of that
// dim and the dims inside it no longer fit on one host (MeshLinks; upstream's constants by
// default) — and per collective: collective latency + hops x latency + (bytes x hops / n) /
// bandwidth.
//
// The cost is that of the steps redistribution really runs, in its order (upstream's greedy
// planner in _redistribute.py): on a mesh of several dims a sharded source is first undone
// from the innermost mesh dim outwards — a Shard nested under a different outer sharding is
// gathered on the way — then every mesh dim still differing is set, outermost first. Each
// step sees the bytes the earlier ones left (a gather grows them, a reduce-scatter or a local
// split shrinks them). A step no collective can do costs infinity: Shard to Partial, one
// Partial kind to another (P(avg) to P(sum), a masked partial to a plain one); so does
// another mesh, and so does any move from or to a spec with a strided shard _S(d, f) unless the
// source is replicated (upstream main of 2026 returns infinity for those, having no plan).
#pragma once

#include <string>
#include <vector>

#include "engine/sharding/dtensor_spec.hpp"

namespace pipelens::sharding {

struct MeshTopology {
    std::vector<double> bandwidth_gb_per_s;
    std::vector<double> latency_us;
    std::vector<int> devices;
    double collective_latency_us = 0;

    static MeshTopology of(const DeviceMesh& mesh);
};

inline constexpr double kShardToShardPenaltyUs = 1.0;

// `bytes_gb`: bytes / 1024^3 as each device holds them before the collective.
double allgather_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim);
double allreduce_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim);
double reduce_scatter_cost(double bytes_gb, const MeshTopology& topology, int mesh_dim);

// One step of a redistribution: one mesh dim changes its placement.
struct RedistributeStep {
    int mesh_dim = 0;
    Placement from;
    Placement to;
};

// "mesh dim 1: S(0) -> R".
std::string to_string(const RedistributeStep& step);

// The steps that take `current` to `target`, in the order they run (both on one mesh). A 1-D
// mesh has exactly one step, which may change nothing.
std::vector<RedistributeStep> redistribute_steps(const DTensorSpec& current,
                                                 const DTensorSpec& target);

// 0 when the placements are equal or `current` is replicated; infinity across meshes, for a
// strided shard, or when a step cannot be done (see the top of this file).
double redistribute_cost(const DTensorSpec& current, const DTensorSpec& target);

// Why no redistribution takes `current` to `target` ("" when one does), for error messages:
// "another device mesh", "mesh dim 0: P(sum) -> P(avg): one Partial kind cannot become another",
// "S(0)R -> _S(0, 2)S(0): a move from or to a strided shard (_S) has no price (...)".
std::string impossible_redistribution(const DTensorSpec& current, const DTensorSpec& target);

}  // namespace pipelens::sharding
