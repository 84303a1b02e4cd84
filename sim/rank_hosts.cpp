// Megatron-LM's rank order on hosts (rank_hosts.hpp).
#include "sim/rank_hosts.hpp"

#include <algorithm>
#include <numeric>

namespace pipelens::sim {
namespace {

// The fewest members of one group on any host it spans, or `dp` when it stays in one: the
// group's members `tp` apart from `first`, in ascending ranks, so each host's are consecutive.
int fewest_on_a_host(long long first, int dp, int tp, int host_gpus) {
    int fewest = dp;
    int run = 0;
    long long host = first / host_gpus;
    for (int member = 0; member < dp; ++member) {
        const long long at = (first + static_cast<long long>(member) * tp) / host_gpus;
        if (at != host) {
            fewest = std::min(fewest, run);
            run = 0;
            host = at;
        }
        ++run;
    }
    return host == first / host_gpus ? dp : std::min(fewest, run);
}

}  // namespace

int host_gpus(int gpus, int gpus_per_host) {
    return gpus > 0 ? std::min(gpus, gpus_per_host) : gpus_per_host;
}

bool block_crosses_hosts(int ranks, int host_gpus) {
    return ranks > 1 && host_gpus % ranks != 0;
}

int block_devices_per_host(int ranks, int host_gpus) {
    return block_crosses_hosts(ranks, host_gpus) ? 1 : host_gpus;
}

int data_parallel_rails(int dp, int tp, int host_gpus) {
    if (host_gpus % tp == 0 && (static_cast<long long>(tp) * dp) % host_gpus == 0)
        return std::max(1, std::min(dp, host_gpus / tp));
    // The placement repeats every lcm(block, host) ranks: the groups in that span are all kinds.
    const long long block = static_cast<long long>(tp) * dp;
    const long long period = std::lcm(block, static_cast<long long>(host_gpus));
    int fewest = dp;
    for (long long start = 0; start < period && fewest > 1; start += block)
        for (int offset = 0; offset < tp && fewest > 1; ++offset)
            fewest = std::min(fewest, fewest_on_a_host(start + offset, dp, tp, host_gpus));
    return std::max(1, fewest);
}

int pipeline_ranks_per_host(int stage_gpus, int host_gpus) {
    return host_gpus % stage_gpus == 0 ? host_gpus / stage_gpus : 1;
}

}  // namespace pipelens::sim
