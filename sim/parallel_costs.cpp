// Tensor- and data-parallel collective costs from engine/sharding (parallel_costs.hpp).
#include "sim/parallel_costs.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "engine/sharding/redistribute_cost.hpp"
#include "engine/sharding/sharding_blocks.hpp"
#include "engine/sharding/strategy_utils.hpp"
#include "sim/cost_model.hpp"
#include "sim/rank_hosts.hpp"

namespace pipelens::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The sharding cost model divides bytes in GiB by bandwidths it calls GB/s, as upstream's does;
// plan's bandwidths are decimal GB/s, as its point-to-point links are, so they are handed over
// in GiB/s, and a collective moving N bytes over B GB/s takes N / (B x 10^9) s.
sharding::MeshLinks in_gib_per_s(sharding::MeshLinks links) {
    constexpr double kGiBPerGB = 1e9 / kGiB;
    links.intra_host_gb_per_s *= kGiBPerGB;
    links.inter_host_gb_per_s *= kGiBPerGB;
    return links;
}

// Rounded to the nearest; refused past the simulator's range (a bandwidth of 1e-300 GB/s).
std::int64_t microseconds_to_ns(double microseconds) {
    return ceil_ns(std::round(microseconds * 1000), "a collective");
}

// What a block costs on the tp mesh: the redistributions its ops asked for plus the reduction
// of its Partial(sum) output to Replicate.
double block_cost_us(const std::string& name, const sharding::DeviceMesh& mesh,
                     const sharding::BlockShape& shape) {
    double cost = 0;
    const auto decisions = sharding::propagate_block(name, mesh, shape);
    for (const auto& decision : decisions)
        for (const auto& move : decision.redistributions)
            cost += move.cost_us;
    const sharding::DTensorSpec out = decisions.back().chosen_spec().output();
    sharding::DTensorSpec replicated = out;
    replicated.placements.assign(out.placements.size(), sharding::Placement::replicate());
    return cost + sharding::redistribute_cost(out, replicated);
}

}  // namespace

TensorParallelLayerCost tensor_parallel_layer_cost(std::int64_t sequence, std::int64_t hidden,
                                                   std::int64_t heads, std::int64_t vocabulary,
                                                   std::int64_t microbatch_size, int tp,
                                                   int host_gpus, const sharding::MeshLinks& links,
                                                   const char* dtype) {
    if (tp <= 1)
        return {};
    if (hidden % tp != 0 || heads % tp != 0)
        throw std::invalid_argument(fmt::format(
            "tp {} must divide the hidden size ({}) and the heads ({})", tp, hidden, heads));
    sharding::DeviceMesh mesh = sharding::parse_device_mesh(fmt::format("tp={}", tp), "cuda",
                                                            block_devices_per_host(tp, host_gpus));
    mesh.links = in_gib_per_s(links);
    const sharding::BlockShape shape{microbatch_size, sequence, hidden, heads, vocabulary, dtype};
    const double per_pass_us =
        block_cost_us("attention", mesh, shape) + block_cost_us("mlp", mesh, shape);
    const std::int64_t per_pass = microseconds_to_ns(per_pass_us);
    return {per_pass, per_pass};
}

std::int64_t data_parallel_reduce_ns(double parameters, int dp, int tp, int host_gpus, bool zero1,
                                     const sharding::MeshLinks& links, int weight_element_bytes,
                                     int gradient_element_bytes) {
    if (dp <= 1)
        return 0;
    // dp outer, tp inner: the dp dim crosses hosts once a stage's tp x dp GPUs do not fit whole
    // in one.
    tp = std::max(tp, 1);
    sharding::DeviceMesh mesh = sharding::parse_device_mesh(
        fmt::format("dp={},tp={}", dp, tp), "cuda", block_devices_per_host(tp * dp, host_gpus));
    mesh.links = in_gib_per_s(links);
    mesh.links.inter_host_gb_per_s =
        std::min(mesh.links.intra_host_gb_per_s,
                 mesh.links.inter_host_gb_per_s * data_parallel_rails(dp, tp, host_gpus));
    const sharding::MeshTopology topology = sharding::MeshTopology::of(mesh);
    const double gradients_gb = parameters * gradient_element_bytes / kGiB;
    if (!zero1)
        return microseconds_to_ns(sharding::allreduce_cost(gradients_gb, topology, 0));
    const double weights_gb = parameters * weight_element_bytes / kGiB;
    return microseconds_to_ns(sharding::reduce_scatter_cost(gradients_gb, topology, 0) +
                              sharding::allgather_cost(weights_gb, topology, 0));
}

}  // namespace pipelens::sim
