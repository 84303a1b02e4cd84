// Running a pipeline for real: the torch-free face of engine/runtime, so the CLI and the trace
// code never include LibTorch. A run builds the model on every rank from one seed, splits it
// into stages, fixes every boundary's metadata by shape inference on one microbatch, executes
// one training step of the lowered schedule on the chosen transport, and compares the loss,
// outputs and gradients with the same model run whole on one rank. Its options and result are
// plain values (engine/run_record/run_result.hpp).
#pragma once

#include <string>
#include <vector>

#include "engine/run_record/run_result.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens::runtime {

// `lowered` must come from the experiment's schedule. For `local` every rank runs as a thread
// here and the result has all ranks. For `gloo`/`nccl` this process runs options.rank; rank 0
// gets every rank's part, the others only their own. Throws std::invalid_argument for a bad
// option (model, split, fault, batch) and TransportUnavailable-derived errors as
// std::runtime_error with one-line messages.
run_record::PipelineRunResult run_pipeline(const run_record::PipelineRunOptions& options,
                                           const Schedule& lowered);

// What a launcher knows when rank 0 did not gather: the reports ranks wrote to its directory
// (rank_files.hpp; an empty payload: none), and for each rank how it died ("killed by signal 9
// (Killed)"; empty: it exited). A rank without a report is a `rank_died` failure when it died,
// else `lost`. std::invalid_argument for a report that is not one.
run_record::PipelineRunResult merge_rank_reports(const std::vector<std::string>& payloads,
                                                 const std::vector<std::string>& deaths,
                                                 const run_record::PipelineRunOptions& options,
                                                 const Schedule& lowered);

}  // namespace pipelens::runtime
