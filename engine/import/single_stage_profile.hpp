// A single-stage schedule's actions recovered from a profiler trace that marks none.
// PyTorch's Schedule1F1B (PipelineScheduleSingle._step_microbatches) wraps nothing in a
// record_function range: a rank's trace holds only the operators its step ran. Their structure
// still says what happened: on the thread that ran the step, the stage's forward is the run of
// operators that recorded autograd nodes (the profiler's "fwdbwd" flows start in them), its
// backward the run of the autograd engine's `autograd::engine::evaluate_function:` ranges, and
// the point-to-point communication the `c10d::send` / `c10d::recv_` calls that post it (the
// process group's `gloo:recv` span, where there is one, tells when a receive's data arrived:
// receive_arrival.hpp, the rule the `PP:` ranges' RECVs follow too).
//
// Invariants: forwards are numbered in the order they ran (every single-stage schedule runs
// them in microbatch order); a backward takes the microbatch of the forward its flows lead back
// to (the order it ran in when it has no flows); a send belongs to the compute just before it
// and a receive to the compute just after it (PyTorch posts a stage's sends after the action
// that produced them and waits for its receives before the action that consumes them); every
// action is the rank's own stage (stage = pipeline rank). What does not fit the schedule's
// counts is one ImportError naming the file, the rank, and what was expected and found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/import/chrome_trace_stream.hpp"
#include "engine/import/imported_run.hpp"

namespace pipelens::import {

enum class StageOpKind : std::uint8_t {
    send_post,      // c10d::send: posting a send
    recv_post,      // c10d::recv_: posting a receive
    send_transfer,  // gloo:send / nccl:send: the process group's span of a send
    recv_transfer,  // gloo:recv / nccl:recv
    backward_node,  // autograd::engine::evaluate_function: ...
    autograd_op,    // any other operator with a "Sequence number" (it may record a node)
};

struct StageOp {
    StageOpKind kind = StageOpKind::autograd_op;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::string thread;  // "pid/tid"
};

// One end of a "fwdbwd" flow: from the forward operator that recorded an autograd node to the
// backward range that evaluated it.
struct AutogradFlow {
    std::int64_t id = 0;
    std::int64_t ts_ns = 0;
    std::string thread;
    bool start = false;  // "s" (forward end); else "f" (backward end)
};

struct StageOperators {
    std::vector<StageOp> ops;
    std::vector<AutogradFlow> flows;
    bool has_point_to_point() const;
};

// Keeps `event` in `into` when it is one of the records above; ImportError naming `path` and
// the event's byte when such an operator lacks its start or duration (or it is negative).
void keep_stage_operator(StageOperators& into, const ChromeEvent& event, const std::string& path);

struct StageRecovery {
    std::vector<Action> actions;  // in the order they started
    std::vector<ImportedTiming> timings;
    // Communication found where no compute gives it a microbatch ("a send before any forward").
    std::vector<std::string> unplaced;
};

// The actions of pipeline rank `stage` (its one stage) as the operators show them.
StageRecovery recover_stage_actions(const StageOperators& operators, int stage);

// Throws ImportError naming `path` and `who` ("global rank 1") unless `recovery` holds exactly
// what rank `stage` of a single-stage schedule of `pp` stages and `microbatches` runs: that many
// forwards and backwards, microbatches 0..microbatches-1 each once, and one SEND/RECV per
// microbatch towards each neighbour stage.
void check_single_stage(const StageRecovery& recovery, int stage, int pp, int microbatches,
                        const std::string& path, const std::string& who);

}  // namespace pipelens::import
