// The planner (training_plan.hpp): layouts enumerated from the divisors of the GPU count, each
// priced by building the cost model a real step of it would have and simulating it.
#include "sim/training_plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/run_record/parallel_for.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/cost_model.hpp"
#include "sim/gemm_waves.hpp"
#include "sim/parallel_costs.hpp"
#include "sim/partition.hpp"
#include "sim/plan_split.hpp"
#include "sim/rank_hosts.hpp"
#include "sim/simulator.hpp"

namespace pipelens::sim {
namespace {

// One layer's work per microbatch on one GPU, in FLOPs: the Zero Bubble split (F, I, W) over tp,
// with what recompute repeats charged to I. Fused attention computes Q K^T again in its backward
// (2 s^2 b h, FlashAttention's fifth matrix multiply), so selective recompute repeats nothing.
struct LayerWork {
    double forward = 0, input = 0, weight = 0;
};

// `linear`: the four linear GEMMs' FLOPs per pass as charged at the achieved rate (their
// measured rates'); without it their FLOPs, 24 s b h^2 / tp each pass.
LayerWork layer_work(const GptShape& shape, int microbatch_size, int tp, Recompute recompute,
                     Attention attention, const std::optional<PassFlops>& linear) {
    const double s = static_cast<double>(shape.sequence), h = static_cast<double>(shape.hidden);
    const double sbh = s * microbatch_size * h;
    const PassFlops gemms =
        linear.value_or(PassFlops{sbh * 24 * h / tp, sbh * 24 * h / tp, sbh * 24 * h / tp});
    LayerWork work{gemms.forward + sbh * 4 * s / tp, gemms.input + sbh * 8 * s / tp, gemms.weight};
    if (attention == Attention::flash)
        work.input += sbh * 2 * s / tp;
    if (recompute == Recompute::full)
        work.input += work.forward;
    else if (recompute == Recompute::selective && attention == Attention::unfused)
        work.input += sbh * 4 * s / tp;
    return work;
}

// Rounded up: a step never takes less than its FLOPs at the achieved rate, so the TFLOP/s it
// reports never exceed that rate. Past the simulator's range it is refused with its magnitude.
std::int64_t arithmetic_ns(double flops, double flops_per_ns) {
    return ceil_quotient_ns(flops, flops_per_ns, "a stage's arithmetic");
}

Link link_of(double gb_per_s, double latency_us) {
    return {std::llround(latency_us * 1000), gb_per_s};
}

// The GPUs of one host as the layout sees them (rank_hosts.hpp).
int layout_host_gpus(const ClusterSpec& cluster) {
    return host_gpus(cluster.gpus, cluster.gpus_per_host);
}

// One GPU's share of the word embedding (split over tp by vocabulary).
double word_embedding_parameters(const GptShape& shape, int tp) {
    return static_cast<double>(shape.vocabulary) * static_cast<double>(shape.hidden) / tp;
}

// One GPU's parameters in one stage, as Megatron-LM holds them: its layers, the first stage's
// word and position embeddings, the last stage's final layer norm and copy of the word embedding
// (the output layer; one tensor with the embedding in a single stage). Tensor parallelism splits
// what its parallel layers hold (a layer's 12h^2 weights, its QKV and first MLP biases, the word
// embedding's vocabulary); every tp rank keeps a whole copy of the rest (the output-projection
// and second MLP biases and two layer norms, 6h a layer; the position embedding; the final norm).
double stage_parameters(const GptShape& shape, std::int64_t layers, int tp, bool first, bool last) {
    const double h = static_cast<double>(shape.hidden);
    const double replicated_per_layer = 6 * h;
    const double layer = (gpt_layer_parameter_count(shape.hidden) - replicated_per_layer) / tp +
                         replicated_per_layer;
    double parameters = static_cast<double>(layers) * layer;
    if (first)
        parameters +=
            word_embedding_parameters(shape, tp) + static_cast<double>(shape.sequence) * h;
    if (last)
        parameters += 2 * h + (first ? 0 : word_embedding_parameters(shape, tp));
    return parameters;
}

// One stage's work per microbatch by kind, each pass (F, I, W) in whole nanoseconds, so a
// rank's step splits into them exactly. `matmul` includes the output layer's (`output_matmul`).
struct StageWork {
    struct Passes {
        std::int64_t forward = 0, input = 0, weight = 0;
        std::int64_t total() const { return forward + input + weight; }
    };
    Passes matmul, output_matmul, memory_bound, edges, accumulation, tensor_parallel;
    Passes attention_memory, pipeline_transfer, waves, eager_passes;
};

// What the layers' linear GEMMs take beyond their FLOPs at the achieved rate once their tiles
// run in waves (gemm_waves.hpp): forward, input gradient (and the recomputed forward's under
// full recompute), weight gradient.
StageWork::Passes wave_quantization(std::int64_t layers, const PlanLayout& layout,
                                    const ModelSpec& model, const ClusterSpec& cluster,
                                    const PlanOptions& options, double flops_per_ns) {
    const LayerGemmWaves waves = layer_gemm_waves(model.shape, layout.microbatch_size, layout.tp,
                                                  cluster.streaming_multiprocessors);
    const auto extra = [&](double quantized, double flops) {
        return arithmetic_ns(quantized, flops_per_ns) - arithmetic_ns(flops, flops_per_ns);
    };
    const std::int64_t forward = extra(waves.forward_quantized, waves.forward_flops);
    std::int64_t input = extra(waves.input_quantized, waves.input_flops);
    if (options.recompute == Recompute::full)
        input += forward;
    return {layers * forward, layers * input,
            layers * extra(waves.weight_quantized, waves.weight_flops)};
}

// The links as collectives inside a host see them: at NCCL's achieved bus bandwidth where given.
sharding::MeshLinks collective_links_of(const ClusterSpec& cluster) {
    sharding::MeshLinks links = cluster.links;
    if (cluster.intra_host_collective_gb_per_s > 0)
        links.intra_host_gb_per_s = cluster.intra_host_collective_gb_per_s;
    return links;
}

// The activation crossing a stage boundary per microbatch, whole (one tp rank's copy).
std::int64_t boundary_bytes(const PlanLayout& layout, const ModelSpec& model,
                            const PlanOptions& options) {
    const GptShape& shape = model.shape;
    const double elements = static_cast<double>(shape.sequence) *
                            static_cast<double>(layout.microbatch_size) *
                            static_cast<double>(shape.hidden);
    return rounded_bytes(
        elements * dtype_element_bytes(options.dtype) / (options.sequence_parallel ? layout.tp : 1),
        "a stage's output");
}

// Where a stage sits: whether it holds the embedding (first) or the output layer (last), and
// whether its rank's link to the next stage's and to the previous stage's leaves the host.
struct StagePlace {
    bool first = false, last = false;
    bool next_across_hosts = false, previous_across_hosts = false;
};

// Each stage's place, its rank from `stage_to_rank`, on hosts of pipeline_ranks_per_host ranks:
// the same hosts the simulator's transfers cross (CostModel::transfer_ns).
std::vector<StagePlace> stage_places(const PlanLayout& layout, const ClusterSpec& cluster,
                                     const std::vector<int>& stage_to_rank) {
    const int per_host = pipeline_ranks_per_host(layout, cluster);
    const auto host = [&](std::size_t stage) { return stage_to_rank.at(stage) / per_host; };
    std::vector<StagePlace> places(stage_to_rank.size());
    for (std::size_t stage = 0; stage < places.size(); ++stage) {
        StagePlace& place = places[stage];
        place.first = stage == 0;
        place.last = stage + 1 == places.size();
        place.next_across_hosts = !place.last && host(stage) != host(stage + 1);
        place.previous_across_hosts = !place.first && host(stage) != host(stage - 1);
    }
    return places;
}

// The stage-to-rank map `layout`'s schedule runs (PyTorch's: looped, or V-shaped).
std::vector<int> layout_stage_to_rank(const PlanLayout& layout, std::size_t stages) {
    return stage_to_rank_mapping(stage_placement(layout.schedule), layout.pp,
                                 static_cast<int>(stages));
}

// What one blocking pipeline transfer stalls the GPU for: its tp-th of the boundary over the
// link to the neighbouring stage (tp x dp GPUs away in Megatron's rank order, so on another host
// where the boundary crosses one), then the receiving tp group's all-gather of the whole over
// NVLink (a ring: (tp - 1)/tp of it through each GPU). Under sequence parallelism the boundary is
// already split, and nothing is gathered.
std::int64_t blocking_transfer_ns(const PlanLayout& layout, const ModelSpec& model,
                                  const ClusterSpec& cluster, const PlanOptions& options,
                                  bool across_hosts) {
    const double whole = static_cast<double>(boundary_bytes(layout, model, options));
    const sharding::MeshLinks collective_links = collective_links_of(cluster);
    const bool split = !options.sequence_parallel && layout.tp > 1;
    const sharding::MeshLinks& links = cluster.links;
    const double link_gb_per_s =
        across_hosts ? links.inter_host_gb_per_s : links.intra_host_gb_per_s;
    const double latency_us =
        across_hosts ? links.inter_host_latency_us : links.intra_host_latency_us;
    double ns = latency_us * 1000 + (split ? whole / layout.tp : whole) / link_gb_per_s;
    if (split)
        ns += links.collective_latency_us * 1000 +
              whole * (layout.tp - 1) / layout.tp / collective_links.intra_host_gb_per_s;
    return ceil_ns(ns, "a blocking pipeline transfer");
}

// What the attention's batched matrix multiplies take beyond their FLOPs at the achieved rate:
// per multiply, its bytes at HBM bandwidth less its arithmetic, where that is more. Forward runs
// two, the input gradient four, and both recomputes (full and selective) the forward's two again.
StageWork::Passes attention_memory_excess(std::int64_t layers, const PlanLayout& layout,
                                          const ModelSpec& model, const ClusterSpec& cluster,
                                          const PlanOptions& options, double flops_per_ns) {
    const std::int64_t memory = memory_ns(
        attention_matmul_bytes(model.shape, layout.microbatch_size, layout.tp, options.dtype),
        cluster.memory_gb_per_s);
    const std::int64_t arithmetic = arithmetic_ns(
        attention_matmul_flops(model.shape, layout.microbatch_size, layout.tp), flops_per_ns);
    const std::int64_t excess = std::max<std::int64_t>(0, memory - arithmetic);
    const int input = options.recompute == Recompute::none ? 4 : 6;
    return {layers * 2 * excess, layers * input * excess, 0};
}

// A stage of `layers` layers at `place`: the first stage's (embedding) and the last's (output
// layer) work added where it is one of them, blocking transfers over the links it sends on.
StageWork stage_work(std::int64_t layers, const StagePlace& place, const PlanLayout& layout,
                     const ModelSpec& model, const ClusterSpec& cluster, const PlanOptions& options,
                     const TensorParallelLayerCost& tp_cost) {
    const GptShape& shape = model.shape;
    const bool first = place.first, last = place.last;
    const double flops_per_ns =
        dtype_peak_tflops(cluster.peak_tflops, options.dtype) * cluster.achieved_fraction * 1e3;
    const double base_tflops = flops_per_ns / 1e3;
    std::optional<PassFlops> linear;
    if (cluster.gemm_rates)
        linear =
            flops_at_measured_rates(layer_linear_gemms(shape, layout.microbatch_size, layout.tp),
                                    *cluster.gemm_rates, base_tflops);
    const LayerWork work = layer_work(shape, layout.microbatch_size, layout.tp, options.recompute,
                                      options.attention, linear);
    PassFlops logits;
    if (last) {
        const double plain = 2.0 * shape.sequence * layout.microbatch_size * shape.hidden *
                             static_cast<double>(shape.vocabulary) / layout.tp;
        logits = cluster.gemm_rates ? flops_at_measured_rates(
                                          logits_gemms(shape, layout.microbatch_size, layout.tp),
                                          *cluster.gemm_rates, base_tflops)
                                    : PassFlops{plain, plain, plain};
    }
    StageWork result;
    result.matmul = {arithmetic_ns(layers * work.forward + logits.forward, flops_per_ns),
                     arithmetic_ns(layers * work.input + logits.input, flops_per_ns),
                     arithmetic_ns(layers * work.weight + logits.weight, flops_per_ns)};
    result.output_matmul = {arithmetic_ns(logits.forward, flops_per_ns),
                            arithmetic_ns(logits.input, flops_per_ns),
                            arithmetic_ns(logits.weight, flops_per_ns)};
    result.tensor_parallel = {layers * tp_cost.forward_ns, layers * tp_cost.backward_ns, 0};
    if (options.recompute == Recompute::full)  // the recomputed forward's collectives
        result.tensor_parallel.input += layers * tp_cost.forward_ns;
    // Blocking, a transfer is paid by its sender: the activation after F by all but the last
    // stage, its gradient after I by all but the first, each over its own boundary's link.
    if (options.blocking_pipeline_transfers) {
        const auto transfer = [&](bool across_hosts) {
            return blocking_transfer_ns(layout, model, cluster, options, across_hosts);
        };
        result.pipeline_transfer = {last ? 0 : transfer(place.next_across_hosts),
                                    first ? 0 : transfer(place.previous_across_hosts), 0};
    }
    if (cluster.streaming_multiprocessors > 0 && !cluster.gemm_rates)
        result.waves = wave_quantization(layers, layout, model, cluster, options, flops_per_ns);
    const double bandwidth = cluster.memory_gb_per_s;
    if (bandwidth <= 0)
        return result;
    const TensorSplit split(layout.tp, options.sequence_parallel);
    const PassBytes layer = layer_memory_bound_bytes(shape, layout.microbatch_size, split,
                                                     options.dtype, options.attention);
    double recomputed = 0;
    if (options.recompute == Recompute::full)
        recomputed = layer.forward;
    else if (options.recompute == Recompute::selective)
        recomputed = selective_recompute_bytes(shape, layout.microbatch_size, layout.tp,
                                               options.dtype, options.attention);
    result.memory_bound = {memory_ns(layers * layer.forward, bandwidth),
                           memory_ns(layers * (layer.backward + recomputed), bandwidth), 0};
    if (options.eager_layer_passes) {
        const LayerPassBytes eager = eager_layer_pass_bytes(shape, layout.microbatch_size, split,
                                                            options.dtype, options.attention);
        const double recomputed_forward = options.recompute == Recompute::full ? eager.forward : 0;
        result.eager_passes = {memory_ns(layers * eager.forward, bandwidth),
                               memory_ns(layers * (eager.input + recomputed_forward), bandwidth),
                               memory_ns(layers * eager.weight, bandwidth)};
    }
    if (options.attention_matmul_memory && options.attention == Attention::unfused)
        result.attention_memory =
            attention_memory_excess(layers, layout, model, cluster, options, flops_per_ns);
    PassBytes edges;
    if (first) {
        const PassBytes embedding =
            embedding_bytes(shape, layout.microbatch_size, split, options.dtype);
        edges.forward += embedding.forward;
        result.edges.weight = memory_ns(embedding.backward, bandwidth);
    }
    if (last) {
        const PassBytes output_layer =
            output_layer_bytes(shape, layout.microbatch_size, split, options.dtype);
        edges.forward += output_layer.forward;
        result.edges.input = memory_ns(output_layer.backward, bandwidth);
    }
    result.edges.forward = memory_ns(edges.forward, bandwidth);
    const double parameters = stage_parameters(shape, layers, layout.tp, first, last);
    result.accumulation.weight = memory_ns(
        options.gradients_in_dtype ? dtype_gradient_accumulation_bytes(parameters, options.dtype)
                                   : gradient_accumulation_bytes(parameters, options.dtype),
        bandwidth);
    return result;
}

// A stage's times: tensor-parallel collectives inside F and I, the rest arithmetic.
// Memory-bound work counts as arithmetic: it keeps the GPU busy, so no overlap hides it.
StageCost stage_cost(const StageWork& work) {
    StageCost cost;
    cost.forward_arithmetic_ns = work.matmul.forward + work.memory_bound.forward +
                                 work.eager_passes.forward + work.attention_memory.forward +
                                 work.waves.forward + work.edges.forward +
                                 work.accumulation.forward;
    cost.input_arithmetic_ns = work.matmul.input + work.memory_bound.input +
                               work.eager_passes.input + work.attention_memory.input +
                               work.waves.input + work.edges.input + work.accumulation.input;
    cost.weight_arithmetic_ns = work.matmul.weight + work.memory_bound.weight +
                                work.eager_passes.weight + work.attention_memory.weight +
                                work.waves.weight + work.edges.weight + work.accumulation.weight;
    cost.forward_ns =
        cost.forward_arithmetic_ns + work.tensor_parallel.forward + work.pipeline_transfer.forward;
    cost.input_ns =
        cost.input_arithmetic_ns + work.tensor_parallel.input + work.pipeline_transfer.input;
    cost.weight_ns = cost.weight_arithmetic_ns + work.tensor_parallel.weight;
    return cost;
}

// Activations one layer holds from F to W, per microbatch.
std::int64_t layer_held_bytes(const PlanLayout& layout, const GptShape& shape,
                              const PlanOptions& options) {
    // The closed forms are at 16-bit precision.
    const double at_16_bits = static_cast<double>(
        layer_activation_bytes(shape, layout.microbatch_size, layout.tp, options.recompute,
                               options.sequence_parallel, options.attention));
    return rounded_bytes(at_16_bits * dtype_element_bytes(options.dtype) / 2,
                         "one layer's activations");
}

// The cost model of one step of `layout`: each stage its layers, the first adding the
// embedding, the last the output layer (logits).
CostModel step_cost_model(const PlanLayout& layout, const std::vector<int>& layers,
                          const ModelSpec& model, const ClusterSpec& cluster,
                          const PlanOptions& options, const TensorParallelLayerCost& tp_cost) {
    const std::int64_t held = layer_held_bytes(layout, model.shape, options);
    const std::int64_t boundary = boundary_bytes(layout, model, options);
    const std::vector<StagePlace> places =
        stage_places(layout, cluster, layout_stage_to_rank(layout, layers.size()));
    CostModel costs;
    for (std::size_t stage = 0; stage < layers.size(); ++stage) {
        costs.stages.push_back(stage_cost(
            stage_work(layers[stage], places[stage], layout, model, cluster, options, tp_cost)));
        // A blocking transfer is paid inside the sender's computation, which the receiver waits
        // for: the link then carries no bytes of its own, only its latency.
        costs.activation_bytes.push_back(options.blocking_pipeline_transfers ? 0 : boundary);
        costs.held_activation_bytes.push_back(
            rounded_bytes(static_cast<double>(layers[stage]) * static_cast<double>(held),
                          "a stage's activations"));
    }
    costs.intra_host =
        link_of(cluster.links.intra_host_gb_per_s, cluster.links.intra_host_latency_us);
    costs.inter_host =
        link_of(cluster.links.inter_host_gb_per_s, cluster.links.inter_host_latency_us);
    costs.ranks_per_host = pipeline_ranks_per_host(layout, cluster);
    costs.overlap_efficiency = options.overlap_efficiency;
    return costs;
}

TensorParallelLayerCost layer_collectives(const PlanLayout& layout, const ModelSpec& model,
                                          const ClusterSpec& cluster, const PlanOptions& options) {
    const GptShape& shape = model.shape;
    return tensor_parallel_layer_cost(shape.sequence, shape.hidden, shape.heads, shape.vocabulary,
                                      layout.microbatch_size, layout.tp, layout_host_gpus(cluster),
                                      collective_links_of(cluster), sharding_dtype(options.dtype));
}

// The busiest rank's arithmetic split by kind: m microbatches of each stage it holds.
void split_arithmetic(const Schedule& lowered, const RankResult& rank, const PlanLayout& layout,
                      const std::vector<int>& layers, const ModelSpec& model,
                      const ClusterSpec& cluster, const PlanOptions& options,
                      PlanBreakdown& parts) {
    const TensorParallelLayerCost tp_cost = layer_collectives(layout, model, cluster, options);
    const std::vector<StagePlace> places = stage_places(layout, cluster, lowered.stage_to_rank);
    for (std::size_t stage = 0; stage < layers.size(); ++stage) {
        if (lowered.stage_to_rank[stage] != rank.rank)
            continue;
        const StageWork work =
            stage_work(layers[stage], places[stage], layout, model, cluster, options, tp_cost);
        parts.output_matmul_ns += layout.m * work.output_matmul.total();
        parts.memory_bound_ns += layout.m * work.memory_bound.total();
        parts.eager_passes_ns += layout.m * work.eager_passes.total();
        parts.attention_memory_ns += layout.m * work.attention_memory.total();
        parts.wave_quantization_ns += layout.m * work.waves.total();
        parts.pipeline_transfer_ns += layout.m * work.pipeline_transfer.total();
        parts.embedding_and_output_ns += layout.m * work.edges.total();
        parts.gradient_accumulation_ns += layout.m * work.accumulation.total();
    }
    parts.compute_ns = rank.arithmetic_ns - parts.wave_quantization_ns - parts.memory_bound_ns -
                       parts.eager_passes_ns - parts.attention_memory_ns -
                       parts.embedding_and_output_ns - parts.gradient_accumulation_ns;
}

// One GPU's parameters on each rank: its stages' (stage_parameters). The output layer shares the
// word embedding's weights and holds its own copy unless the first stage is on the same rank
// (a V-shaped schedule), where the two are one tensor.
std::vector<double> rank_parameters(const PlanLayout& layout, const std::vector<int>& counts,
                                    const GptShape& shape, const Schedule& lowered) {
    std::vector<double> per_rank(static_cast<std::size_t>(layout.pp), 0);
    const std::size_t last_stage = counts.size() - 1;
    for (std::size_t stage = 0; stage < counts.size(); ++stage)
        per_rank.at(static_cast<std::size_t>(lowered.stage_to_rank[stage])) +=
            stage_parameters(shape, counts[stage], layout.tp, stage == 0, stage == last_stage);
    const auto first = static_cast<std::size_t>(lowered.stage_to_rank.front());
    if (last_stage > 0 && static_cast<std::size_t>(lowered.stage_to_rank.back()) == first)
        per_rank.at(first) -= word_embedding_parameters(shape, layout.tp);
    return per_rank;
}

// Bytes per gradient element in the reductions: fp32 unless kept in the model's dtype.
int gradient_element_bytes(const PlanOptions& options) {
    return options.gradients_in_dtype ? dtype_element_bytes(options.dtype) : 4;
}

// The word embedding's gradient (V h / tp values, in the data-parallel gradients' precision)
// all-reduced between the first and the last stage's ranks: a ring of two that moves the whole
// once each way over their link, across hosts where the simulator's transfers between them
// would cross. One rank holding both (one stage, or a V-shaped schedule) holds one tensor: no
// reduction.
std::int64_t embedding_reduce_ns(const PlanLayout& layout, const GptShape& shape,
                                 const ClusterSpec& cluster, int element_bytes,
                                 const std::vector<int>& stage_to_rank) {
    const int first = stage_to_rank.front(), last = stage_to_rank.back();
    if (first == last)
        return 0;
    const double bytes = static_cast<double>(shape.vocabulary) * static_cast<double>(shape.hidden) *
                         element_bytes / layout.tp;
    const int per_host = pipeline_ranks_per_host(layout, cluster);
    const bool across_hosts = first / per_host != last / per_host;
    const double gb_per_s =
        across_hosts ? cluster.links.inter_host_gb_per_s : cluster.links.intra_host_gb_per_s;
    return ceil_ns(cluster.links.collective_latency_us * 1000 + bytes / gb_per_s,
                   "the embedding gradient's reduction");
}

}  // namespace

std::vector<int> stage_layer_counts(const PlanLayout& layout, const GptShape& shape,
                                    const std::vector<int>& split) {
    if (!split.empty())
        return split;
    return even_layers_per_stage(static_cast<int>(shape.layers), layout.pp * layout.v);
}

double step_flops(const ModelSpec& model, Recompute recompute, Attention attention) {
    const GptShape& shape = model.shape;
    const double b = static_cast<double>(model.global_batch),
                 s = static_cast<double>(shape.sequence);
    const double h = static_cast<double>(shape.hidden), l = static_cast<double>(shape.layers);
    const double v = static_cast<double>(shape.vocabulary);
    const double forward_layer = 24 * b * s * h * h + 4 * b * s * s * h;
    double layer = 3 * forward_layer;  // forward, then a backward of twice its work
    if (recompute == Recompute::full)
        layer += forward_layer;
    else if (recompute == Recompute::selective && attention == Attention::unfused)
        layer += 4 * b * s * s * h;  // the attention scores, computed again
    if (attention == Attention::flash)
        layer += 2 * b * s * s * h;  // Q K^T again in the fused kernel's backward
    return l * layer + 6 * b * s * h * v;
}

CostModel plan_cost_model(const PlanLayout& layout, const ModelSpec& model,
                          const ClusterSpec& cluster, const PlanOptions& options,
                          const std::vector<int>& split) {
    return step_cost_model(layout, stage_layer_counts(layout, model.shape, split), model, cluster,
                           options, layer_collectives(layout, model, cluster, options));
}

PlanResult evaluate_layout(const PlanLayout& layout, const ModelSpec& model,
                           const ClusterSpec& cluster, const PlanOptions& options,
                           const std::vector<int>& split) {
    const GptShape& shape = model.shape;
    const std::vector<int> layers = stage_layer_counts(layout, shape, split);
    const CostModel costs = plan_cost_model(layout, model, cluster, options, split);
    const Schedule lowered =
        lower(generate_schedule({layout.schedule, layout.pp, layout.v, layout.m}));
    const SimulationResult pipeline = simulate(lowered, costs);

    PlanResult result;
    result.layout = layout;
    result.layers_per_stage = split;
    const auto busiest = std::max_element(
        pipeline.ranks.begin(), pipeline.ranks.end(),
        [](const RankResult& a, const RankResult& b) { return a.busy_ns < b.busy_ns; });
    // The busiest rank's step, split: its busy time is arithmetic (matrix multiplies and
    // memory-bound work) plus the tensor-parallel collectives no overlap hid (the only other
    // time in a stage's costs), then idle.
    split_arithmetic(lowered, *busiest, layout, layers, model, cluster, options, result.breakdown);
    result.breakdown.tensor_parallel_ns =
        busiest->busy_ns - busiest->arithmetic_ns - result.breakdown.pipeline_transfer_ns;
    result.breakdown.bubble_ns = busiest->bubble_ns;
    result.pipeline_bubble_ratio = pipeline.bubble_ratio;
    const std::vector<double> per_rank = rank_parameters(layout, layers, shape, lowered);
    // The reduction and the optimizer step wait for the rank with the most parameters.
    const double parameters = *std::max_element(per_rank.begin(), per_rank.end());
    const int element = dtype_element_bytes(options.dtype);
    const std::int64_t reduce = data_parallel_reduce_ns(
        parameters, layout.dp, layout.tp, layout_host_gpus(cluster), options.zero1, cluster.links,
        element, gradient_element_bytes(options));
    // Overlapped, the reduction runs during the last microbatch's backward on each rank.
    const std::int64_t last_backward = costs.stages.front().backward_ns() * layout.v;
    result.breakdown.data_parallel_ns = options.overlap_gradient_reduce
                                            ? std::max<std::int64_t>(0, reduce - last_backward)
                                            : reduce;
    // Adam runs after the reduction, on the rank's shard of the parameters under ZeRO-1.
    if (cluster.memory_gb_per_s > 0)
        result.breakdown.optimizer_ns =
            memory_ns(optimizer_step_bytes(parameters / (options.zero1 ? layout.dp : 1),
                                           options.dtype, options.gradients_in_dtype),
                      cluster.memory_gb_per_s);
    if (options.embedding_gradient_reduce)
        result.breakdown.embedding_reduce_ns = embedding_reduce_ns(
            layout, shape, cluster, gradient_element_bytes(options), lowered.stage_to_rank);
    result.step_time_ns = pipeline.step_time_ns + result.breakdown.data_parallel_ns +
                          result.breakdown.embedding_reduce_ns + result.breakdown.optimizer_ns;
    // The memory is the fullest rank's, its weights and its activations together: the rank
    // with the most layers need not be the one holding the embeddings or the most activations.
    for (std::size_t rank = 0; rank < pipeline.ranks.size(); ++rank) {
        const std::int64_t weights =
            weight_and_optimizer_bytes(per_rank.at(rank), layout.dp, options.zero1, element);
        const std::int64_t activations = pipeline.ranks[rank].peak_memory_bytes;
        const std::int64_t total = rounded_bytes(
            static_cast<double>(weights) + static_cast<double>(activations), "a rank's memory");
        if (total > result.memory_per_gpu_bytes) {
            result.memory_per_gpu_bytes = total;
            result.breakdown.weight_bytes = weights;
            result.breakdown.activation_bytes = activations;
        }
    }
    result.fits = result.memory_per_gpu_bytes <= cluster.memory_per_gpu_bytes;
    result.tflops_per_gpu = step_flops(model, options.recompute, options.attention) /
                            (static_cast<double>(result.step_time_ns) * 1e-9) / cluster.gpus / 1e12;
    result.even_step_time_ns = result.step_time_ns;
    return result;
}

int pipeline_ranks_per_host(const PlanLayout& layout, const ClusterSpec& cluster) {
    return pipeline_ranks_per_host(layout.tp * layout.dp, layout_host_gpus(cluster));
}

LayerCosts plan_layer_costs(const PlanLayout& layout, const ModelSpec& model,
                            const ClusterSpec& cluster, const PlanOptions& options) {
    const TensorParallelLayerCost tp_cost = layer_collectives(layout, model, cluster, options);
    // One link for every boundary, as a layer does not know where the split puts it: the
    // inter-host one when every boundary crosses hosts.
    const bool across_hosts = pipeline_ranks_per_host(layout, cluster) == 1;
    const auto one_layer = [&](bool first, bool last) {
        return stage_cost(stage_work(1, {first, last, across_hosts, across_hosts}, layout, model,
                                     cluster, options, tp_cost));
    };
    const StageCost layer = one_layer(false, false);
    const StageCost with_embedding = one_layer(true, false);
    const StageCost with_output = one_layer(false, true);
    LayerCosts costs;
    for (std::int64_t index = 0; index < model.shape.layers; ++index) {
        const StageCost& cost = index == 0 ? with_embedding : layer;
        costs.names.push_back("layers." + std::to_string(index));
        costs.forward_ns.push_back(cost.forward_ns);
        costs.input_ns.push_back(cost.input_ns);
        costs.weight_ns.push_back(cost.weight_ns);
        costs.backward_ns.push_back(cost.backward_ns());
        costs.held_bytes.push_back(layer_held_bytes(layout, model.shape, options));
        costs.output_bytes.push_back(boundary_bytes(layout, model, options));
        costs.gradient_bytes.push_back(0);
        costs.backward_peak_bytes.push_back(0);
    }
    costs.loss.forward_ns = with_output.forward_ns - layer.forward_ns;
    costs.loss.input_ns = with_output.input_ns - layer.input_ns;
    costs.loss.weight_ns = with_output.weight_ns - layer.weight_ns;
    costs.loss.backward_ns = with_output.backward_ns() - layer.backward_ns();
    return costs;
}

void rank_results(std::vector<PlanResult>& results) {
    std::stable_sort(results.begin(), results.end(), [](const PlanResult& a, const PlanResult& b) {
        if (a.fits != b.fits)
            return a.fits;
        return a.fits ? a.step_time_ns < b.step_time_ns
                      : a.memory_per_gpu_bytes < b.memory_per_gpu_bytes;
    });
}

std::vector<PlanResult> plan_training(const ModelSpec& model, const ClusterSpec& cluster,
                                      const PlanOptions& options, const PlanProgress& progress) {
    const std::vector<PlanLayout> layouts = plan_layouts(model, cluster, options);
    check_layouts_fit(layouts);
    // A pinned split applies to every layout: plan_layouts kept only those of its stage count.
    const std::vector<int>& split = options.pins.layers_per_stage;
    std::vector<PlanResult> results(layouts.size());
    // Results keep the layouts' order, so the ranking never depends on the thread count.
    run_record::parallel_for(
        layouts.size(), 0,
        [&](std::size_t index) {
            results[index] = evaluate_layout(layouts[index], model, cluster, options, split);
        },
        phase_progress(progress, "pricing layouts", layouts.size()));
    rank_results(results);
    if (options.uneven_splits && split.empty()) {
        search_uneven_splits(results, model, cluster, options, progress);
        rank_results(results);
    }
    return results;
}

}  // namespace pipelens::sim
