// What one rank of a pipeline run reports to rank 0, how the report travels (JSON, through the
// transport or a report file), and how rank 0 merges every rank's report into the run's result.
//
// Invariants: rank_report_from_json(rank_report_to_json(r)) gives r back, NaN and Inf included
// (JSON has neither; they travel as their names), except a timeline's bytes, which a real run
// does not know: they come back as -1. A rank without a report becomes a failed rank of the
// result (`rank_died` or `lost`), never a missing one. Torch-free.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/run_record/run_result.hpp"

namespace pipelens::runtime {

struct RankReport {
    run_record::RankRun run;
    bool holds_last_stage = false;
    double loss = 0;
    double reference_loss = 0;
    double output_max_error = 0;
    double gradient_max_error = 0;
    bool outputs_match = true;
    bool gradients_match = true;
    std::vector<run_record::StageAccuracy> accuracy;
    nlohmann::json recording;  // recorder::recording_to_json
    std::vector<run_record::ProfileFigure> profile;
};

nlohmann::json rank_report_to_json(const RankReport& report);
// Throws nlohmann::json::exception for JSON that is not a report.
RankReport rank_report_from_json(const nlohmann::json& json);

// One report per payload (rank i's at i). An empty payload is a rank that never reported: it
// ended (how, when `deaths` says: "killed by signal 9 (Killed)", "exited with code 2"; a
// `rank_died` failure) or hangs (`lost`).
std::vector<RankReport> reports_from_payloads(const std::vector<std::string>& payloads,
                                              const run_record::PipelineRunOptions& options,
                                              const std::vector<std::string>& deaths = {});

// The run's result from every rank's report: completed when no rank failed, the loss from the
// rank that holds the last stage, errors as the largest of the ranks', accuracy by stage.
run_record::PipelineRunResult merge_reports(const std::vector<RankReport>& reports,
                                            const run_record::PipelineRunOptions& options);

}  // namespace pipelens::runtime
