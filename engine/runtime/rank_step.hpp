// One rank of a pipeline run: its set-up (the engine state recorded event by event, the model,
// the batch, its stages and plan) and its measured step, with what follows the step on that rank
// (its times put on rank 0's clock, shared gradients summed, non-finite outputs, the reference
// checks and `--profile`), ending in the report it sends to rank 0.
//
// Invariants: set-up happens before the first barrier, outside the timed step; after the steps'
// message tags every rank takes its tags in the same order (clock alignment, shared gradients,
// profile links); a rank that gives up where the others would wait for it aborts the transport.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "engine/recorder/state_recorder.hpp"
#include "engine/run_record/run_result.hpp"
#include "engine/runtime/memory_account.hpp"
#include "engine/runtime/pipeline_setup.hpp"
#include "engine/runtime/rank_executor.hpp"
#include "engine/runtime/rank_report.hpp"
#include "engine/runtime/transport.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens::runtime {

// Everything a rank needs before the step starts: built once, outside the timed step. The
// recording holds the engine state the rank built, event by event; the plan is made from it.
struct PreparedRank {
    explicit PreparedRank(int rank);
    recorder::StateRecorder recording;
    PipelineModel model;
    std::vector<StageLayers> stages;
    Batch batch;
    RankPlan plan;
    MemoryAccountHandle memory;  // this rank's tensors during the recorded steps
    std::optional<run_record::RunFailure>
        failure;  // set-up failed here (a stage backend's compile error)
};

std::unique_ptr<PreparedRank> prepare_rank(const run_record::PipelineRunOptions& options,
                                           const Schedule& lowered, int rank);

// The warm-up steps, the recorded steps and what follows them on this rank; a failure is in the
// report (and aborts the transport where the other ranks would wait for this one).
RankReport run_prepared_rank(const run_record::PipelineRunOptions& options, const Schedule& lowered,
                             PreparedRank& prepared, Transport& transport);

}  // namespace pipelens::runtime
