// The rows a trace holds, as plain value types shared by TraceWriter and TraceReader. They
// mirror the tables of traces/schema.sql one to one; times are integer nanoseconds. What an
// action is is stored as integers and its text derived when read; text that repeats (event
// names) is interned in the `strings` table by the writer and resolved back by the reader.
//
// Invariant: every record belongs to one run (`runs.id`); a run is `running` from begin_run until
// finish_run, so a run whose writer died reads back as unfinished.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::traces {

// Ranks, stages and microbatches beyond these are not a pipeline but a damaged file; readers
// refuse them as corrupt (a rank count of 10^9 once made `export` write gigabytes of empty
// rank records).
inline constexpr int kMostRanks = 1 << 20;
inline constexpr int kMostStages = 1 << 20;
inline constexpr int kMostMicrobatches = 1 << 24;

enum class RunKind { simulated, real };  // stored as 'sim' / 'real'
enum class RunStatus { running, finished, failed };

// The schedule a flight recorder's dumps are recorded under: their collectives and transfers
// only, no computation, so such a run has no step (run_outcome.hpp).
inline constexpr std::string_view kFlightRecorderSchedule = "flight-recorder";

struct RunRecord {
    std::int64_t id = 0;  // assigned by TraceWriter::begin_run
    RunKind kind = RunKind::simulated;
    std::string schedule;  // schedule kind name, e.g. "Interleaved1F1B"
    int pp = 0;            // ranks
    int v = 1;             // stages per rank
    int m = 0;             // microbatches
    std::string config;    // the full experiment configuration (TOML or JSON text)
    RunStatus status = RunStatus::running;
    std::int64_t started_at_ns = 0;  // wall clock, ns since the Unix epoch
    std::optional<std::int64_t> finished_at_ns;
    std::optional<std::int64_t> step_time_ns;
    std::optional<double> bubble_ratio;
    std::string failure;  // why a failed run failed; empty otherwise
};

// Whether two runs have one schedule shape (kind, pp, v, m); their configurations may still differ.
inline bool same_shape(const RunRecord& run, const RunRecord& other) {
    return run.schedule == other.schedule && run.pp == other.pp && run.v == other.v &&
           run.m == other.m;
}

struct RankRecord {
    int rank = 0;
    std::int64_t busy_ns = 0;
    std::int64_t bubble_ns = 0;
    double bubble_ratio = 0;
    std::int64_t peak_memory_bytes = 0;
    std::int64_t warmup_ns = 0;
    std::int64_t cooldown_ns = 0;
    std::string waiting_on;  // JSON object: peer rank -> ns waited on it, e.g. {"1":2000}
    // A real run's rank: rank 0's clock minus this rank's, and its uncertainty (schema.sql).
    std::optional<std::int64_t> clock_offset_ns;
    std::optional<std::int64_t> clock_uncertainty_ns;
    // A real run's rank: how long it waited for a core in that step (schema.sql, core_wait.hpp).
    std::optional<std::int64_t> core_wait_ns;
};

// A rank's warm-up (idle before its first computation); none for a rank of a run without a step
// (a failed one) that computed nothing: it died or waited from the start, and its 0 said it
// began at once. A finished run's idle rank keeps its figure (the whole step).
inline std::optional<std::int64_t> warmup_of(const RankRecord& rank, bool run_has_step) {
    if (rank.busy_ns == 0 && !run_has_step)
        return std::nullopt;
    return rank.warmup_ns;
}

// The waiting_on column's text for ns waited per peer rank: {"1":2000,"3":500}, and back (text
// that is not such an object reads as no waiting).
std::string waiting_on_json(const std::map<int, std::int64_t>& waiting);
std::map<int, std::int64_t> waiting_on_map(const std::string& json);

enum class ActionLane : std::uint8_t { compute = 0, communication = 1 };

// One part of an OVERLAP_F_B action.
struct ActionPartRecord {
    std::uint8_t kind = 0;  // pipelens::ActionKind as its integer value
    std::int32_t stage = 0;
    std::int32_t microbatch = -1;
};

struct ActionRecord {
    std::int32_t rank = 0;
    std::int32_t step = 0;  // index in the rank's action list
    ActionLane lane = ActionLane::compute;
    std::uint8_t kind = 0;         // pipelens::ActionKind as its integer value
    std::int32_t stage = -1;       // -1 for OVERLAP_F_B containers
    std::int32_t microbatch = -1;  // -1 where the action has none
    // OVERLAP_F_B only: its parts, in order (written to `action_parts`).
    std::vector<ActionPartRecord> parts;
    // PyTorch action text, e.g. "2F5", "0SEND_F3": filled by the reader (derived from the
    // integers above, or the kept text below); the writer does not store it.
    std::string label;
    // Stored with the row, for an action the integers above cannot name: an imported
    // flight-recorder op ("nccl:all_reduce [pg 0, #3]") is no pipeline action. Empty for
    // pipeline actions, whose text is always derived.
    std::string kept_text;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t bytes = 0;
    std::int32_t pair_id = -1;  // SEND/RECV pair id, -1 otherwise
};

// One rank's action as stored, without its text: what a reader of millions of rows (the viewer)
// takes, deriving labels only when shown (TraceReader::stored_labels for those the integers
// cannot give).
struct StoredAction {
    std::int32_t step = 0;
    std::int32_t stage = -1;
    std::int32_t microbatch = -1;
    std::int32_t pair_id = -1;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t bytes = 0;
    ActionLane lane = ActionLane::compute;
    std::uint8_t kind = 0;
};

// One SEND/RECV pair of one training step: send_step and recv_step are the actions' indices in
// their ranks' lists (the same in every step), pair_id is the step's own (the actions' pair_id).
struct PairRecord {
    std::int32_t pair_id = 0;
    std::int32_t send_rank = 0;
    std::int32_t send_step = 0;
    std::int32_t recv_rank = 0;
    std::int32_t recv_step = 0;
    std::int64_t bytes = 0;
    std::int32_t training_step = 0;  // 0 the first; 0 in files older than schema version 8
};

struct MemoryRecord {
    std::int32_t rank = 0;
    std::int64_t time_ns = 0;
    std::int64_t bytes = 0;
};

// A ShapeEnv-style recorded call (see engine/recorder/).
struct EventRecord {
    std::int64_t sequence = 0;
    std::int32_t rank = 0;
    std::optional<std::int64_t> parent;  // sequence of the enclosing event
    std::string name;
    std::string arguments;  // JSON
    std::string outcome;    // "ok" or the error text
    // When the call was made, on the run's clock (negative: before the step began); none in a
    // simulation or a file older than schema version 3.
    std::optional<std::int64_t> time_ns;
};

// A mismatch or failure seen during a run.
struct ErrorRecord {
    std::int32_t rank = -1;
    std::int32_t stage = -1;
    std::int32_t microbatch = -1;
    std::string action;  // the action text, when one was running
    std::string kind;    // e.g. "shape_mismatch", "timeout", "rank_died"
    std::string expected;
    std::string actual;
    std::string message;
    std::optional<std::int64_t> time_ns;
    // When the interrupted action started (schema version 7); none when none was running.
    std::optional<std::int64_t> started_ns;
};

// The engine state a rank ended a run in (schema version 2).
struct StateSnapshotRecord {
    std::int32_t rank = 0;
    std::int64_t after_sequence = -1;  // the last event the state includes
    std::string state;                 // JSON array of [field, value] pairs
};

// A profile row's `layer` when it is not one model layer's: a whole stage (or a link), or the
// last stage's loss timed on its own (layer_name "loss").
inline constexpr std::int32_t kProfileWholeStage = -1;
inline constexpr std::int32_t kProfileLoss = -2;

// One figure `run --profile` measured (schema version 6; see schema.sql's `profile`).
struct ProfileRecord {
    std::int32_t rank = 0;
    std::int32_t stage = -1;
    std::int32_t layer = -1;
    std::string layer_name;
    std::string quantity;  // F, I, W, B, OVERLAP_F_B, OVERLAP_F_B_saved (F + B
                           // minus the overlap, timed in pairs; may be negative; older profiles
                           // lack it), held_bytes, backward_peak_bytes, gradient_bytes,
                           // kept_bytes, output_bytes, input_kept_bytes (older profiles lack
                           // it), link
    std::int32_t peer = -1;
    std::int64_t bytes = 0;
    std::int64_t median = 0;
    std::int64_t low = 0;
    std::int64_t high = 0;
    std::int32_t samples = 0;
    friend bool operator==(const ProfileRecord&, const ProfileRecord&) = default;
};

// One sharding propagation decision (filled in by the sharding work).
struct ShardingRecord {
    std::int64_t sequence = 0;
    std::string op;               // schema form, e.g. "aten.mm.default(...)"
    std::string mesh;             // e.g. "DeviceMesh((tp=4), 'cuda', stride=(1,))"
    std::string strategies;       // JSON list of {input_specs, output_spec, costs, total}
    std::int32_t chosen = -1;     // index into strategies
    std::string redistributions;  // JSON list
};

}  // namespace pipelens::traces
