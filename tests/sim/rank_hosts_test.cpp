// Megatron-LM's rank order on hosts (sim/rank_hosts.hpp) as the planner prices it: a tp group, a
// stage's tp x dp block (its data-parallel groups) and a pipeline boundary stay inside a host only
// when they fit whole in one; otherwise the groups that straddle two hosts are priced across
// them, exactly as a host too small for the group prices it.
#include <gtest/gtest.h>

#include "sim/parallel_costs.hpp"
#include "sim/rank_hosts.hpp"
#include "sim/training_plan.hpp"

namespace pipelens::sim {
namespace {

sharding::MeshLinks links_with(double inter_host_gb_per_s) {
    sharding::MeshLinks links;
    links.intra_host_gb_per_s = 450;
    links.inter_host_gb_per_s = inter_host_gb_per_s;
    return links;
}

constexpr double kParameters = 1.5e9;

TEST(RankHosts, ABlockStaysInAHostOnlyWhenItsSizeDividesTheHosts) {
    EXPECT_FALSE(block_crosses_hosts(1, 8));
    EXPECT_FALSE(block_crosses_hosts(4, 8));
    EXPECT_FALSE(block_crosses_hosts(8, 8));
    EXPECT_TRUE(block_crosses_hosts(6, 8));  // GPUs 6-11
    EXPECT_TRUE(block_crosses_hosts(3, 8));  // GPUs 6-8
    EXPECT_TRUE(block_crosses_hosts(16, 8));
    // A cluster smaller than a host is one host of its GPUs: tp = 6 of 6 GPUs stays in it.
    EXPECT_EQ(host_gpus(6, 8), 6);
    EXPECT_FALSE(block_crosses_hosts(6, host_gpus(6, 8)));
}

TEST(RankHosts, ATensorParallelGroupStraddlingHostsIsPricedAcrossThem) {
    // tp = 6 on 8-GPU hosts: GPUs 6-11 are one group over two hosts. Priced as on 4-GPU hosts,
    // where every group crosses, not as on 6-GPU hosts, where none does.
    const sharding::MeshLinks links = links_with(50);
    const auto cost = [&](int host) {
        return tensor_parallel_layer_cost(2048, 3072, 24, 51200, 1, 6, host, links);
    };
    EXPECT_EQ(cost(8).forward_ns, cost(4).forward_ns);
    EXPECT_EQ(cost(8).backward_ns, cost(4).backward_ns);
    EXPECT_GT(cost(8).forward_ns, 5 * cost(6).forward_ns);
    // The planner's step likewise: tp = 6, dp = 8 on 48 GPUs.
    const ModelSpec model{{2, 3072, 24, 2048, 51200}, 16};
    ClusterSpec cluster;
    cluster.gpus = 48;
    cluster.memory_per_gpu_bytes = 80LL << 30;
    cluster.peak_tflops = 312;
    cluster.achieved_fraction = 0.5;
    cluster.links = links;
    const auto tp_time = [&](int gpus_per_host) {
        cluster.gpus_per_host = gpus_per_host;
        return evaluate_layout({6, 1, 8, ScheduleKind::one_f_one_b, 1, 1, 2}, model, cluster,
                               PlanOptions{})
            .breakdown.tensor_parallel_ns;
    };
    EXPECT_EQ(tp_time(8), tp_time(4));
    EXPECT_GT(tp_time(8), 5 * tp_time(6));
}

TEST(RankHosts, ADataParallelGroupStraddlingHostsCrossesThroughItsFewestNics) {
    // tp = 2, dp = 3 on 8-GPU hosts: a stage's GPUs 6-11 straddle two hosts, and its group 6, 8,
    // 10 leaves host 0 through GPU 6 alone: one NIC, as a group of one GPU per host (tp = 8).
    EXPECT_EQ(data_parallel_rails(3, 2, 8), 1);
    EXPECT_EQ(data_parallel_reduce_ns(kParameters, 3, 2, 8, false, links_with(50)),
              data_parallel_reduce_ns(kParameters, 3, 8, 8, false, links_with(50)));
    // tp = 2, dp = 6: GPUs 0-11 hold the groups 0, 2, 4, 6 | 8, 10 and 1, 3, 5, 7 | 9, 11: two
    // NICs out of host 1, not the four a group spread over whole hosts would have.
    EXPECT_EQ(data_parallel_rails(6, 2, 8), 2);
    EXPECT_EQ(data_parallel_reduce_ns(kParameters, 6, 2, 8, false, links_with(50)),
              data_parallel_reduce_ns(kParameters, 6, 8, 8, false, links_with(100)));
    // Over whole hosts every host holds host / tp of each group.
    EXPECT_EQ(data_parallel_rails(16, 2, 8), 4);
    EXPECT_EQ(data_parallel_rails(8, 6, 8), 1);
}

TEST(RankHosts, PipelineStagesStraddlingHostsCrossThemAtEveryBoundary) {
    EXPECT_EQ(pipeline_ranks_per_host(4, 8), 2);
    EXPECT_EQ(pipeline_ranks_per_host(16, 8), 1);
    // Stages of three GPUs: 6-8 straddles two hosts and 6 -> 9 crosses, though two stages of
    // three fit in a host; which boundaries cross follows no per-host count.
    EXPECT_EQ(pipeline_ranks_per_host(3, 8), 1);
    ClusterSpec cluster;
    cluster.gpus = 24;
    cluster.gpus_per_host = 8;
    EXPECT_EQ(pipeline_ranks_per_host({1, 8, 3, ScheduleKind::one_f_one_b, 1, 1, 8}, cluster), 1);
    cluster.gpus = 4;  // one host of four GPUs
    EXPECT_EQ(pipeline_ranks_per_host({1, 4, 1, ScheduleKind::one_f_one_b, 1, 1, 8}, cluster), 4);
}

}  // namespace
}  // namespace pipelens::sim
