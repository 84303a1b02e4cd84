// A real run's report as `run` prints it, as text or one JSON object: the figures every run has
// (run_report.hpp), then what only a real run has: its steps' spread, loss, the single-rank
// reference and accuracy checks, LibTorch's profiles and the stragglers.
//
// Invariant: a failed run's steps are its whole ones (run_record::whole_steps), and it shows no
// loss or reference comparison, since nothing was computed to the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/run_report.hpp"
#include "engine/analysis/stragglers.hpp"
#include "engine/run_record/run_result.hpp"

namespace pipelens::cli {

// What a run's report says beside its figures.
struct RealRunReport {
    const RunFigures& figures;
    std::optional<std::int64_t> run_id;
    std::optional<std::string> device_note;  // ranks sharing one device
    std::optional<analysis::StragglerReport> stragglers;
    std::size_t whole_steps = 0;
};

nlohmann::ordered_json result_json(const run_record::PipelineRunResult& result,
                                   const run_record::PipelineRunOptions& run,
                                   const RealRunReport& report);

void print_text(const run_record::PipelineRunResult& result,
                const run_record::PipelineRunOptions& run, const RealRunReport& report,
                const std::string& title, const std::string& out);

}  // namespace pipelens::cli
