// The plan tests' common inputs: a small GPT, a cluster of one A100-like host shape with the
// arithmetic rate and HBM bandwidth each test chooses, and options with nothing switched on, so
// each test's expected values follow from what it sets itself.
#pragma once

#include "sim/training_plan.hpp"

namespace pipelens::sim::testing {

// 8 layers, hidden 1024, 16 heads, sequence 512, vocabulary 1000; global batch 16.
inline ModelSpec small_model() {
    return {{8, 1024, 16, 512, 1000}, 16};
}

// `gpus` GPUs, 8 per host, 80 GiB each, `peak_tflops` at `achieved_fraction`, HBM at
// `memory_gb_per_s` (0: memory-bound work unpriced); links as ClusterSpec's defaults.
inline ClusterSpec cluster_of(int gpus, double memory_gb_per_s, double peak_tflops = 312,
                              double achieved_fraction = 0.5) {
    ClusterSpec cluster;
    cluster.gpus = gpus;
    cluster.gpus_per_host = 8;
    cluster.memory_per_gpu_bytes = 80LL << 30;
    cluster.peak_tflops = peak_tflops;
    cluster.achieved_fraction = achieved_fraction;
    cluster.memory_gb_per_s = memory_gb_per_s;
    return cluster;
}

// No recompute, no sequence parallelism, no ZeRO-1.
inline PlanOptions plain_options() {
    PlanOptions options;
    options.recompute = Recompute::none;
    options.sequence_parallel = false;
    options.zero1 = false;
    options.attention = Attention::unfused;  // the score tensor priced, as these tests count it
    return options;
}

}  // namespace pipelens::sim::testing
