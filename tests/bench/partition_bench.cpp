// Benchmark: `pipelens partition` of 128 layers over 64 stages, exactly (branch and bound, every
// surviving split simulated). The layers are a transformer's (the Zero Bubble paper's FLOPs for
// h = 4096, s = 4096 at 400 TFLOP/s) behind an embedding-sized first layer, with the output
// layer and loss on the last stage, so the even split is not the best. Target: under one second.
// 1F1B is proven optimal (the chain bounds close it after two simulated splits); for
// Interleaved1F1B the bounds stay below the step at partial splits and the search stops at its
// limits (PartitionLimits) with the best found and a lower bound.
//
//   build/tests/pipelens_bench_partition --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include "sim/partition.hpp"
#include "sim/transformer_flops.hpp"

namespace {

using namespace pipelens;

Experiment model_of_128_layers(const std::string& kind, int pp, int v, int m) {
    Experiment experiment = plain_experiment();
    experiment.forward_ns = experiment.input_ns = experiment.weight_ns = {};
    TransformerSpec spec;
    spec.layers = 128;
    spec.hidden = 4096;
    spec.sequence = 4096;
    spec.heads = 32;
    spec.device_tflops = 400;
    experiment.transformer = spec;
    LayerCosts costs = sim::partition_layer_costs(experiment);
    costs.forward_ns[0] /= 4;  // the embedding's lookup is cheaper than a layer
    costs.input_ns[0] = 0;
    costs.weight_ns[0] /= 4;
    costs.backward_ns[0] = costs.weight_ns[0];
    costs.loss.forward_ns = 2 * costs.forward_ns[1];  // output layer over the vocabulary
    costs.loss.backward_ns = 4 * costs.forward_ns[1];
    experiment.transformer.reset();
    experiment.layers = costs;
    experiment.shape.kind = parse_schedule_kind(kind);
    experiment.shape.rank_count = pp;
    experiment.shape.stages_per_rank = v;
    experiment.shape.microbatch_count = m;
    experiment.intra_host = experiment.inter_host = {8'000, 150.0};
    return experiment;
}

// range(0): 0 = 1F1B pp=64 m=64; 1 = Interleaved1F1B pp=32 v=2 m=64.
void partition_128_layers_over_64_stages(benchmark::State& state) {
    const Experiment experiment = state.range(0) == 0
                                      ? model_of_128_layers("1F1B", 64, 1, 64)
                                      : model_of_128_layers("Interleaved1F1B", 32, 2, 64);
    sim::PartitionResult result;
    for (auto _ : state)
        benchmark::DoNotOptimize(result = sim::best_partition(experiment));
    state.counters["splits_simulated"] = static_cast<double>(result.splits_simulated);
    state.counters["nodes"] = static_cast<double>(result.nodes);
    state.counters["proven"] = result.proven_optimal ? 1 : 0;
    state.counters["gap_percent"] = 100.0 *
                                    static_cast<double>(result.step_ns - result.lower_bound_ns) /
                                    static_cast<double>(result.step_ns);
    state.counters["gain_percent"] = 100.0 *
                                     static_cast<double>(result.even_step_ns - result.step_ns) /
                                     static_cast<double>(result.even_step_ns);
}
BENCHMARK(partition_128_layers_over_64_stages)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
