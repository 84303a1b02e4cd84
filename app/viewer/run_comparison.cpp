// The compared pair's divergence and its lines (run_comparison.hpp).
#include "app/viewer/run_comparison.hpp"

#include <fmt/format.h>

#include "traces/text/quantities.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::viewer {
namespace {

// As `pipelens diff` refuses them: what differs, or "" when the runs can be compared.
std::string difference_in_shape(const traces::RunRecord& measured,
                                const traces::RunRecord& simulated) {
    const auto differ = [&](std::string_view what, const auto& left, const auto& right) {
        return left == right ? std::string()
                             : fmt::format("no split: run {} has {} {} but run {} has {} {}",
                                           measured.id, what, left, simulated.id, what, right);
    };
    for (const traces::RunRecord* run : {&measured, &simulated})
        if (run->status != traces::RunStatus::finished)
            return fmt::format("no split: run {} has no step: diff compares finished steps",
                               run->id);
    for (std::string refused :
         {differ("schedule", measured.schedule, simulated.schedule),
          differ("pp", measured.pp, simulated.pp), differ("v", measured.v, simulated.v),
          differ("m", measured.m, simulated.m)})
        if (!refused.empty())
            return refused;
    return "";
}

std::string signed_duration(std::int64_t ns) {
    return fmt::format("{}{}",
                       ns > 0   ? "+"
                       : ns < 0 ? "-"
                                : "",
                       format_duration(ns < 0 ? -ns : ns));
}

std::string run_name(const traces::RunRecord& run) {
    return fmt::format("run {} ({})", run.id, run.kind == traces::RunKind::real ? "real" : "sim");
}

std::vector<std::string> lines_of(const ComparisonSplit& split, const std::string& prefix,
                                  const analysis::Measured& time,
                                  const analysis::DivergenceSplit& parts,
                                  const std::string& parts_prefix = "") {
    return {
        fmt::format("{}{} {} vs {} {}: {}", prefix, run_name(split.measured),
                    format_duration(time.measured), run_name(split.simulated),
                    format_duration(time.simulated), signed_duration(time.difference())),
        fmt::format("{}speed {}  kinds {}  communication {}  ordering {}", parts_prefix,
                    signed_duration(parts.speed_ns), signed_duration(parts.kinds_ns),
                    signed_duration(parts.communication_ns), signed_duration(parts.ordering_ns))};
}

}  // namespace

ComparisonSplit split_comparison(const TimelineModel& shown, const TimelineModel& compared,
                                 const std::string& source) {
    ComparisonSplit split;
    split.shown_measured = !(shown.run().kind == traces::RunKind::simulated &&
                             compared.run().kind == traces::RunKind::real);
    const TimelineModel& measured = split.shown_measured ? shown : compared;
    const TimelineModel& simulated = split.shown_measured ? compared : shown;
    split.measured = measured.run();
    split.simulated = simulated.run();
    split.refused = difference_in_shape(split.measured, split.simulated);
    if (!split.refused.empty())
        return split;
    try {
        split.divergence = analysis::run_divergence(measured.timed_schedule(source),
                                                    simulated.timed_schedule(source));
    } catch (const traces::TraceError& error) {
        split.refused = std::string("no split: ") + error.what();
    }
    return split;
}

std::vector<std::string> split_lines(const ComparisonSplit& split, std::optional<int> step) {
    if (!split.divergence)
        return split.refused.empty() ? std::vector<std::string>{}
                                     : std::vector<std::string>{split.refused};
    const analysis::RunDivergence& divergence = *split.divergence;
    if (step) {
        for (const analysis::StepDivergence& row : divergence.steps)
            if ((split.shown_measured ? row.real_step : row.sim_step) == *step)
                return lines_of(split, fmt::format("step {}: ", *step), row.step_time, row.split);
        return {fmt::format("step {}: no step of the other run to compare", *step)};
    }
    if (divergence.steps.size() == 1)
        return lines_of(split, "", divergence.steps[0].step_time, divergence.steps[0].split);
    if (divergence.steps.empty())
        return {"no step to compare"};
    return lines_of(split, fmt::format("over {} steps, median: ", divergence.steps.size()),
                    divergence.median_step_time, divergence.mean_split, "mean ");
}

}  // namespace pipelens::viewer
