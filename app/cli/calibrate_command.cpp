// `pipelens calibrate TRACE.db [--run N]... [--out EXP.toml] [--json]`: builds an experiment from
// a real run's measured times (or the medians over several repeats of one configuration),
// simulates it, and reports how close the simulated step is to the measured one; --out writes
// the experiment so `pipelens simulate` can explore from there. Only real runs are taken (the
// latest by default), a fit no real run can have is refused with exit 1 before anything is
// written, and figures that rest on an assumption (I and W without a profile) say so.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/output_file.hpp"
#include "app/cli/run_list_option.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "sim/calibration.hpp"
#include "sim/calibration_checks.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/simulator.hpp"
#include "sim/step_spread.hpp"
#include "sim/zero_bubble_inputs.hpp"
#include "traces/core_wait.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::cli {
namespace {

// The profile's link against the run's own transfers: a profile times messages with both sides
// idle and ready, and a transfer inside a pipeline can take longer; from enough seen transfers
// the link's latency is the run's (sim/calibration.hpp), and the line says what it replaced.
void print_delivery_check(const sim::Calibration& calibration, const sim::Link& link) {
    fmt::print(
        "  transfers in the run: {} for {} (median of {} seen whole: the receiver waiting "
        "from before the send)",
        format_duration(calibration.run_delivery_ns), format_bytes(calibration.run_delivery_bytes),
        calibration.transfer_samples);
    if (calibration.link_latency_from_run) {
        const sim::Link profiled{calibration.profile_link_latency_ns, link.bytes_per_ns};
        fmt::print(
            "; the profile's link gives {}, so the link's latency is set from the run "
            "({} instead of the profile's {})\n",
            format_duration(profiled.transfer_ns(calibration.run_delivery_bytes)),
            format_duration(link.latency_ns), format_duration(profiled.latency_ns));
        return;
    }
    const std::int64_t predicted = link.transfer_ns(calibration.run_delivery_bytes);
    fmt::print("; the link gives {}\n", format_duration(predicted));
    if (predicted > 0 && calibration.run_delivery_ns > predicted + predicted / 2)
        fmt::print(
            "  note: the run's transfers took {:.1f}x the link's time; the simulation "
            "is short by the difference on each transfer its critical path crosses\n",
            static_cast<double>(calibration.run_delivery_ns) / static_cast<double>(predicted));
}

struct CalibrateOptions {
    std::string trace;
    std::vector<std::int64_t> runs;
    std::string out;
    bool json = false;
};

std::string durations(const std::vector<std::int64_t>& values) {
    std::vector<std::string> texts;
    for (std::int64_t value : values)
        texts.push_back(format_duration(value));
    return fmt::format("{}", fmt::join(texts, ", "));
}

// The per-stage costs reported: JSON key, label, value.
struct StageCostColumn {
    std::string key;
    std::string label;
    std::int64_t (*of)(const sim::StageCost&);
};

std::vector<StageCostColumn> stage_cost_columns() {
    return {{"f_ns", "F", [](const sim::StageCost& stage) { return stage.forward_ns; }},
            {"i_ns", "I", [](const sim::StageCost& stage) { return stage.input_ns; }},
            {"w_ns", "W", [](const sim::StageCost& stage) { return stage.weight_ns; }},
            {"b_ns", "B", [](const sim::StageCost& stage) { return stage.backward_ns(); }}};
}

std::int64_t simulated_peak(const sim::SimulationResult& simulated, int rank) {
    for (const auto& entry : simulated.ranks)
        if (entry.rank == rank)
            return entry.peak_memory_bytes;
    return 0;
}

// A run that cannot be calibrated from: exit 2, the trace named.
CommandFailure unusable(const CalibrateOptions& options, const std::exception& error) {
    return CommandFailure(kExitUsage, fmt::format("pipelens: {}: {}", options.trace, error.what()));
}

// The runs asked for, or the latest real one: a simulation is never taken by default.
std::vector<std::int64_t> chosen_runs(const CalibrateOptions& options,
                                      const traces::TraceReader& reader) {
    if (!options.runs.empty()) {
        // A run named twice counted twice in every median.
        for (std::size_t index = 0; index < options.runs.size(); ++index)
            if (std::find(options.runs.begin(), options.runs.begin() + index,
                          options.runs[index]) != options.runs.begin() + index)
                throw CommandFailure(kExitUsage,
                                     fmt::format("pipelens: --run names run {} twice; each run "
                                                 "counts once in the medians",
                                                 options.runs[index]));
        return options.runs;
    }
    try {
        return {sim::latest_measured_run(reader)};
    } catch (const std::invalid_argument& error) {
        throw unusable(options, error);
    }
}

// Calibrates, or fails with one line per reason: figures no real run can have are input that
// was read but is wrong (exit 1), anything else a run that cannot be calibrated from (exit 2).
sim::Calibration calibrated(const CalibrateOptions& options, const traces::TraceReader& reader,
                            const std::vector<std::int64_t>& run_ids) {
    try {
        return sim::calibrate_from_runs(reader, run_ids);
    } catch (const sim::ImpossibleCalibration& refused) {
        std::vector<std::string> lines;
        for (const std::string& figure : refused.figures())
            lines.push_back(fmt::format("pipelens: {}: {}", options.trace, figure));
        // With a profile the usual cause is the machine, not the run: said once, after the
        // figures. (Without one the figures are the run's own actions.)
        if (refused.from_profile())
            lines.push_back(fmt::format(
                "pipelens: {}: the profile times each figure a few times after the step, and on "
                "cores busy with other work its figures stray; profile the run again when the "
                "cores "
                "are free, or calibrate from the median of several runs (--run N, repeated)",
                options.trace));
        throw CommandFailure(kExitCheckFailed, fmt::format("{}", fmt::join(lines, "\n")));
    } catch (const std::invalid_argument& error) {
        throw unusable(options, error);
    }
}

// What the I/W split of stages nothing measured it on rests on, and how to measure it.
std::string assumed_split_text(const sim::Calibration& calibration) {
    const std::vector<int>& stages = calibration.assumed_split_stages;
    return fmt::format(
        "I and W not measured on stage{} {} (no profile, and the run's backward ran whole): B is "
        "split by assumption, {}; predictions of schedules that split the backward (the "
        "zero-bubble kinds) rest on that split; `pipelens run --profile` measures it",
        stages.size() == 1 ? "" : "s", fmt::join(stages, ", "), sim::kAssumedBackwardSplit);
}

nlohmann::ordered_json jitter_json(const JitterSpec& jitter, const sim::StepSpread& spread,
                                   double error) {
    nlohmann::ordered_json json;
    json["quantiles"] = jitter.quantiles;
    json["step_quantiles"] = jitter.step_quantiles;
    json["centre"] = jitter_centre_name(jitter.centre);
    json["draws"] = spread.draws;
    json["median_step_time_ns"] = spread.median_ns;
    json["p10_step_time_ns"] = spread.p10_ns;
    json["p90_step_time_ns"] = spread.p90_ns;
    json["relative_error"] = error;
    return json;
}

// The runs' noise, and the median step it predicts for them.
void print_jitter(const JitterSpec& jitter, const sim::StepSpread& spread, double error) {
    const auto range = [](const std::vector<double>& quantiles) {
        return fmt::format("p10/p90 {:.2f}x/{:.2f}x (outer quantiles {:.2f}x, {:.2f}x)",
                           sim::quantile_at(quantiles, 0.1), sim::quantile_at(quantiles, 0.9),
                           quantiles.front(), quantiles.back());
    };
    fmt::print(
        "with the runs' jitter (each computation {} of its group's {}{}; {} draws): median step "
        "{} (p10/p90 {}/{}): {:+.1f}% in sample\n",
        range(jitter.quantiles), jitter_centre_name(jitter.centre),
        jitter.step_quantiles.empty()
            ? std::string()
            : fmt::format("; each step's computations {} of the median step's",
                          range(jitter.step_quantiles)),
        spread.draws, format_duration(spread.median_ns), format_duration(spread.p10_ns),
        format_duration(spread.p90_ns), error * 100);
}

// A calibrated run's rank and what it waited for a core in its median step.
struct RankCoreWait {
    std::int64_t run_id = 0;
    std::int64_t step_ns = 0;  // that step's time
    traces::RankRecord rank;
    std::optional<double> share() const { return traces::core_wait_share(rank, step_ns); }
};

// Every measured rank's wait for a core in the runs calibrated from.
std::vector<RankCoreWait> core_waits(const traces::TraceReader& reader,
                                     const std::vector<std::int64_t>& run_ids) {
    std::vector<RankCoreWait> waits;
    for (const std::int64_t run_id : run_ids) {
        const std::int64_t step_ns = reader.run(run_id).step_time_ns.value_or(0);
        for (const traces::RankRecord& rank : reader.ranks(run_id))
            if (rank.core_wait_ns)
                waits.push_back({run_id, step_ns, rank});
    }
    return waits;
}

// "note: ranks waited for a core ... for more than 5% of the median step: run 3 rank 1 31% ...";
// empty when no rank's wait is notable.
std::string core_wait_note(const std::vector<RankCoreWait>& waits) {
    std::vector<std::string> named;
    for (const RankCoreWait& wait : waits)
        if (const std::optional<double> share = wait.share();
            share && *share > traces::kCoreWaitNotable)
            named.push_back(fmt::format("run {} rank {} {:.0f}% ({})", wait.run_id, wait.rank.rank,
                                        *share * 100, format_duration(*wait.rank.core_wait_ns)));
    if (named.empty())
        return "";
    return fmt::format(
        "note: ranks waited for a core (ready to run, none free) for more than {:.0f}% of the "
        "median step: {}; their measured times hold the waits, and so do the costs above: "
        "calibrate from a run with a free core per rank\n",
        traces::kCoreWaitNotable * 100, fmt::join(named, ", "));
}

nlohmann::ordered_json core_waits_json(const std::vector<RankCoreWait>& waits) {
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    for (const RankCoreWait& wait : waits) {
        const std::optional<double> share = wait.share();
        json.push_back({{"run_id", wait.run_id},
                        {"rank", wait.rank.rank},
                        {"core_wait_ns", *wait.rank.core_wait_ns},
                        {"share_of_step", share ? nlohmann::ordered_json(*share) : nullptr},
                        {"notable", share && *share > traces::kCoreWaitNotable}});
    }
    return json;
}

void run_calibrate(const CalibrateOptions& options) {
    refuse_output_over(options.out, "--out", {options.trace});
    const traces::TraceReader reader(options.trace);
    const std::vector<std::int64_t> run_ids = chosen_runs(options, reader);
    const sim::Calibration calibration = calibrated(options, reader, run_ids);
    const std::string runs_text =
        fmt::format("{} {}", run_ids.size() == 1 ? "run" : "runs", fmt::join(run_ids, ", "));
    Experiment experiment = calibration.experiment;
    try {  // a calibrated file must always pass `simulate`: refuse rather than write one
        validate_experiment(experiment);
        sim::resolve_zero_bubble_inputs(experiment);
    } catch (const ExperimentError& error) {
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens: {}: {} calibrate to an experiment simulate "
                                         "would refuse: {}",
                                         options.trace, runs_text, error.what()));
    }
    const Schedule lowered = lowered_schedule_for(experiment);
    const sim::CostModel costs = sim::cost_model_for(experiment, lowered.stage_count);
    const sim::SimulationResult simulated = sim::simulate(lowered, costs);
    const std::map<int, std::optional<std::int64_t>>& measured_peak =
        calibration.measured_peak_bytes;
    const double measured = static_cast<double>(calibration.measured_step_ns);
    const auto error_of = [measured](std::int64_t predicted) {
        return measured > 0 ? (static_cast<double>(predicted) - measured) / measured : 0;
    };
    const double error = error_of(simulated.step_time_ns);
    const sim::SideBySide together{calibration.measured_side_by_side,
                                   sim::simulated_side_by_side(simulated)};
    const std::vector<RankCoreWait> waits = core_waits(reader, run_ids);
    // The runs' own noise drawn through the schedule: what a noisy machine's median step is.
    // A schedule too large for the default draws is given the draws that fit, in the file too.
    sim::StepSpread spread;  // draws = 0: no jitter was fitted
    std::string fewer_draws;
    if (experiment.jitter) {
        const int fit = sim::draws_that_fit(*experiment.jitter, lowered.action_count());
        if (fit < experiment.jitter->draws)
            fewer_draws = fmt::format(
                "note: [jitter] draws lowered from {} to {}: more would "
                "simulate over {} actions\n",
                experiment.jitter->draws, fit, sim::kMostJitteredActions);
        experiment.jitter->draws = fit;
        try {
            spread = sim::simulate_step_spread(lowered, costs, sim::rules_for(costs),
                                               *experiment.jitter);
        } catch (const sim::JitterError& error) {
            throw CommandFailure(kExitUsage, fmt::format("pipelens: {}: {} calibrate to noise "
                                                         "that cannot be drawn: {}",
                                                         options.trace, runs_text, error.what()));
        }
    }
    if (!options.out.empty()) {
        write_output_file(options.out, experiment_to_toml(experiment));
    }
    if (options.json) {
        nlohmann::ordered_json json;
        json["run_id"] = run_ids.front();
        json["run_ids"] = run_ids;
        json["measured_step_time_ns"] = calibration.measured_step_ns;
        json["simulated_step_time_ns"] = simulated.step_time_ns;
        json["relative_error"] = error;
        json["computing_side_by_side"] = {{"measured", together.measured},
                                          {"simulated", together.simulated}};
        json["core_waits"] = core_waits_json(waits);
        if (const std::string note = core_wait_note(waits); !note.empty())
            json["warnings"].push_back(note.substr(6, note.size() - 7));  // no "note: ", no \n
        if (experiment.jitter)
            json["jitter"] = jitter_json(*experiment.jitter, spread, error_of(spread.median_ns));
        json["from_profile"] = calibration.from_profile;
        // Where I and W came from: the profile, the run's own split backward, or an assumption.
        json["i_w_source"] = calibration.from_profile                   ? "profile"
                             : calibration.assumed_split_stages.empty() ? "run"
                                                                        : "assumed";
        if (!calibration.assumed_split_stages.empty()) {
            json["i_w_assumed_stages"] = calibration.assumed_split_stages;
            json["i_w_assumption"] = sim::kAssumedBackwardSplit;
            json["warnings"].push_back(assumed_split_text(calibration));
        }
        for (const sim::StageScale& scale : calibration.profile_scales)
            json["profile_scales"].push_back({{"forward", scale.forward},
                                              {"backward", scale.backward},
                                              {"input", scale.input},
                                              {"weight", scale.weight}});
        for (const StageCostColumn& column : stage_cost_columns())
            for (const sim::StageCost& stage : costs.stages)
                json[column.key].push_back(column.of(stage));
        json["overlap_efficiency"] = experiment.overlap_efficiency;
        json["link_latency_ns"] = experiment.intra_host.latency_ns;
        json["link_bandwidth_gb_per_s"] = experiment.intra_host.bytes_per_ns;
        json["transfer_samples"] = calibration.transfer_samples;
        json["run_delivery_ns"] = calibration.run_delivery_ns;
        json["run_delivery_bytes"] = calibration.run_delivery_bytes;
        json["link_delivery_ns"] = costs.intra_host.transfer_ns(calibration.run_delivery_bytes);
        json["link_latency_from_run"] = calibration.link_latency_from_run;
        if (calibration.link_latency_from_run)
            json["profile_link_latency_ns"] = calibration.profile_link_latency_ns;
        json["link_sizes"] = calibration.link_sizes;
        json["send_issue_ns"] = calibration.send_issue_ns;
        json["send_issue_charged"] = experiment.send_issue_ns > 0;
        if (!calibration.link_fit_note.empty())
            json["link_fit_note"] = calibration.link_fit_note;
        nlohmann::ordered_json peaks = nlohmann::ordered_json::array();
        for (const auto& [rank, peak] : measured_peak)
            peaks.push_back(
                {{"rank", rank},
                 {"measured", peak ? nlohmann::ordered_json(*peak) : nlohmann::ordered_json()},
                 {"simulated", calibration.from_profile
                                   ? nlohmann::ordered_json(simulated_peak(simulated, rank))
                                   : nlohmann::ordered_json()}});
        json["peak_memory_bytes"] = std::move(peaks);
        fmt::print("{}\n", json_text(json));
        return;
    }
    fmt::print("calibrated from {} ({} pp={} v={} m={})\n", runs_text, lowered.name,
               experiment.shape.rank_count, experiment.shape.stages_per_rank,
               experiment.shape.microbatch_count);
    if (calibration.from_profile) {
        fmt::print("  from the {}: {} layers, model {}\n",
                   run_ids.size() == 1 ? "run's profile" : "median of the runs' profiles",
                   experiment.layers->names.size(), experiment.model.name);
        std::string scales;
        for (std::size_t stage = 0; stage < calibration.profile_scales.size(); ++stage) {
            const sim::StageScale& scale = calibration.profile_scales[stage];
            scales += fmt::format("{}stage {} F x{:.3f} backward x{:.3f}", stage ? ", " : "", stage,
                                  scale.forward, scale.backward);
            if (scale.input != scale.backward || scale.weight != scale.backward)  // split
                scales += fmt::format(" (I x{:.3f}, W x{:.3f})", scale.input, scale.weight);
        }
        fmt::print("  profile scaled to the step's own times: {}\n", scales);
    }
    for (const StageCostColumn& column : stage_cost_columns()) {
        std::vector<std::int64_t> values;
        for (const sim::StageCost& stage : costs.stages)
            values.push_back(column.of(stage));
        fmt::print("  {} per stage: {}\n", column.label, durations(values));
    }
    if (calibration.from_profile) {
        const LinkSpec& link = experiment.intra_host;
        const std::string bandwidth = link.bytes_per_ns > 0
                                          ? fmt::format("bytes / {:.3f} GB/s", link.bytes_per_ns)
                                          : std::string("no bandwidth limit");
        fmt::print(
            "  OVERLAP_F_B overlap efficiency: {:.2f}\n  link: {} + {} ({}fitted to {} "
            "message sizes{})\n",
            experiment.overlap_efficiency, format_duration(link.latency_ns), bandwidth,
            calibration.link_latency_from_run ? "bandwidth " : "", calibration.link_sizes,
            calibration.link_latency_from_run ? "; latency from the run's transfers" : "");
    }
    if (calibration.from_profile && !calibration.link_fit_note.empty())
        fmt::print("  link fit: {}\n", calibration.link_fit_note);
    if (calibration.from_profile && calibration.transfer_samples > 0)
        print_delivery_check(calibration, costs.intra_host);
    if (calibration.send_issue_ns > 0)
        fmt::print("  SEND issue: {} per send ({})\n", format_duration(calibration.send_issue_ns),
                   experiment.send_issue_ns > 0
                       ? "the rank's own thread writes or copies the message: charged before "
                         "the rank's next computation"
                       : "enqueued on a stream the rank's computations do not wait for: not "
                         "charged");
    if (!calibration.from_profile)
        fmt::print("  send/recv delivery: {} (median of {} transfers)\n",
                   format_duration(experiment.intra_host.latency_ns), calibration.transfer_samples);
    if (!calibration.assumed_split_stages.empty())
        fmt::print("  assumption: {}\n", assumed_split_text(calibration));
    // Without a profile the costs carry no tensor sizes, so there is no simulated peak to
    // compare with (it would read 0 B).
    for (const auto& [rank, peak] : measured_peak) {
        const std::string measured = peak ? format_bytes(*peak) : std::string("-");
        if (calibration.from_profile)
            fmt::print("  rank {} peak memory: measured {}, simulated {}\n", rank, measured,
                       format_bytes(simulated_peak(simulated, rank)));
        else
            fmt::print(
                "  rank {} peak memory: measured {} (not simulated: without a profile "
                "the costs hold no tensor sizes)\n",
                rank, measured);
    }
    // In sample: the costs were fitted to these runs, so a small error checks the fit, not how
    // well another schedule or shape is predicted.
    fmt::print(
        "measured step {}{}, simulated {}: {:+.1f}% in sample (the costs were fitted to "
        "{})\n",
        format_duration(calibration.measured_step_ns),
        run_ids.size() == 1 ? "" : fmt::format(" (median of {} runs)", run_ids.size()),
        format_duration(simulated.step_time_ns), error * 100,
        run_ids.size() == 1 ? "this run" : "these runs");
    if (together.took_turns())
        fmt::print(
            "note: the run's ranks computed side by side for {:.0f}% of their computing time, "
            "where its calibrated simulation has them do so for {:.0f}%: they waited for cores "
            "(a loaded machine, or more busy threads than cores), and that waiting is in the "
            "costs above; calibrate from a run with a free core per rank\n",
            together.measured * 100, together.simulated * 100);
    fmt::print("{}", core_wait_note(waits));
    if (experiment.jitter)
        print_jitter(*experiment.jitter, spread, error_of(spread.median_ns));
    fmt::print("{}", fewer_draws);
    if (!options.out.empty())
        fmt::print("wrote {}\n", options.out);
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
    auto options = std::make_shared<CalibrateOptions>();
    CLI::App* command = app.add_subcommand(
        "calibrate", "Fit the cost model to a real run, simulate it, and compare the step times");
    add_trace_argument(*command, options->trace, "Trace file with a real run");
    add_run_list_option(*command, "--run", options->runs,
                        "The real run (default: the latest real one; a simulation is refused); "
                        "repeat it, or list runs with commas, to calibrate from the medians over "
                        "repeats of one configuration");
    command->add_option("--out", options->out, "Write the calibrated experiment (TOML)");
    command->add_flag("--json", options->json, "Print one JSON object");
    command->callback([options] { run_calibrate(*options); });
}

}  // namespace pipelens::cli
