// The checks of a pipeline run against the same model run on one rank (built from the same seed):
// `--check-reference` compares the loss, the last stage's outputs and every gradient with the
// whole model on the whole batch; `--check-accuracy` runs the reference stage by stage on each
// microbatch, so that the first stage whose outputs diverge names where an error entered.
//
// Invariants: the reference computes in the run's dtype on the run's device (as the stages do),
// and a value matches within that dtype's run_record::reference_tolerance; every error is the
// largest seen (NaN wins, see run_record::larger_error); the reference is built and run after
// the step, so nothing here is timed.
#pragma once

#include <vector>

#include "engine/run_record/run_result.hpp"
#include "engine/runtime/pipeline_setup.hpp"
#include "engine/runtime/rank_executor.hpp"
#include "engine/runtime/rank_report.hpp"

namespace pipelens::runtime {

// Sets the report's reference loss, output and gradient errors and whether they match, for the
// stages `plan` holds (outputs only where it holds the last stage).
void compare_with_reference(const run_record::PipelineRunOptions& options, int stage_count,
                            const std::vector<StageLayers>& stages, const RankPlan& plan,
                            const Batch& batch, RankReport& report);

// Every stage of this rank against the reference model run stage by stage on the same
// microbatch, by (microbatch, stage).
std::vector<run_record::StageAccuracy> check_stage_accuracy(
    const run_record::PipelineRunOptions& options, int stage_count,
    const std::vector<StageLayers>& stages, const RankPlan& plan, const Batch& batch);

}  // namespace pipelens::runtime
