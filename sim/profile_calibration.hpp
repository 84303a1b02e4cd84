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
#include <vector>

#include "engine/experiment/experiment.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::sim {

struct ProfileCalibration {
    LayerCosts layers;
    double overlap_efficiency = 0;
    LinkSpec link;
    int link_sizes = 0;  // distinct message sizes the link fit used
};

// `run_id` only names the run in errors (std::invalid_argument).
ProfileCalibration calibrate_from_profile(const std::vector<traces::ProfileRecord>& profile,
                                          std::int64_t run_id);

// latency + bytes / bandwidth through (bytes, one-way ns) points, by least squares.
LinkSpec fit_link(const std::vector<std::pair<std::int64_t, std::int64_t>>& points,
                  std::int64_t run_id);

}  // namespace pipelens::sim
