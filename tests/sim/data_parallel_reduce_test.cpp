// The planner's data-parallel reduction across hosts (sim/parallel_costs.hpp): a group with
// several GPUs in each host leaves it through each of their NICs, so its ring crosses hosts at
// that many times the per-GPU bandwidth, up to the intra-host link's. Compared with a group of
// one GPU per host (tp = 8 on 8-GPU hosts) on a per-GPU link that fast: the same collective.
#include <gtest/gtest.h>

#include "sim/parallel_costs.hpp"

namespace pipelens::sim {
namespace {

sharding::MeshLinks links_with(double inter_host_gb_per_s, double intra_host_gb_per_s = 450) {
    sharding::MeshLinks links;
    links.intra_host_gb_per_s = intra_host_gb_per_s;
    links.inter_host_gb_per_s = inter_host_gb_per_s;
    return links;
}

constexpr double kParameters = 1.5e9;

TEST(DataParallelReduce, AGroupLeavesEachHostThroughEveryOneOfItsGpusLinks) {
    // dp = 16 over two 8-GPU hosts: eight of the group's GPUs in each host, 8 x 50 GB/s.
    EXPECT_EQ(data_parallel_reduce_ns(kParameters, 16, 1, 8, false, links_with(50)),
              data_parallel_reduce_ns(kParameters, 16, 8, 8, false, links_with(400)));
    // tp = 2: four per host.
    EXPECT_EQ(data_parallel_reduce_ns(kParameters, 16, 2, 8, true, links_with(50)),
              data_parallel_reduce_ns(kParameters, 16, 8, 8, true, links_with(200)));
    // Never faster than the intra-host link carries the ring: 8 x 50 capped at 300 GB/s.
    EXPECT_EQ(data_parallel_reduce_ns(kParameters, 16, 1, 8, false, links_with(50, 300)),
              data_parallel_reduce_ns(kParameters, 16, 8, 8, false, links_with(300, 300)));
    // The per-GPU figure is what it was when one GPU per host takes part.
    const std::int64_t one_per_host =
        data_parallel_reduce_ns(kParameters, 16, 8, 8, false, links_with(50));
    EXPECT_GT(one_per_host,
              7 * data_parallel_reduce_ns(kParameters, 16, 1, 8, false, links_with(50)));
    // Inside one host the NICs play no part.
    EXPECT_EQ(data_parallel_reduce_ns(kParameters, 8, 1, 8, false, links_with(50)),
              data_parallel_reduce_ns(kParameters, 8, 1, 8, false, links_with(1)));
}

}  // namespace
}  // namespace pipelens::sim
