// The collectives a 3D-parallel transformer step runs besides its pipeline transfers, priced
// by engine/sharding (the same blocks, redistribution rules and alpha-beta links `pipelens
// shard` shows), never by a second formula:
// - tensor parallel, per layer and microbatch: the Megatron attention and MLP blocks sharded
//   over a tp mesh; each ends Partial(sum), and its reduction (an all-reduce, or with sequence
//   parallelism a reduce-scatter plus the next block's all-gather, the same bytes) is paid in
//   the forward and again, mirrored, in the backward;
// - data parallel, per step: the gradients of one GPU's shard all-reduced over dp (with ZeRO-1
//   reduce-scattered, and the updated 16-bit weights all-gathered).
//
// Ranks are laid out as Megatron does: tp innermost, then dp, then pp (sim/rank_hosts.hpp), so a
// tp group shares a host only when tp divides the GPUs of one, and a dp group only when tp x dp
// does; otherwise some groups straddle two hosts, and the collectives are priced across hosts
// (the step waits for the groups that cross). `host_gpus` is the GPUs of one host as the layout
// sees them (rank_hosts.hpp's host_gpus).
#pragma once

#include <cstdint>

#include "engine/sharding/device_mesh.hpp"

namespace pipelens::sim {

struct TensorParallelLayerCost {
    std::int64_t forward_ns = 0;
    std::int64_t backward_ns = 0;
};

// One layer's tensor-parallel collectives for one microbatch of `microbatch_size` sequences;
// zero when tp = 1; across hosts when tp does not divide `host_gpus`. Throws
// std::invalid_argument when hidden or heads do not divide by tp.
// `dtype` is engine/sharding's element type name of the activations ("bf16", "f16", "f32").
TensorParallelLayerCost tensor_parallel_layer_cost(std::int64_t sequence, std::int64_t hidden,
                                                   std::int64_t heads, std::int64_t vocabulary,
                                                   std::int64_t microbatch_size, int tp,
                                                   int host_gpus, const sharding::MeshLinks& links,
                                                   const char* dtype = "bf16");

// The data-parallel gradient reduction of `parameters` (one GPU's shard) for one step; zero
// when dp = 1. Gradients are reduced in `gradient_element_bytes` each (fp32, 4, unless kept in
// the model's dtype); ZeRO-1 all-gathers the weights, of `weight_element_bytes` each (2 for
// 16-bit training). Across hosts the ring leaves each host through every NIC its group has:
// with tp < GPUs per host, host_gpus / tp of the group's GPUs share a host, each with its
// own link (`inter_host_gb_per_s` is per GPU), so the ring crosses hosts at that many times the
// per-GPU bandwidth, never above the intra-host link's (NCCL's rings over rail-optimised hosts);
// where groups straddle hosts unevenly, at the fewest of a crossing group's GPUs on one host.
std::int64_t data_parallel_reduce_ns(double parameters, int dp, int tp, int host_gpus, bool zero1,
                                     const sharding::MeshLinks& links, int weight_element_bytes = 2,
                                     int gradient_element_bytes = 4);

}  // namespace pipelens::sim
