// Calibration from what `run --profile` measured (the trace's `profile` table): costs per model
// layer, so any pp, v or split re-derives stage costs (sim/layer_costs.hpp), with the per-stage
// overhead and the loss fitted as what the layers leave unexplained; the overlap efficiency of
// OVERLAP_F_B against F + B; and the link's latency and bandwidth fitted to one-way times of
// several message sizes (least squares over latency + bytes / bandwidth, through each size's
// 10th percentile: scheduling delays on a busy machine only add time).
//
// Invariants: every figure written is finite and non-negative; a fit that gives a negative or
// non-finite latency or a bandwidth that is not positive is an error naming the quantity and
// its figures, never a value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/experiment/experiment.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::sim {

struct ProfileCalibration {
    LayerCosts layers;
    double overlap_efficiency = 0;
    LinkSpec link;
    int link_sizes = 0;  // distinct message sizes the link fit used
    // How the fit was held to a link (fit_link): empty when the free fit was one already.
    std::string link_fit_note;
};

// What the profiled run itself measured for one stage's computations: the medians of its F and
// of its backward (B, or I + W where the schedule split it), and of its I and W where it split
// it; 0 where it ran none.
struct RunStageTimes {
    std::int64_t forward_ns = 0;
    std::int64_t backward_ns = 0;
    std::int64_t input_ns = 0;
    std::int64_t weight_ns = 0;
};

// The profile runs seconds after the step, yet on a shared machine its level can differ from
// the step's by 10-20 %, and it takes few samples of each figure. The step's own stage times
// are the truth about the level, the profile about how it splits into layers and kinds: each
// stage's F figures (its layers', the loss's) are scaled so that they add up to the step's
// F (`run_stages`: calibration passes the runs' means), its I, W and B figures so that its
// items' B add up to the step's backward, and OVERLAP_F_B (and its saving) by the mean of the
// two factors; the whole stage's F and B become the step's. Where the step split a stage's
// backward (a zero-bubble schedule), its I figures are scaled to add up to the step's I and its
// W figures to its W instead, and the whole stage's I and W become the step's: the profile's
// I + W can lie well above its B (18.5 ms against 11.4 under load), which once predicted such a
// run 18 % long in sample. Not on the first stage, whose I computes nothing in a run (there is
// no gradient to send back) while its layers' I figures hold what they cost on a later stage.
// Returns the factors, by stage (1 where the step ran nothing to compare with).
struct StageScale {
    double forward = 1;
    double backward = 1;
    double input = 1;   // the backward's where the step did not split it
    double weight = 1;  // likewise
};
std::vector<StageScale> anchor_profile_to_run(std::vector<traces::ProfileRecord>& profile,
                                              const std::vector<RunStageTimes>& run_stages);

// Several profiles of one configuration as one: each figure (by rank, stage, layer, quantity,
// peer and size) the median of its medians, lows and highs over the profiles that have it, its
// samples their sum. Figures keep the first profile's order.
std::vector<traces::ProfileRecord> median_profile(
    const std::vector<std::vector<traces::ProfileRecord>>& profiles);

// `run_id` only names the run in errors (std::invalid_argument).
ProfileCalibration calibrate_from_profile(const std::vector<traces::ProfileRecord>& profile,
                                          std::int64_t run_id);

// latency + bytes / bandwidth through (bytes, one-way ns) points, by least squares with both
// terms held non-negative: where the times do not grow with the size (a fast link whose
// messages here are all latency, or noise larger than the transfer) the link is its mean time
// with no bandwidth limit; where the line would start below zero, the line through the origin.
// Either way `note` (when given) says which, with the times, so a user can judge the fit.
LinkSpec fit_link(const std::vector<std::pair<std::int64_t, std::int64_t>>& points,
                  std::int64_t run_id, std::string* note = nullptr);

}  // namespace pipelens::sim
