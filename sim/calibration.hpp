// Calibration: an experiment whose cost model reproduces a measured run. From a real run in a
// trace it takes, per stage, the median over the recorded training steps of each step's median
// duration of each kind of computation (F, I, W, B) and, for the link, of each step's median
// delivery time of the transfers whose receiver was waiting from before the send (recv end minus
// send start: the whole transfer, no waiting for the sender, no receiver busy elsewhere).
// Simulating the result and comparing with the measured step tells how far the simulator's model is
// from the machine; the experiment can then be changed (more microbatches, another schedule) to ask
// what-if questions with measured costs.
//
// Invariants: `calibrate` takes measurements only (real runs, never a simulation); a stage whose
// I and W were not measured says so (assumed_split_stages); no figure that a real computation
// cannot have (sim/calibration_checks.hpp) is ever returned.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "engine/experiment/experiment.hpp"
#include "sim/calibration_checks.hpp"
#include "sim/profile_calibration.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::sim {

// Which runs a calibration takes: `calibrate` only measurements (a simulation's costs are the
// ones it was given, and its step is no measurement); `import --simulate` any recorded timeline,
// as PyTorch's own schedule dumps are unit-step simulations it reproduces.
enum class Timelines { measured, any };

// How a stage's I and W were had: the B a run timed whole is split into these halves when
// nothing timed I and W apart (no profile, a schedule that never splits its backward).
inline constexpr const char* kAssumedBackwardSplit = "I = B / 2, W = B - I";

// The fewest transfers seen delivered whole that set a profiled link's latency: one 20-step
// 1F1B pp=2 run sees about 40.
inline constexpr int kLeastSeenTransfers = 8;

struct Calibration {
    Experiment experiment;
    std::int64_t measured_step_ns = 0;  // the median over the runs
    // By rank, the median over the runs that sampled it; nullopt where none did (a real rank's
    // tensors always include its weights, so a recorded 0 is no sample: an import without memory).
    std::map<int, std::optional<std::int64_t>> measured_peak_bytes;
    // The runs' own transfers whose delivery they saw whole (the receiver waiting from before
    // the send: engine/analysis/transfer_deliveries.hpp): how many, and the median over the
    // steps of each step's median delivery (recv end minus send start) and message size.
    // Without a profile the link's latency is that delivery. With one, the link's bandwidth is
    // fitted to the profile's timed messages and, from kLeastSeenTransfers seen transfers on,
    // its latency set so that it delivers the median message in the median delivery
    // (link_latency_from_run; profile_link_latency_ns keeps the profile's own).
    int transfer_samples = 0;
    std::int64_t run_delivery_ns = 0;
    std::int64_t run_delivery_bytes = 0;
    bool link_latency_from_run = false;
    std::int64_t profile_link_latency_ns = 0;
    // The median SEND span of the runs (the host's time to issue one), charged to the experiment
    // for gloo runs only (Experiment::send_issue_ns).
    std::int64_t send_issue_ns = 0;
    // Of the time some rank computed, the share during which two or more did (the median over
    // the runs; parallel_compute_share): see SideBySide.
    double measured_side_by_side = 0;
    bool from_profile = false;  // per-layer costs from `run --profile`
    int link_sizes = 0;         // message sizes the link fit used (from a profile)
    std::string link_fit_note;  // how the link fit was held to a link; empty when it was not
    // By stage: how the profile's figures were scaled to the run's own step (profile only).
    std::vector<StageScale> profile_scales;
    // Stages whose I and W are kAssumedBackwardSplit of their B, not measured (runs without a
    // profile whose schedule ran the stage's backward whole); empty when all were measured.
    std::vector<int> assumed_split_stages;
};

// The latest real (measured) run of the trace: what `calibrate` takes without --run. Throws
// std::invalid_argument naming the runs the trace has when none of them is real.
std::int64_t latest_measured_run(const traces::TraceReader& reader);

// With a profile (`run --profile`) the experiment has per-layer costs ([layers]), the run's own
// model section, the measured overlap efficiency and a fitted link; without one, per-stage
// medians of the run's own actions (so it transfers to no other stage count).
// Throws std::invalid_argument when the run is not a finished run of a generated schedule kind,
// (and no schedule file is given), is a simulation while `timelines` is measured, or when a
// profile's figures cannot be fitted (naming the quantity); ImpossibleCalibration (one line per
// figure) when the fitted figures are ones no real run can have (sim/calibration_checks.hpp).
// A run of a schedule no kind generates (an imported one) is calibrated when `schedule_file`
// names its compute-only CSV: the experiment then takes the schedule from that file.
Calibration calibrate_from_trace(const traces::TraceReader& reader, std::int64_t run_id,
                                 const std::string& schedule_file = {},
                                 Timelines timelines = Timelines::measured);

// The same from repeats of one configuration (same schedule, shape and recorded configuration),
// so one slow moment of a shared machine does not set the costs: each profile figure is the
// median over the runs' figures, the stage times taken from the steps are medians over every
// recorded step of all the runs (analysis::split_by_training_step), and the measured step the
// median of the runs' step times. Runs that differ, or profiled mixed with unprofiled ones,
// are refused naming both.
Calibration calibrate_from_runs(const traces::TraceReader& reader,
                                const std::vector<std::int64_t>& run_ids,
                                const std::string& schedule_file = {},
                                Timelines timelines = Timelines::measured);

}  // namespace pipelens::sim
