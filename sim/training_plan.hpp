// The 3D-parallel planner: for a GPT-style transformer on a cluster, every layout of tensor x
// pipeline x data parallelism, schedule, v, microbatch size and microbatch count that the
// model and the global batch allow (or the ones pinned), each priced as one training step:
//
// - compute per layer and microbatch from FLOPs (the Zero Bubble paper's F, I, W split of a
//   layer, divided over tp; recompute adds the forward, or only its attention scores, to I),
//   the output layer on the last stage, at the GPU's peak times the achieved fraction;
// - memory-bound work (element-wise kernels, embedding, cross entropy, fp32 gradient
//   accumulation) from the bytes it moves at HBM bandwidth (sim/step_overheads.hpp), charged as
//   GPU time no overlap hides, and the optimizer step after the pipeline;
// - tensor-parallel collectives per layer from engine/sharding (sim/parallel_costs.hpp), paid
//   again by the recomputed forward under full recompute;
// - the pipeline simulated (sim::simulate) with those stage costs, the boundary activations
//   over the cluster's links, and each stage's activations held from F to W;
// - the data-parallel gradient reduction after the pipeline, or hidden behind the last
//   microbatch's backward when overlapped;
// - memory per GPU: weights, gradients and optimizer state (sim/training_memory.hpp) of the
//   most loaded stage plus the simulator's peak of held activations.
//
// Layers are split evenly over the pp x v stages unless a split is pinned (PlanPins) or the
// uneven search is on (PlanOptions::uneven_splits, sim/plan_split.hpp): then each layout also
// prices the best contiguous split `partition` finds and keeps it when it is faster.
//
// Every constant is an input (ClusterSpec): nothing is fitted. Results rank fitting layouts by
// step time, then the rest by how far over memory they are.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/experiment/experiment.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "engine/sharding/device_mesh.hpp"
#include "sim/cost_model.hpp"
#include "sim/gemm_rates.hpp"
#include "sim/step_overheads.hpp"
#include "sim/training_memory.hpp"

namespace pipelens::sim {

// A layout that cannot be planned: the message names the rule and the values.
class PlanError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

struct ModelSpec {
    GptShape shape;
    std::int64_t global_batch = 0;  // sequences per step
};

struct ClusterSpec {
    int gpus = 0;
    int gpus_per_host = 8;
    std::int64_t memory_per_gpu_bytes = 0;
    double peak_tflops = 0;        // dense 16-bit, per GPU, from the data sheet
    double achieved_fraction = 0;  // of peak that large matrix multiplies reach
    sharding::MeshLinks links;     // intra-host (NVLink) and inter-host (network)
    // HBM bandwidth (10^9 bytes/s) that memory-bound work runs at (sim/step_overheads.hpp);
    // 0 leaves that work unpriced, as plans made before it was modelled were.
    double memory_gb_per_s = 0;
    // The bus bandwidth NCCL's collectives reach inside a host (nccl-tests' busbw: a ring
    // all-reduce takes 2 (n - 1)/n x bytes / busbw), below the link's line rate by NVLink's
    // protocol overhead; it prices the tensor-parallel collectives and the tp all-gather of
    // blocking pipeline transfers. 0: the link's bandwidth, as before it was an input.
    double intra_host_collective_gb_per_s = 0;
    // SMs per GPU, for the wave quantization of the layers' GEMMs (sim/gemm_waves.hpp); 0 leaves
    // it unpriced.
    int streaming_multiprocessors = 0;
    // Measured rates of the layers' and the logits' GEMMs (sim/gemm_rates.hpp): where given, each
    // runs at its own rate instead of peak x achieved_fraction, and wave quantization, which the
    // measurement includes, is not added.
    std::shared_ptr<const GemmRates> gemm_rates;
};

// Search dimensions; a set field pins it.
struct PlanPins {
    std::optional<int> tp, pp, dp, v, microbatch_size, m;
    std::optional<ScheduleKind> schedule;
    // Layers per stage in pipeline order (a Megatron layout, --layout): pins pp x v to its
    // stage count (pp itself unless pp is pinned too) and the split. Empty: not pinned.
    std::vector<int> layers_per_stage;
};

struct PlanOptions {
    Recompute recompute = Recompute::selective;
    Attention attention = Attention::flash;
    bool sequence_parallel = true;
    bool zero1 = true;
    bool overlap_gradient_reduce = true;
    // Weights, activations and messages; fp32 also selects the TF32 peak (dtype_peak_tflops).
    DType dtype = DType::bf16;
    // OVERLAP_F_B's (DualPipeV): the share of the tensor-parallel collectives of one part hidden
    // behind the other's arithmetic; 0 unless measured or stated (see CostModel::overlap).
    double overlap_efficiency = 0;
    // Megatron-LM as run in 2021 (its SC21 scripts), each a term of its own in PlanBreakdown:
    // - each pipeline transfer stalls the GPU (the send waits, then the device is synchronized),
    //   and with tp > 1 each GPU sends its tp-th of the activation over its own link and the
    //   receiving tp group all-gathers it (the scatter/gather optimisation);
    // - the word embedding's gradient is all-reduced between the first and the last stage after
    //   the pipeline (they hold the two copies of the shared weights);
    // - the attention's batched matrix multiplies write and read the whole a s^2 b score tensor
    //   in GPU memory (no fused attention), so they take at least its bytes at HBM bandwidth.
    bool blocking_pipeline_transfers = false;
    bool embedding_gradient_reduce = false;
    bool attention_matmul_memory = false;
    // Gradients accumulated and all-reduced in the model's dtype rather than fp32 (Megatron-LM's
    // fp16 runs before --accumulate-allreduce-grads-in-fp32, as autograd adds into .grad).
    bool gradients_in_dtype = false;
    // The element-wise passes an eager PyTorch 1.8 layer runs beyond the fused kernels: bias
    // additions and bias-gradient reductions of their own, the layer norms' second read for gamma
    // and beta, unfused attention's layout copies (step_overheads.hpp's eager_layer_pass_bytes).
    bool eager_layer_passes = false;
    PlanPins pins;
    std::vector<ScheduleKind> schedules = {ScheduleKind::one_f_one_b,
                                           ScheduleKind::interleaved_1f1b};
    std::vector<int> microbatch_sizes = {1, 2, 4, 8};
    std::vector<int> virtual_stages = {2, 3, 4};  // for multi-stage schedules
    // Also price each layout's best uneven split (sim/plan_split.hpp) and keep it when it is
    // faster. Off here (the published layouts split evenly); `pipelens plan` turns it on.
    bool uneven_splits = false;
    // The uneven search runs on the layouts that could still rank among this many fastest
    // (sim/plan_split.hpp); the others keep the even split.
    std::size_t uneven_split_top = 10;
};

struct PlanLayout {
    int tp = 1, pp = 1, dp = 1;
    ScheduleKind schedule = ScheduleKind::one_f_one_b;
    int v = 1;
    int microbatch_size = 1;
    int m = 1;
};

// The layers of each of `layout`'s pp x v stages: `split` (layers per stage in pipeline order)
// when given, else the even split (partition.hpp's even_layers_per_stage).
std::vector<int> stage_layer_counts(const PlanLayout& layout, const GptShape& shape,
                                    const std::vector<int>& split = {});

// The step of the busiest rank in parts that add up to it exactly: compute_ns +
// wave_quantization_ns + memory_bound_ns + eager_passes_ns + attention_memory_ns +
// embedding_and_output_ns + gradient_accumulation_ns + tensor_parallel_ns + pipeline_transfer_ns +
// bubble_ns + data_parallel_ns + embedding_reduce_ns + optimizer_ns == PlanResult::step_time_ns.
// The memory-bound parts and the optimizer are 0 unless ClusterSpec::memory_gb_per_s is set; the
// PlanOptions Megatron-LM 2021 terms are 0 unless asked for.
struct PlanBreakdown {
    std::int64_t compute_ns = 0;  // matrix multiplies only: their FLOPs at the achieved rate
    // What the layers' linear GEMMs lose to wave quantization beyond compute_ns
    // (ClusterSpec::streaming_multiprocessors).
    std::int64_t wave_quantization_ns = 0;
    // Of compute_ns, the output layer's (the logits, 2 s b h V / tp per pass) on that rank.
    std::int64_t output_matmul_ns = 0;
    std::int64_t memory_bound_ns = 0;  // the layers' element-wise work at HBM bandwidth
    // The eager layer's element-wise passes beyond that (PlanOptions::eager_layer_passes).
    std::int64_t eager_passes_ns = 0;
    // What the attention's batched matrix multiplies take beyond their FLOPs at the achieved
    // rate, moving the score tensor at HBM bandwidth (PlanOptions::attention_matmul_memory).
    std::int64_t attention_memory_ns = 0;
    // The first stage's embedding and the last stage's final norm and cross entropy, held by
    // that rank (memory-bound; the logits' matrix multiply is in compute_ns).
    std::int64_t embedding_and_output_ns = 0;
    std::int64_t gradient_accumulation_ns = 0;  // weight gradients added into fp32
    std::int64_t tensor_parallel_ns = 0;        // tensor-parallel collectives that no overlap hid
    // Pipeline transfers that stall the GPU (PlanOptions::blocking_pipeline_transfers).
    std::int64_t pipeline_transfer_ns = 0;
    std::int64_t bubble_ns = 0;         // the pipeline's idle time on that rank
    std::int64_t data_parallel_ns = 0;  // gradient reduction not hidden
    // The word embedding's gradient all-reduced between the first and the last stage.
    std::int64_t embedding_reduce_ns = 0;
    std::int64_t optimizer_ns = 0;  // the Adam step over the rank's parameters
    // The fullest rank's (the most weights and activations together; memory_per_gpu_bytes is
    // their sum): its weights, gradients and optimizer state, and its peak held activations.
    std::int64_t weight_bytes = 0;
    std::int64_t activation_bytes = 0;
};

struct PlanResult {
    PlanLayout layout;
    // Layers per stage in pipeline order, as priced; empty: the even split.
    std::vector<int> layers_per_stage;
    std::int64_t step_time_ns = 0;
    // The even split's step; equal to step_time_ns unless an uneven split was chosen for being
    // faster (layers_per_stage then holds it).
    std::int64_t even_step_time_ns = 0;
    // Splits sim/partition simulated searching this layout's uneven split; 0 when not searched.
    std::size_t split_search_simulations = 0;
    double tflops_per_gpu = 0;  // the step's floating-point work per GPU and second
    // The simulated pipeline's bubble ratio (idle compute over ranks x its step), as `simulate`
    // and `summary` of the recorded run give it: what --max-bubble gates.
    double pipeline_bubble_ratio = 0;
    std::int64_t memory_per_gpu_bytes = 0;
    bool fits = true;
    PlanBreakdown breakdown;
};

// Every layout the model, batch, cluster and pins allow. Throws PlanError when a pin breaks a
// rule (the message names it) or when nothing is left.
std::vector<PlanLayout> plan_layouts(const ModelSpec& model, const ClusterSpec& cluster,
                                     const PlanOptions& options);

// Throws ScheduleTooLargeError when the largest layout's schedule does not fit the memory one
// pricing worker may take (the available memory over the workers plan_training runs).
void check_layouts_fit(const std::vector<PlanLayout>& layouts);

// The cost model of one step of `layout`: what evaluate_layout simulates (and a trace records).
// `split` as in stage_layer_counts.
CostModel plan_cost_model(const PlanLayout& layout, const ModelSpec& model,
                          const ClusterSpec& cluster, const PlanOptions& options,
                          const std::vector<int>& split = {});

// Pipeline ranks per host in Megatron's rank order (tp, then dp, then pp): neighbouring stages
// are tp x dp GPUs apart, so a host holds gpus_per_host / (tp x dp) of them when that divides
// evenly, else 1: stages straddle hosts, and every boundary is priced across them
// (sim/rank_hosts.hpp).
int pipeline_ranks_per_host(const PlanLayout& layout, const ClusterSpec& cluster);

// `layout`'s costs per layer, as sim/partition divides them: each transformer layer what one
// layer of a stage costs (arithmetic, memory-bound work, tensor-parallel collectives, gradient
// accumulation), the embedding added to layer 0 (always on the first stage) and the output
// layer and loss as the last stage's `loss`.
LayerCosts plan_layer_costs(const PlanLayout& layout, const ModelSpec& model,
                            const ClusterSpec& cluster, const PlanOptions& options);

// One layout priced (the pipeline simulated), its layers split as `split` says (empty: evenly).
PlanResult evaluate_layout(const PlanLayout& layout, const ModelSpec& model,
                           const ClusterSpec& cluster, const PlanOptions& options,
                           const std::vector<int>& split = {});

// Fitting results first by step time, then the others by memory; stable.
void rank_results(std::vector<PlanResult>& results);

// What a plan reports while it runs, from the calling thread: its phase ("pricing layouts",
// "searching uneven splits") and how much of the phase is done out of how much (layouts, or
// for the split search thousandths of a search: plan_split.hpp's kSearchShares).
using PlanProgress =
    std::function<void(std::string_view phase, std::size_t done, std::size_t total)>;

// One phase of `progress` as a per-item count (parallel_for's callback); empty without one.
// `progress` must outlive it.
inline std::function<void(std::size_t)> phase_progress(const PlanProgress& progress,
                                                       std::string_view phase, std::size_t total) {
    if (!progress)
        return {};
    return [&progress, phase, total](std::size_t done) { progress(phase, done, total); };
}

// Every layout priced and ranked: fitting ones by step time, then the others by memory.
std::vector<PlanResult> plan_training(const ModelSpec& model, const ClusterSpec& cluster,
                                      const PlanOptions& options,
                                      const PlanProgress& progress = {});

// The step's floating-point operations (forward, backward and what recompute repeats), for
// TFLOP/s figures: Narayanan et al. (2021)'s count, 72 B s L h^2 (1 + s/(6h) + V/(12 L h)),
// with 96 in place of 72 under full recompute. Under fused attention the Q K^T its backward
// computes again is counted too (2 B s^2 h per layer), and selective recompute adds nothing: the
// count is what the GPUs execute, so one GPU's figure is the achieved rate.
double step_flops(const ModelSpec& model, Recompute recompute, Attention attention);

}  // namespace pipelens::sim
