// Where Megatron-LM's rank order puts a 3D-parallel layout's groups on hosts: rank = (pp rank x
// dp + dp rank) x tp + tp rank, each host holding `host_gpus` consecutive ranks. A tp group is tp
// consecutive ranks and a pipeline stage's tp x dp ranks are consecutive too, so such a block
// stays inside one host only when its size divides the host's GPUs (tp = 6 on 8-GPU hosts puts
// GPUs 6-11 in one group, across two hosts). A step waits for every group, so where some groups
// straddle hosts it is bounded by those: their collectives are priced across hosts.
//
// Invariants: a cluster of one host (GPUs no more than a host holds) never crosses; a block whose
// size divides the host's GPUs never does; any other block of more than one rank does.
#pragma once

namespace pipelens::sim {

// The GPUs of one host as a layout of `gpus` sees them: a cluster smaller than a host is one
// host of its GPUs.
int host_gpus(int gpus, int gpus_per_host);

// Whether some block of `ranks` consecutive ranks spans two hosts of `host_gpus` each.
bool block_crosses_hosts(int ranks, int host_gpus);

// The devices per host to give a sharding mesh of one such block (engine/sharding prices a mesh
// dim across hosts when the devices within it outnumber those of a host): the host's GPUs when
// the block fits in one, else 1, which prices its collectives as a block larger than a host.
int block_devices_per_host(int ranks, int host_gpus);

// The fewest GPUs of one data-parallel group (dp GPUs tp apart, in blocks of tp x dp) that share
// a host, among the groups that span hosts: the NICs its ring leaves that host through. With tp
// dividing the host's GPUs and tp x dp filling whole hosts, every host holds host_gpus / tp of
// each group; a group straddling hosts unevenly may leave one through fewer. At least 1.
int data_parallel_rails(int dp, int tp, int host_gpus);

// Pipeline ranks per host: neighbouring stages are tp x dp GPUs apart, so a host holds
// host_gpus / (tp x dp) of them when that divides evenly. Otherwise stages straddle hosts and
// which boundaries cross follows no per-host count: 1, every boundary priced across hosts.
int pipeline_ranks_per_host(int stage_gpus, int host_gpus);

}  // namespace pipelens::sim
