// The figures of one run as `simulate` prints them and `summary` reprints them from a trace:
// step time, overall bubble ratio, and per rank busy and bubble time, the bubble split into
// warm-up, cool-down and waiting on each peer, and peak memory. One formatter for both, so a
// trace read back prints exactly what the simulation printed. Also a run's stragglers as JSON,
// one form for `summary --stragglers` and `run`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/analysis/stragglers.hpp"
#include "traces/run_memory.hpp"
#include "traces/run_outcome.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::cli {

struct RunFigures {
    std::int64_t step_time_ns = 0;  // step_time_ns and bubble_ratio: only when the run has a step
    double bubble_ratio = 0;
    std::vector<traces::RankRecord> ranks;  // as the trace stores them
    // What peak memory counts, named by its label (a simulation: what its costs sized).
    traces::MemoryCounts memory = traces::MemoryCounts::tensors;
    // How the run ended: a failed or unfinished run has no step, so no step time, bubble or
    // cool-down is shown for it, and its header says how it ended instead.
    traces::RunOutcome outcome;
};

// A run's figures as a trace holds them (the run's row, its ranks and its outcome).
RunFigures recorded_run_figures(const traces::TraceReader& reader, const traces::RunRecord& run);

// "title\nstep time 28.100 ms, bubble ratio 20.1%\n\n<rank table>"; a run without a step:
// "title: FAILED\nfailed at rank 1, stage 1, action 1F0: <its first error>\n\n<rank table>".
std::string format_run_figures(const std::string& title, const RunFigures& figures);

// {"step_time_ns", "bubble_ratio", "peak_memory_counts": "tensors" | "activations" |
//  "activations_and_gradients" (what every peak_memory_bytes counts), ["failed": {rank, stage,
//  microbatch, action, kind, message, text}], "ranks": [{rank, busy_ns, bubble_ns, bubble_ratio,
//  peak_memory_bytes, warmup_ns, cooldown_ns, waiting_on: {peer: ns}, and for a real run
//  clock_offset_ns, clock_uncertainty_ns and, where measured, core_wait_ns}], "run_id"}; a run
//  without a step has null step time, bubble ratios, bubble and cool-down, and a failed one the
//  "failed" object. A real rank whose memory nothing sampled has a null peak_memory_bytes ("-" in
//  the text).
nlohmann::ordered_json run_figures_json(const RunFigures& figures,
                                        std::optional<std::int64_t> run_id);

// A run's stragglers (engine/analysis/stragglers.hpp) as `summary --stragglers` and `run` print
// them: {"threshold", "reference": "calibration" | "other ranks", "flagged": [{rank, step, ratio,
// computations, flagged, on_critical_path, cost_ns}], "steps": [{step, step_time_ns,
// relative_throughput, slowest_rank, fastest_rank, ranks: [as flagged]}]}.
nlohmann::ordered_json stragglers_json(const analysis::StragglerReport& report);

}  // namespace pipelens::cli
