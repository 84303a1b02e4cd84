// A real run's report as text and JSON (real_run_report.hpp).
#include "app/cli/real_run_report.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/cli/torch_profile_option.hpp"
#include "engine/run_record/repeated_timing.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::cli {
namespace {

// The recorded steps' times: how many, how many ran unrecorded first, and the spread.
// A failed run counts its whole steps only: the one it failed in has no step time.
nlohmann::ordered_json steps_json(const run_record::PipelineRunResult& result,
                                  const run_record::PipelineRunOptions& run, std::size_t whole) {
    const std::vector<std::int64_t> times(result.step_times_ns.begin(),
                                          result.step_times_ns.begin() + whole);
    const run_record::Spread spread = run_record::spread_of(times);
    const auto [low, high] = std::minmax_element(times.begin(), times.end());
    const bool any = !times.empty();
    return {{"recorded", whole},          {"warmup", run.warmup_steps}, {"times_ns", times},
            {"median_ns", spread.median}, {"min_ns", any ? *low : 0},   {"p10_ns", spread.low},
            {"p90_ns", spread.high},      {"max_ns", any ? *high : 0}};
}

// "5 steps recorded after 2 warm-up: median 1.2 ms, min .., p10 .., p90 .., max .." for several
// steps; of a run that failed, the steps it completed before it did (its step figures are "-").
std::string steps_text(const run_record::PipelineRunResult& result,
                       const run_record::PipelineRunOptions& run, std::size_t whole) {
    if (whole < 2)
        return "";
    const nlohmann::ordered_json json = steps_json(result, run, whole);
    return fmt::format(
        "{} steps {} after {} warm-up: step time median {}, min {}, p10 {}, p90 {}, max {} "
        "({})\n",
        whole, result.completed ? "recorded" : "completed before the run failed", run.warmup_steps,
        format_duration(json["median_ns"].get<std::int64_t>()),
        format_duration(json["min_ns"].get<std::int64_t>()),
        format_duration(json["p10_ns"].get<std::int64_t>()),
        format_duration(json["p90_ns"].get<std::int64_t>()),
        format_duration(json["max_ns"].get<std::int64_t>()),
        result.completed ? "busy and bubble are the median step's, peak memory the highest of the "
                           "steps"
                         : "the step that failed is not among them");
}

// A GPU rank's peak counts what its steps held beyond what the device already held; that is
// said beside it, so the device's whole figure is their sum.
void add_memory_before_steps(nlohmann::ordered_json& rows,
                             const std::vector<run_record::RankRun>& ranks) {
    for (nlohmann::ordered_json& row : rows)
        for (const run_record::RankRun& rank : ranks)
            if (rank.rank == row["rank"].get<int>() && rank.memory_before_steps_bytes)
                row["device_memory_before_steps_bytes"] = *rank.memory_before_steps_bytes;
}

}  // namespace

nlohmann::ordered_json result_json(const run_record::PipelineRunResult& result,
                                   const run_record::PipelineRunOptions& run,
                                   const RealRunReport& report) {
    const auto& [figures, run_id, device_note, stragglers, whole_steps] = report;
    nlohmann::ordered_json json = run_figures_json(figures, run_id);
    add_memory_before_steps(json["ranks"], result.ranks);
    json["completed"] = result.completed;
    // A failed run computed no loss and compared nothing, whatever its last stage held.
    json["loss"] = result.completed ? nlohmann::ordered_json(result.loss) : nullptr;
    json["device"] = result.device;
    // Only where the run chose another: a float32 run's object is what it always was.
    if (run.dtype != run_record::kDefaultRunDtype)
        json["dtype"] = run.dtype;
    if (device_note)
        json["device_shared"] = *device_note;
    const run_record::ReferenceComparison& reference = result.reference;
    json["reference"] = {{"checked", reference.checked && result.completed},
                         {"loss", reference.reference_loss},
                         {"loss_error", reference.loss_error},
                         {"output_max_error", reference.output_max_error},
                         {"gradient_max_error", reference.gradient_max_error},
                         {"outputs_match", reference.outputs_match},
                         {"gradients_match", reference.gradients_match}};
    nlohmann::ordered_json errors = nlohmann::ordered_json::array();
    for (const run_record::RankRun& rank : result.ranks)
        if (rank.failure)
            errors.push_back({{"rank", rank.failure->rank},
                              {"stage", rank.failure->stage},
                              {"microbatch", rank.failure->microbatch},
                              {"action", rank.failure->action},
                              {"kind", rank.failure->kind},
                              {"expected", rank.failure->expected},
                              {"actual", rank.failure->actual},
                              {"message", rank.failure->message}});
    json["errors"] = std::move(errors);
    if (result.accuracy.checked) {
        nlohmann::json accuracy = {{"diverges", result.accuracy.first_divergence.has_value()}};
        if (const auto& first = result.accuracy.first_divergence)
            accuracy["first_divergence"] = {{"stage", first->stage},
                                            {"rank", first->rank},
                                            {"microbatch", first->microbatch},
                                            {"non_finite", first->non_finite},
                                            {"max_abs_error", first->max_abs_error},
                                            {"max_relative_error", first->max_relative_error}};
        accuracy["max_abs_error"] = result.accuracy.largest_abs_error();
        json["accuracy"] = std::move(accuracy);
    }
    json["steps"] = steps_json(result, run, whole_steps);
    if (!run.torch_profile_directory.empty())
        json["torch_profiles"] = torch_profile_files(run.torch_profile_directory, run.world_size);
    json["stragglers"] =
        stragglers ? stragglers_json(*stragglers) : nlohmann::ordered_json(nullptr);
    return json;
}

void print_text(const run_record::PipelineRunResult& result,
                const run_record::PipelineRunOptions& run, const RealRunReport& report,
                const std::string& title, const std::string& out) {
    const auto& [figures, run_id, device_note, stragglers, whole_steps] = report;
    std::string text = format_run_figures(title, figures);
    fmt::print("{}", text);
    fmt::print("{}", steps_text(result, run, whole_steps));
    if (stragglers)
        fmt::print("{}", analysis::format_stragglers(*stragglers));
    if (device_note)
        fmt::print("note: {}\n", *device_note);
    if (result.completed) {
        fmt::print("loss {:.6f}\n", result.loss);
        const run_record::ReferenceComparison& reference = result.reference;
        if (reference.checked)
            fmt::print(
                "single-rank reference: loss {:.6f}; outputs {} (max abs error {:.3g}); "
                "gradients {} (max abs error {:.3g})\n",
                reference.reference_loss, reference.outputs_match ? "match" : "DIFFER",
                reference.output_max_error, reference.gradients_match ? "match" : "DIFFER",
                reference.gradient_max_error);
    }
    // A divergence is the run's finding, said with the figures (format_run_figures).
    if (result.accuracy.checked && result.completed && !result.accuracy.first_divergence)
        fmt::print(
            "accuracy: every stage's outputs match the single-rank reference on every microbatch "
            "(max abs error {:.3g})\n",
            result.accuracy.largest_abs_error());
    for (const run_record::RankRun& rank : result.ranks)
        if (rank.failure)
            fmt::print(stderr, "rank {}: {}\n", rank.rank, rank.failure->message);
    const std::vector<std::string> profiles =
        torch_profile_files(run.torch_profile_directory, run.world_size);
    if (!profiles.empty())
        fmt::print("LibTorch's profile of the recorded steps, per rank: {}\n",
                   fmt::join(profiles, ", "));
    if (run_id)
        fmt::print("recorded as run {} in {}\n", *run_id, out);
}

}  // namespace pipelens::cli
