// Records a real run into a trace with the same tables a simulation fills: the run (kind
// `real`), per-rank figures, every executed action with its measured start and end on the
// compute or communication lane, the send/recv pairs, and every rank's failure in `errors`.
// A run that failed is still recorded (what ran, and why it stopped) and marked `failed`.
#pragma once

#include <cstdint>

#include "engine/experiment/experiment.hpp"
#include "engine/run_record/run_result.hpp"
#include "engine/schedule/schedule.hpp"
#include "traces/run_outcome.hpp"
#include "traces/trace_records.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::run_record {

// Per-rank busy/bubble/warm-up/cool-down/waiting from a measured timeline, by
// engine/analysis/bubble_accounting.hpp (a rank is never recorded waiting on itself).
std::vector<traces::RankRecord> real_rank_records(const Schedule& lowered,
                                                  const PipelineRunResult& result);

// How many recorded steps, from the first, every rank that reported ran whole (each of its
// actions): all of them in a completed run; in a failed one, those before the step it failed
// in, whose times end at the failure and are no step's.
std::size_t whole_steps(const Schedule& lowered, const PipelineRunResult& result);

// "stage 2 microbatch 0 is the first to diverge from the single-rank reference: max abs error
// 1, max relative error 0.25 (tolerance rtol 0.0001, atol 1e-05)", quoting the tolerance the
// outputs were held to (the run's dtype's; float32's unless given).
std::string accuracy_message(
    const StageAccuracy& divergence,
    const ReferenceTolerance& tolerance = reference_tolerance(kDefaultRunDtype));

// Every error the run records, in the order the trace's errors table gets them: the accuracy
// check's first divergence (an `accuracy_mismatch`), each rank's failure, then the further ones.
std::vector<traces::ErrorRecord> run_error_records(const PipelineRunResult& result);

// How the run ended, exactly as its trace reads back (traces/run_outcome.hpp): failed unless
// every rank ran every action, and then named by the root cause of its errors.
traces::RunOutcome real_run_outcome(const PipelineRunResult& result);

// Also writes every rank's recording (events, final state, failed calls) and the accuracy
// check's first divergence as an `accuracy_mismatch` error. When a write throws, the run is
// marked failed with that error (as far as the file allows) and the error is rethrown.
std::int64_t record_real_run(traces::TraceWriter& writer, const Schedule& lowered,
                             const PipelineRunResult& result, const Experiment& experiment);

// The same for a run that pipelens did not execute itself (an imported one): `config` is the
// text kept as the run's configuration, `kind` whether its times were measured or are
// PyTorch's unit-step simulation.
std::int64_t record_measured_run(traces::TraceWriter& writer, const Schedule& lowered,
                                 const PipelineRunResult& result, const std::string& config,
                                 traces::RunKind kind = traces::RunKind::real);

}  // namespace pipelens::run_record
