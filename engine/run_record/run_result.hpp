// What a real pipeline run is asked to do and what it gives back: options, per-rank timelines,
// failures, the reference and accuracy comparisons, recordings. Plain torch-free values, shared
// by the runtime that fills them (engine/runtime/pipeline_run.hpp) and by what records or
// reports them (run_trace, the CLI), so neither of those includes LibTorch or the runtime.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/recorder/recorded_trace.hpp"
#include "engine/run_record/clock_offset.hpp"
#include "engine/run_record/run_dtype.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "engine/tensor/tensor_meta.hpp"

namespace pipelens::run_record {

struct PipelineRunOptions {
    std::string model = "mlp";  // mlp, example, kwargs, transformer or a TorchScript .pt file
    int layers = 0;             // 0: two per pipeline rank (model_layer_count)
    int hidden = 64;
    int sequence = 16;
    int heads = 4;
    std::vector<std::int64_t> input_shape;  // TorchScript: one sample's shape
    std::uint64_t seed = 0;
    std::vector<std::string> split_points;  // "layers.3", "layers.3:end", "3"
    int batch_size = 32;                    // the whole batch; split into m microbatches
    int chunk_dim = 0;                      // the dim microbatches are cut along
    std::vector<std::string> faults;        // see faults.hpp
    std::int64_t timeout_ms = 10'000;       // any wait on another rank
    // How long joining the other ranks may take (gloo/nccl): 30 s unless the user said (ranks
    // started together still start at different speeds, and c10d retries once a second).
    std::int64_t rendezvous_timeout_ms = 30'000;
    bool check_reference = true;
    // Compare every stage's outputs, microbatch by microbatch, with the single-rank reference
    // and name the first stage that diverges.
    bool check_accuracy = false;
    std::vector<std::string> backends;  // `--backend` texts, see backend_choice.hpp
    int warmup_steps = 1;      // steps run first and not reported (first-touch allocation, caches)
    int recorded_steps = 1;    // steps run after them, every one recorded, one after another
    int intra_op_threads = 1;  // LibTorch threads per rank (see thread_budget.hpp)
    // After the step, every rank at once measures its stages, their layers and its links
    // (engine/runtime/stage_profiler.hpp) for calibration.
    bool profile = false;

    std::string transport = "local";  // local, gloo, nccl
    int rank = 0;                     // gloo/nccl: this process's rank
    int world_size = 1;
    std::string master_address = "127.0.0.1";
    int master_port = 29500;
    // This process's rank on its host (LOCAL_RANK; -1: not given): the GPU that nccl with CPU
    // tensors and `--device cuda` take (nccl's default: the rank).
    int local_rank = -1;
    // `--device` as given ("" for the default, "cpu", "cuda", "cuda:N";
    // engine/stage_plan/device_choice.hpp); run_pipeline replaces it with the device it resolved
    // to ("cpu", "cuda:0") before anything runs.
    std::string device;
    // `--dtype`: what the model's parameters, the batch and the single-rank reference are cast to
    // on the device (run_dtype.hpp), and so the reference check's tolerance.
    std::string dtype = std::string(kDefaultRunDtype);
    // gloo/nccl under a launcher: its directory (rank_files.hpp). This rank also writes its
    // report there before gathering, so the launcher can still record the run when rank 0, which
    // gathers and records, dies; rank 0 reads there which ranks ended before they reported.
    std::string report_directory;
    // Where each rank writes LibTorch's profile of its recorded steps (rank<R>.json, Chrome trace
    // format, every action marked "PP:<action>" as PyTorch's pipelining marks it); empty: none.
    std::string torch_profile_directory;
    // What a ZeroBubbleAuto order was searched with, so the executed schedule is recorded as
    // that kind with its inputs (and replays to the same order) rather than as a CSV.
    ZeroBubbleInputs zero_bubble;
};

struct ActionTiming {
    int step = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    // What a SEND/RECV moved when the source says so (an imported trace); -1: derived from the
    // stages' boundary metadata.
    std::int64_t bytes = -1;
    int repeat = 0;  // which recorded step (0 .. recorded_steps - 1) it belongs to
};

// Tensor bytes a rank held at a moment (engine/runtime/memory_account.hpp says what counts).
struct MemoryPoint {
    std::int64_t time_ns = 0;
    std::int64_t bytes = 0;
};

// One figure `run --profile` measured on a rank (the trace's `profile` table): a stage's or one
// model layer's compute time (F, I, W, B, OVERLAP_F_B, and OVERLAP_F_B_saved: F + B minus the
// overlap, timed back to back; it may be negative), its memory (held_bytes: kept per
// microbatch from F to backward; backward_peak_bytes: a backward's temporaries above that;
// gradient_bytes: its weight gradients), or a link's one-way time for `bytes` to `peer`.
struct ProfileFigure {
    int rank = 0;
    int stage = -1;  // -1: a link
    int layer = -1;  // the model layer's index; -1: the whole stage (or a link); -2: the loss
    std::string layer_name;   // "layers.3"; empty for stages and links
    std::string quantity;     // F, I, W, B, OVERLAP_F_B, held_bytes, backward_peak_bytes,
                              // gradient_bytes, output_bytes (what it sends on), kept_bytes
                              // (still held after the backward: the last stage's outputs), link
    int peer = -1;            // links: the other rank
    std::int64_t bytes = 0;   // links: the message size
    std::int64_t median = 0;  // ns for times, bytes for memory
    std::int64_t low = 0;     // the 10th and 90th percentiles of the samples: the spread
    std::int64_t high = 0;
    int samples = 0;  // timed repetitions after warm-up (1 for memory figures)
};

// The failure kind of a rank whose allocator could not give an action its memory.
inline constexpr std::string_view kOutOfMemoryKind = "out_of_memory";

// A failure as the trace's errors table records it.
struct RunFailure {
    int rank = -1;
    int stage = -1;
    int microbatch = -1;
    std::string action;
    std::string kind;  // shape_mismatch, dtype_mismatch, stride_mismatch, count_mismatch,
                       // non_finite, timeout, stopped, lost, rank_died, out_of_memory, error
    std::string expected;
    std::string actual;
    std::string message;
    std::int64_t time_ns = 0;
    // When the action it interrupted had started (same clock as time_ns); none when it failed
    // before starting one (waiting for an input, or outside the step).
    std::optional<std::int64_t> started_ns;
};

// Where a rank's time zero lay on its host's monotonic clock, that clock's identity (the boot it
// counts from: processes and threads of one boot share it) and the rank's `clock:` fault skew.
// A failed step leaves a rank's offset to rank 0 unmeasured; ranks that share rank 0's host
// clock are put on its clock from these alone.
struct HostZero {
    std::string clock_id;
    std::int64_t zero_ns = 0;
    std::int64_t skew_ns = 0;
};

struct RankRun {
    int rank = 0;
    // On the run's clock (rank 0's, zero when rank 0 left the first recorded step's barrier) once
    // `clock` is known; on the rank's own clock, zero at its own exit from the barrier, if not.
    std::vector<ActionTiming> timeline;
    std::optional<ClockOffset> clock;   // rank 0's clock minus this rank's, as measured
    std::optional<HostZero> host_zero;  // none when no recorded step began
    std::int64_t busy_ns = 0;           // compute actions, over every recorded step
    // When each recorded step began on this rank (it left the step's barrier), on the
    // timeline's clock: the first is the time zero.
    std::vector<std::int64_t> step_starts_ns;
    // Tensor bytes allocated during the recorded steps and still alive, on the timeline's clock:
    // at each action's start and end and at its high-water mark in between.
    std::vector<MemoryPoint> memory;
    std::int64_t peak_memory_bytes = 0;
    // On a GPU, whose allocator counts the whole device: what it held when the recorded steps
    // began (weights, optimizer state, library workspaces, what set-up left), which `memory`
    // does not count. None on the CPU, whose account counts the rank's step tensors only.
    std::optional<std::int64_t> memory_before_steps_bytes;
    std::optional<RunFailure> failure;
    std::string device;  // where its tensors lived ("cpu", "cuda:1"); "" when it never reported
    // How long the rank's thread was ready to run but had no core, per recorded step (from
    // leaving its barrier to its last action; run_queue_wait.hpp); empty where the kernel does
    // not say. LibTorch's pool threads and a transport's own threads are not counted: with one
    // intra-op thread a rank computes on this thread alone.
    std::vector<std::int64_t> core_waits_ns;
};

struct ReferenceComparison {
    bool checked = false;
    double reference_loss = 0;
    double loss_error = 0;          // |pipelined - reference|
    double output_max_error = 0;    // max abs over the model's outputs
    double gradient_max_error = 0;  // max abs over every parameter gradient
    bool outputs_match = false;
    bool gradients_match = false;
};

// One stage's outputs for one microbatch against the reference model's.
struct StageAccuracy {
    int stage = 0;
    int microbatch = 0;
    double max_abs_error = 0;
    double max_relative_error = 0;  // max abs error over the largest reference magnitude
    bool diverges = false;          // outside the run's dtype's tolerance (run_dtype.hpp)
    bool non_finite = false;        // the outputs hold NaN or Inf (the errors are then NaN)
    int rank = -1;                  // the rank that ran the stage (set when reports merge)
};

// The larger of two errors, where NaN (an error measured on NaN values) is the largest: a
// plain std::max would drop it and report the other, often 0.
inline double larger_error(double left, double right) {
    return std::isnan(left) || std::isnan(right) ? std::nan("") : std::max(left, right);
}

struct AccuracyCheck {
    bool checked = false;
    // What a stage's outputs were held to: the run's dtype's (run_dtype.hpp).
    ReferenceTolerance tolerance = reference_tolerance(kDefaultRunDtype);
    std::vector<StageAccuracy> stages;              // by (stage, microbatch)
    std::optional<StageAccuracy> first_divergence;  // the lowest stage, then microbatch

    double largest_abs_error() const {  // over every stage and microbatch
        double largest = 0;
        for (const StageAccuracy& entry : stages)
            largest = larger_error(largest, entry.max_abs_error);
        return largest;
    }
};

// What a rank recorded of its engine state: its events and the state it ended in.
struct RankRecording {
    int rank = 0;
    recorder::RecordingParts parts;
};

struct PipelineRunResult {
    bool completed = false;         // every rank ran every action
    std::int64_t step_time_ns = 0;  // the median of step_times_ns
    // Per recorded step: when it began (its earliest action start on any rank) on the run's
    // clock, and how long it took (to the last action of that step on any rank).
    std::vector<std::int64_t> step_starts_ns;
    std::vector<std::int64_t> step_times_ns;
    double loss = 0;
    std::vector<RankRun> ranks;
    std::vector<std::vector<TensorMeta>> stage_inputs;  // shape inference, per stage
    ReferenceComparison reference;
    AccuracyCheck accuracy;
    std::vector<RankRecording> recordings;  // the ranks this process has (all on rank 0)
    std::vector<ProfileFigure> profile;     // with PipelineRunOptions::profile
    // Failures beyond each rank's first (an imported run can report several per rank).
    std::vector<RunFailure> further_failures;
    std::string device;  // "cpu", "cuda:0"
};

// A run one of whose ranks ran out of memory: too large for where it ran (exit 3), whatever the
// other ranks' failures (they were stopped by it).
inline bool ran_out_of_memory(const PipelineRunResult& result) {
    return std::any_of(result.ranks.begin(), result.ranks.end(), [](const RankRun& rank) {
        return rank.failure && rank.failure->kind == kOutOfMemoryKind;
    });
}

}  // namespace pipelens::run_record
