// An experiment: everything one simulation (and later one real run) needs, as read from a TOML
// file and/or command-line flags. It is a description, not a cost model: sim/ turns it into
// one (explicit per-stage times, or a transformer layer description priced with FLOP counts).
//
// Invariants after validate_experiment(): the schedule shape is valid for its kind; every
// per-stage list is empty, one value (applies to every stage) or exactly one value per stage;
// a transformer description has positive sizes and layers that cover every stage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/schedule/action.hpp"
#include "engine/schedule/schedule_kind.hpp"

namespace pipelens {

// A bad experiment. The message names the file (or flag), the field and what is wrong.
class ExperimentError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

struct LinkSpec {
    std::int64_t latency_ns = 0;
    double bytes_per_ns = 0;  // GB/s; 0 = unlimited (a link no file or flag limited)
};

// The Zero Bubble paper's transformer layer: per layer and microbatch, F = sbh(24h + 4s),
// I = sbh(24h + 8s) (its "B"), W = sbh(24h) floating-point operations.
struct TransformerSpec {
    int layers = 0;                     // split as evenly as possible over the stages
    std::vector<int> layers_per_stage;  // or given per stage (uneven stages)
    int hidden = 0;
    int sequence = 0;
    int microbatch_size = 1;
    int heads = 0;
    std::string dtype = "bf16";
    double device_tflops = 0;  // achieved throughput per device, TFLOP/s
    // The output layer's vocabulary: the last stage adds its logits, 2sbhV FLOPs in each of F, I
    // and W. 0: no output layer priced (the embedding, a table lookup, has no matrix multiply).
    int vocabulary = 0;
};

// One cost of every stage besides its layers: a per-stage overhead, or the loss's share of the
// last stage.
struct StageExtra {
    std::int64_t forward_ns = 0;
    std::int64_t input_ns = 0;
    std::int64_t weight_ns = 0;
    std::int64_t backward_ns = 0;
    std::int64_t held_bytes = 0;
    std::int64_t kept_bytes = 0;  // of those, still held after the backward, to the step's end
    // What its I leaves held until its W (measured for the loss; the last stage's I carries it).
    std::int64_t input_kept_bytes = 0;
};

// Costs measured per model layer ([layers], written by `pipelens calibrate` from a
// `run --profile`): a stage costs the sum of its layers, split over the stages as [model] says,
// plus the per-stage overhead; the last stage adds the loss. The first stage's inputs need no
// gradient, so its I is empty and its W does the whole backward (the sum of its layers' B).
// Every list has one value per layer.
struct LayerCosts {
    std::vector<std::string> names;  // "layers.0", ...: what split points name
    std::vector<std::int64_t> forward_ns, input_ns, weight_ns, backward_ns;
    std::vector<std::int64_t> held_bytes;           // kept per microbatch from F to backward
    std::vector<std::int64_t> output_bytes;         // handed to the next layer per microbatch
    std::vector<std::int64_t> gradient_bytes;       // its weight gradients
    std::vector<std::int64_t> backward_peak_bytes;  // a backward's temporaries above held
    // What an I leaves held until its W (the gradients W reads); empty: not measured (files
    // calibrated before 2026-11-27), none.
    std::vector<std::int64_t> input_kept_bytes;
    StageExtra stage_overhead;
    StageExtra loss;
};

// The model a real run (`pipelens run`) trains, and how: [model] and [run] in a file.
struct ModelDescription {
    std::string name = "mlp";  // mlp, example, kwargs, transformer, or a TorchScript .pt path
    int layers = 0;            // 0: two per pipeline rank (model_layer_count)
    int hidden = 64;
    int sequence = 16;
    int heads = 4;
    std::vector<std::int64_t> input_shape;  // TorchScript: one sample's shape
    std::vector<std::string> split_points;  // "layers.3", "layers.3:end", "3"
    int batch_size = 32;
    int chunk_dim = 0;  // microbatches are cut along this dim of every input
    std::uint64_t seed = 0;
};

// A memory limit in microbatches' worth of activations per stage: a count ("12") or a multiple
// of the pipeline depth ("2p", "p"), as the zero-bubble paper names its schedules (ZB-2p).
struct ActivationLimit {
    int count = 0;  // 0: not given
    bool times_pp = false;

    // Saturates at 10^9 (more than any pipeline holds) instead of overflowing.
    int resolve(int pp) const {
        const std::int64_t limit = times_pp ? std::int64_t{count} * pp : count;
        return static_cast<int>(std::min<std::int64_t>(limit, 1'000'000'000));
    }
    std::string text() const;  // "2p", "12"
    friend bool operator==(const ActivationLimit&, const ActivationLimit&) = default;
};

// Throws ExperimentError ("'2q' is not a memory limit: ...") for anything but N or Np, N >= 1.
ActivationLimit parse_activation_limit(std::string_view text);

// What the flat figures of [costs] (f, i, w, b, held_activation_bytes) are the cost of
// (costs.per, --costs-per). Per stage, a schedule with v = 2 stages per rank runs twice the
// model of v = 1; per model or per layer, the same model is divided over the pp x v stages, so
// schedules of any v compare like with like. activation_bytes is always per boundary.
enum class CostScope { stage, model, layer };

// "stage", "model", "layer"; ExperimentError naming the choices for anything else.
CostScope parse_cost_scope(std::string_view text);
std::string_view cost_scope_name(CostScope scope);

// What [jitter]'s factors are taken about: the statistic the costs were fitted as (a calibration
// with a profile fits means, one without fits medians), so that noise moves no cost on average.
enum class JitterCentre { mean, median };

// How much a computation's time varies about its cost from one action to the next ([jitter],
// written by `calibrate` from the runs' own actions): quantiles of an action's time over its
// group's centre (its stage's actions of its kind in the same step), the i-th of n at
// probability (i + 0.5) / n. A simulation then also draws the step `draws` times, each
// computation's time multiplied by its own factor drawn from these (sim/step_spread.hpp): a
// pipeline waits for the slowest of what meets at each hand-over, so on a noisy machine the
// median step is longer than the step of the costs. `step_quantiles` (optional) do the same for
// whole steps: each recorded step's computations added up, over the median step's; a draw
// multiplies all its computations by one factor drawn from these, so the drawn steps spread as
// the measured ones did.
struct JitterSpec {
    std::vector<double> quantiles;
    std::vector<double> step_quantiles;  // empty: every step at the same level
    JitterCentre centre = JitterCentre::mean;
    int draws = 1000;
    int seed = 1;
    friend bool operator==(const JitterSpec&, const JitterSpec&) = default;
};

// "mean", "median"; ExperimentError naming the choices for anything else.
JitterCentre parse_jitter_centre(std::string_view text);
std::string_view jitter_centre_name(JitterCentre centre);

// The widest a [jitter] distribution may be, its most over its fewest: a drawn computation stays
// within this of its centre for each distribution (10^6 of its cost at most, action and step
// together), so only costs of seconds come near what the simulator refuses to draw (2^52 ns).
inline constexpr double kWidestJitter = 1000;

// The most draws [jitter] takes: each is one whole simulation.
inline constexpr int kMostJitterDraws = 100'000;

struct RunSettings {
    std::string transport = "local";           // local, gloo, nccl
    std::int64_t timeout_ns = 10'000'000'000;  // any wait on another rank
};

struct Experiment {
    std::string name;
    std::string source;  // the file it came from, or "command line"

    ScheduleShape shape;  // from a file: kind defaults to 1F1B, v to the kind's; pp, m required
    std::string schedule_file;  // a PyTorch CSV schedule instead of a generated kind
    // The file's action notation (schedule.notation, --notation); nullopt: inferred from its
    // cells, PyTorch's older one noted when found.
    std::optional<ActionNotation> schedule_notation;
    // Where pp was given ("exp.toml:3:6: schedule.pp", "--pp"); empty when it was not. A
    // schedule file's row count must equal a pp that was given: a silently smaller pipeline
    // is a wrong simulation.
    std::string rank_count_source;
    // The same for v and m ("--m", "exp.toml:4:5: schedule.m"): a schedule file fixes both.
    std::string stages_per_rank_source;
    std::string microbatch_count_source;
    // Lower with PyTorch's deferred receives (defer_pp_recv=True): each RECV just before the
    // computation that consumes it.
    bool defer_receives = false;
    // ZeroBubbleAuto's memory limit (schedule.max_activations, --max-activations); default p.
    ActivationLimit max_activations;

    // Per-stage times in ns: empty, one value for all stages, or one per stage.
    std::vector<std::int64_t> forward_ns;
    std::vector<std::int64_t> input_ns;
    std::vector<std::int64_t> weight_ns;
    std::vector<std::int64_t> backward_ns;  // B; I + W unless given
    std::optional<TransformerSpec> transformer;
    std::optional<LayerCosts> layers;  // or measured per layer

    CostScope cost_scope = CostScope::stage;
    std::vector<std::int64_t> activation_bytes;  // sent across each stage boundary per microbatch
    std::vector<std::int64_t> held_activation_bytes;  // kept per microbatch from F to B/W
    // [costs] overlap_efficiency: the share of an OVERLAP_F_B's hideable time it hides (what is
    // not arithmetic, at most the shorter part; sim/cost_model.hpp). 0 unless measured
    // (`calibrate` writes it) or stated: a real overlap hides only what it was built to hide.
    double overlap_efficiency = 0;
    // [costs] rank_slowdown: one factor per rank, its computations take that many times their
    // stage's costs (a straggler). Empty: every rank at 1.
    std::vector<double> rank_slowdown;
    std::int64_t unshard_ns = 0;
    std::int64_t reshard_ns = 0;
    std::int64_t reduce_grad_ns = 0;

    LinkSpec intra_host;
    LinkSpec inter_host;
    int ranks_per_host = 8;
    // A transfer starts only once its receive is posted (NCCL, Gloo); off, data is in flight
    // as soon as the send is issued (the zero-bubble paper's model). [network] rendezvous.
    bool rendezvous = false;
    // The host's time to issue a SEND: the rank's thread issues it in program order, so its next
    // computation waits for it (a gloo send writes its message into the socket on the caller's
    // thread). 0: free. [network] send_issue; calibrated from a gloo run's own SENDs.
    std::int64_t send_issue_ns = 0;
    // A receive's buffers are allocated when the rank posts it and held until its consumer takes
    // them, as pipelens' runtime does; off, transfers cost no memory (the activation-only model of
    // the published memory closed forms). [network] posted_receive_buffers; `calibrate` turns it
    // on for pipelens' own runs.
    bool posted_receive_buffers = false;
    // Noise-free when absent.
    std::optional<JitterSpec> jitter;

    ModelDescription model;
    RunSettings run;
};

// When flat per-stage costs make a schedule with v > 1 stages per rank run a larger model than
// the same pp at v = 1, the sentence that says so and how to compare one model instead; empty
// otherwise. `stages_per_rank` is the schedule's (a schedule file's may differ from shape.v).
std::string cost_scope_note(const Experiment& experiment, int stages_per_rank);

// The experiment `make demo` and a bare `pipelens simulate` use: 1F1B, pp=4, m=8, uneven
// stages (assets/examples/default.toml holds the same values).
Experiment default_experiment();

// What command-line flags start from when no experiment file is given: 1F1B, pp=4, v=1, m=8,
// F = I = W = 1 us on every stage, no activation bytes, free links.
Experiment plain_experiment();

// Sets m. Measured layer costs ([layers], from a calibration) are one microbatch of the measured
// run's size, so with them the batch follows m (m microbatches of that size): a run of the
// experiment then cuts the microbatches that were simulated. A batch m does not divide is left.
void set_microbatch_count(Experiment& experiment, int microbatch_count);

int dtype_bytes(const std::string& dtype);  // ExperimentError for an unknown dtype

// Throws ExperimentError for a transport other than local, gloo or nccl: checked where it is
// given, before a rank waits at a rendezvous for peers that an unknown transport never starts.
void check_transport_name(std::string_view transport);

// Throws ExperimentError naming `experiment.source` and the field. Call it once the shape is
// final (after command-line overrides, and after reading a schedule file into `shape`).
void validate_experiment(const Experiment& experiment);
// The same for a schedule read from a file, whose stage count need not be pp * v.
void validate_experiment(const Experiment& experiment, int stage_count);

}  // namespace pipelens
