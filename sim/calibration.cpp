// Calibration from measured timelines. Medians, not means: one stage's first microbatch or a
// descheduled thread can take several times the usual duration, and a mean would carry that
// into every simulated action.
#include "sim/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "engine/analysis/timed_schedule.hpp"
#include "engine/analysis/training_steps.hpp"
#include "engine/analysis/transfer_deliveries.hpp"
#include "engine/experiment/config_difference.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "engine/run_record/repeated_timing.hpp"
#include "engine/run_record/statistics.hpp"
#include "engine/schedule/action.hpp"
#include "engine/schedule/action_facts.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/jitter_fit.hpp"
#include "sim/profile_calibration.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::sim {
namespace {

struct StageSamples {
    std::vector<std::int64_t> forward, input, weight, full_backward;
};

std::int64_t mean(const std::vector<std::int64_t>& values) {
    if (values.empty())
        return 0;
    double sum = 0;
    for (std::int64_t value : values)
        sum += static_cast<double>(value);
    return std::llround(sum / static_cast<double>(values.size()));
}

// The means of each stage's F and backward in one run's step (a split backward: I + W). Means,
// not medians: a step is a sum of its actions, and what a sum of many adds up to is their mean.
// On this kind of machine durations skew long (a descheduled or slowed action), and the medians
// came out 3-7 % under the means, which put every prediction that much short.
std::vector<RunStageTimes> run_stage_times(const std::vector<traces::ActionRecord>& actions,
                                           int stage_count) {
    std::vector<std::map<ActionKind, std::vector<std::int64_t>>> durations(
        static_cast<std::size_t>(stage_count));
    for (const traces::ActionRecord& action : actions)
        if (action.stage >= 0 && action.stage < stage_count && action.end_ns >= action.start_ns)
            durations[static_cast<std::size_t>(action.stage)][static_cast<ActionKind>(action.kind)]
                .push_back(action.end_ns - action.start_ns);
    std::vector<RunStageTimes> times(static_cast<std::size_t>(stage_count));
    for (std::size_t stage = 0; stage < times.size(); ++stage) {
        auto& by_kind = durations[stage];
        times[stage].forward_ns = mean(by_kind[ActionKind::forward]);
        if (!by_kind[ActionKind::full_backward].empty()) {
            times[stage].backward_ns = mean(by_kind[ActionKind::full_backward]);
            continue;
        }
        times[stage].input_ns = mean(by_kind[ActionKind::backward_input]);
        times[stage].weight_ns = mean(by_kind[ActionKind::backward_weight]);
        times[stage].backward_ns = times[stage].input_ns + times[stage].weight_ns;
    }
    return times;
}

// Over steps (every recorded step of every run), each stage's figures are the median of the
// steps' means: within a step the mean is what the step adds up, across steps and runs the
// median keeps one slow step from setting the level (pooling every run's actions let one slow
// run pull the means 16 % over the median step).
std::vector<RunStageTimes> median_stage_times(
    const std::vector<std::vector<traces::ActionRecord>>& step_actions, int stage_count) {
    std::vector<std::vector<RunStageTimes>> per_step;
    for (const auto& actions : step_actions)
        per_step.push_back(run_stage_times(actions, stage_count));
    std::vector<RunStageTimes> times(static_cast<std::size_t>(stage_count));
    for (std::size_t stage = 0; stage < times.size(); ++stage) {
        std::vector<std::int64_t> forward, backward, input, weight;
        for (const auto& step : per_step) {  // a step without the stage's action has no say
            for (const auto& [value, into] : {std::pair(step[stage].forward_ns, &forward),
                                              std::pair(step[stage].backward_ns, &backward),
                                              std::pair(step[stage].input_ns, &input),
                                              std::pair(step[stage].weight_ns, &weight)})
                if (value > 0)
                    into->push_back(value);
        }
        times[stage] = {run_record::median_of(forward), run_record::median_of(backward),
                        run_record::median_of(input), run_record::median_of(weight)};
    }
    return times;
}

// Whether a run's configuration is an importer's (JSON naming what was imported), not a
// pipelens experiment.
bool imported_configuration(const std::string& config) {
    const nlohmann::json parsed = nlohmann::json::parse(config, nullptr, false);
    return parsed.is_object() && parsed.contains("imported");
}

// The experiment a run was recorded with: none for an imported run. A pipelens run's that does
// not read back is refused: calibrating it with the defaults would simulate another run.
std::optional<Experiment> recorded_experiment(const traces::RunRecord& run) {
    try {
        return parse_experiment_toml(run.config, "run configuration");
    } catch (const ExperimentError& error) {
        if (imported_configuration(run.config))
            return std::nullopt;
        throw std::invalid_argument(fmt::format(
            "run {}: its recorded configuration does not read back ({}); it was written by "
            "another pipelens version",
            run.id, error.what()));
    }
}

// The run's own model and run settings, how it was lowered and how its transfers behave: the
// calibrated experiment must run, lower and time the run the way it ran, and hold memory as its
// runtime did (pipelens' runtime posts receives with their buffers; a simulated run's trace
// keeps its own setting). An imported run has none of these: the defaults stand.
void carry_run_options(Experiment& experiment, const traces::RunRecord& run,
                       const std::optional<Experiment>& recorded) {
    if (!recorded)
        return;
    experiment.model = recorded->model;
    experiment.run = recorded->run;
    experiment.defer_receives = recorded->defer_receives;
    experiment.rendezvous = recorded->rendezvous;
    experiment.max_activations = recorded->max_activations;
    experiment.posted_receive_buffers =
        run.kind == traces::RunKind::real || recorded->posted_receive_buffers;
}

// Per-layer costs, overlap and link from the profile, scaled to the runs' own stage times.
void apply_profile(Calibration& calibration, const traces::RunRecord& run,
                   std::vector<traces::ProfileRecord> profile,
                   const std::vector<std::vector<traces::ActionRecord>>& step_actions,
                   std::int64_t run_id) {
    Experiment& experiment = calibration.experiment;
    calibration.profile_scales =
        anchor_profile_to_run(profile, median_stage_times(step_actions, run.pp * run.v));
    ProfileCalibration fitted = calibrate_from_profile(profile, run_id);
    experiment.model.layers = static_cast<int>(fitted.layers.names.size());
    experiment.layers = std::move(fitted.layers);
    experiment.overlap_efficiency = fitted.overlap_efficiency;
    experiment.intra_host = fitted.link;
    experiment.inter_host = fitted.link;
    calibration.from_profile = true;
    calibration.link_sizes = fitted.link_sizes;
    calibration.link_fit_note = fitted.link_fit_note;
}

// One step's samples of a figure each: per stage each kind's durations, and each SEND's span.
struct StepSamples {
    std::vector<StageSamples> stages;
    std::vector<std::int64_t> send_issues;  // each SEND's own span: the host's time to issue it
};

// One step's transfers that the run saw delivered whole (analysis/transfer_deliveries.hpp).
struct StepDeliveries {
    std::vector<std::int64_t> deliveries;
    std::vector<std::int64_t> bytes;
};

void add_stage_sample(StageSamples& stage, const traces::ActionRecord& action) {
    const std::int64_t duration = action.end_ns - action.start_ns;
    switch (static_cast<ActionKind>(action.kind)) {
        case ActionKind::forward:
            stage.forward.push_back(duration);
            break;
        case ActionKind::backward_input:
            stage.input.push_back(duration);
            break;
        case ActionKind::backward_weight:
            stage.weight.push_back(duration);
            break;
        case ActionKind::full_backward:
            stage.full_backward.push_back(duration);
            break;
        default:
            break;
    }
}

StepSamples step_samples(const std::vector<traces::ActionRecord>& step, int stage_count) {
    StepSamples samples;
    samples.stages.resize(static_cast<std::size_t>(stage_count));
    for (const traces::ActionRecord& action : step) {
        if (action.stage >= 0 && action.stage < stage_count)
            add_stage_sample(samples.stages[static_cast<std::size_t>(action.stage)], action);
        if (is_send(static_cast<ActionKind>(action.kind)))
            samples.send_issues.push_back(action.end_ns - action.start_ns);
    }
    return samples;
}

// Every training step of the runs, its transfers whose delivery the run saw whole. A run whose
// actions make no program the analyses can walk (an import with a stage on two ranks) has none
// to say: its stage costs still calibrate, as they did before transfers were paired this way.
std::vector<StepDeliveries> seen_deliveries(const traces::TraceReader& reader,
                                            const std::vector<traces::RunRecord>& runs) {
    std::vector<StepDeliveries> steps;
    for (const traces::RunRecord& run : runs) {
        std::vector<StepDeliveries> of_run;
        try {
            for (const analysis::TrainingStep& step :
                 analysis::training_steps(analysis::read_timed_schedule(reader, run.id))) {
                StepDeliveries seen;
                for (const analysis::TransferDelivery& delivery :
                     analysis::transfer_deliveries(step.timed))
                    if (delivery.seen) {
                        seen.deliveries.push_back(delivery.at_most_ns);
                        seen.bytes.push_back(delivery.bytes);
                    }
                of_run.push_back(std::move(seen));
            }
        } catch (const traces::TraceError&) {
            continue;
        }
        steps.insert(steps.end(), of_run.begin(), of_run.end());
    }
    return steps;
}

// Each figure's median within every step, as one list per figure over all the steps.
StageSamples step_medians(const std::vector<StepSamples>& steps, std::size_t stage) {
    StageSamples medians;
    const auto add = [](std::vector<std::int64_t>& to, const std::vector<std::int64_t>& values) {
        if (!values.empty())
            to.push_back(run_record::median_of(values));
    };
    for (const StepSamples& step : steps) {
        add(medians.forward, step.stages[stage].forward);
        add(medians.input, step.stages[stage].input);
        add(medians.weight, step.stages[stage].weight);
        add(medians.full_backward, step.stages[stage].full_backward);
    }
    return medians;
}

// The deliveries the runs saw whole: per step the median, then the median over the steps (so
// every step counts once however many transfers it had).
void record_run_deliveries(Calibration& calibration, const std::vector<StepDeliveries>& steps) {
    std::vector<std::int64_t> deliveries, bytes;
    calibration.transfer_samples = 0;
    for (const StepDeliveries& step : steps) {
        calibration.transfer_samples += static_cast<int>(step.deliveries.size());
        if (!step.deliveries.empty()) {
            deliveries.push_back(run_record::median_of(step.deliveries));
            bytes.push_back(run_record::median_of(step.bytes));
        }
    }
    calibration.run_delivery_ns = run_record::median_of(deliveries);
    calibration.run_delivery_bytes = run_record::median_of(bytes);
}

// With a profile, the link's latency set so that it delivers the runs' median message in the
// runs' own median time, its bandwidth kept: the profile times messages with both sides idle
// and ready, its fit goes through each size's fastest tenth, and a transfer inside a pipeline
// (a sender just done computing, a receiver woken from its wait) took up to twice that on the
// machines measured. Too few seen transfers leave the profile's link as it is.
void hold_link_to_run_deliveries(Calibration& calibration) {
    Experiment& experiment = calibration.experiment;
    if (calibration.transfer_samples < kLeastSeenTransfers || calibration.run_delivery_ns <= 0)
        return;
    const LinkSpec profiled = experiment.intra_host;
    const Link link{profiled.latency_ns, profiled.bytes_per_ns};
    const std::int64_t bytes_time =
        link.transfer_ns(calibration.run_delivery_bytes) - profiled.latency_ns;
    calibration.profile_link_latency_ns = profiled.latency_ns;
    experiment.intra_host.latency_ns =
        std::max<std::int64_t>(0, calibration.run_delivery_ns - bytes_time);
    experiment.inter_host = experiment.intra_host;
    calibration.link_latency_from_run = true;
}

// The host's time to issue a SEND, per step the median, then the median over the steps. A gloo
// send writes its message on the rank's own thread, and a thread's hand-over (local) copies it
// there, under the mailbox lock: either way the rank's next computation waits for it, so the
// experiment charges it (Experiment::send_issue_ns). NCCL enqueues the send on a stream the
// rank's GPU work does not wait for on the host, and the figure is only reported, as it is for
// an imported run.
void record_send_issue(Calibration& calibration, const std::vector<StepSamples>& steps,
                       const std::string& transport) {
    std::vector<std::int64_t> issues;
    for (const StepSamples& step : steps)
        if (!step.send_issues.empty())
            issues.push_back(run_record::median_of(step.send_issues));
    calibration.send_issue_ns = run_record::median_of(issues);
    if (transport == "gloo" || transport == "local")
        calibration.experiment.send_issue_ns = calibration.send_issue_ns;
}

// Without a profile: per stage and kind, the median over the steps of each step's median (a full
// backward when the schedule ran one, else I and W, with B split by kAssumedBackwardSplit where
// only B ran, and the stage listed as assumed), and for a link latency the runs' own delivery
// (record_run_deliveries). Per step first, so that every step counts once however its durations
// spread.
void calibrate_from_actions(Calibration& calibration, const std::vector<traces::RunRecord>& runs,
                            const std::vector<StepSamples>& steps) {
    Experiment& experiment = calibration.experiment;
    const int stage_count = runs.front().pp * runs.front().v;
    bool any_backward = false;
    for (std::size_t index = 0; index < static_cast<std::size_t>(stage_count); ++index) {
        const StageSamples stage = step_medians(steps, index);
        experiment.forward_ns.push_back(run_record::median_of(stage.forward));
        const std::int64_t backward = run_record::median_of(stage.full_backward);
        // kAssumedBackwardSplit, said wherever it is used: nothing timed I and W apart.
        const bool assumed = stage.input.empty() && stage.weight.empty();
        if (assumed)
            calibration.assumed_split_stages.push_back(static_cast<int>(index));
        const std::int64_t input =
            stage.input.empty() ? backward / 2 : run_record::median_of(stage.input);
        const std::int64_t weight =
            stage.weight.empty() ? backward - backward / 2 : run_record::median_of(stage.weight);
        experiment.input_ns.push_back(input);
        experiment.weight_ns.push_back(weight);
        // A stage that ran only I and W (DualPipeV, ZBV split some stages' backward and not
        // others') gets B = I + W; one that ran B keeps what it measured.
        experiment.backward_ns.push_back(stage.full_backward.empty() ? input + weight : backward);
        any_backward = any_backward || !stage.full_backward.empty();
    }
    if (!any_backward)
        experiment.backward_ns.clear();  // no stage ran B: B = I + W, the experiment's default

    const std::int64_t latency = calibration.run_delivery_ns;
    if (latency < 0)  // a RECV that ended before its SEND began: two clocks, not one
        throw std::invalid_argument(fmt::format(
            "run {}: the median send/recv delivery is {} ns, below zero: its ranks' times are not "
            "on one clock (recorded before pipelens measured clock offsets); no latency is "
            "written",
            runs.front().id, latency));
    experiment.intra_host = {latency, 0};
    experiment.inter_host = {latency, 0};
}

// Every step's durations of one stage's actions of one kind: the groups [jitter] is fitted from.
std::vector<std::vector<std::int64_t>> jitter_groups(const std::vector<StepSamples>& steps) {
    std::vector<std::vector<std::int64_t>> groups;
    for (const StepSamples& step : steps)
        for (const StageSamples& stage : step.stages)
            for (const auto* kind :
                 {&stage.forward, &stage.input, &stage.weight, &stage.full_backward})
                if (!kind->empty())
                    groups.push_back(*kind);
    return groups;
}

// Each step's computations added up: how slow the machine ran that step as a whole.
std::vector<std::int64_t> step_totals(const std::vector<StepSamples>& steps) {
    std::vector<std::int64_t> totals;
    for (const StepSamples& step : steps) {
        std::int64_t total = 0;
        for (const StageSamples& stage : step.stages)
            for (const auto* kind :
                 {&stage.forward, &stage.input, &stage.weight, &stage.full_backward})
                for (std::int64_t duration : *kind)
                    total += std::max<std::int64_t>(duration, 0);  // two clocks say nothing
        totals.push_back(total);
    }
    return totals;
}

// "1 (real 1F1B pp=2 v=1 m=4)": a run as an error names it.
std::string described(const traces::RunRecord& run) {
    return fmt::format("{} ({} {} pp={} v={} m={})", run.id,
                       run.kind == traces::RunKind::real ? "real" : "sim", run.schedule, run.pp,
                       run.v, run.m);
}

std::vector<std::int64_t> real_run_ids(const traces::TraceReader& reader) {
    std::vector<std::int64_t> ids;
    for (const traces::RunRecord& run : reader.runs())
        if (run.kind == traces::RunKind::real)
            ids.push_back(run.id);
    return ids;
}

// How to get what calibrate needs, where a trace lacks it.
inline constexpr const char* kRecordARealRun =
    "record a real run into this trace with `pipelens run ... --out` (with --profile to measure "
    "I and W)";

// A simulation's times are the costs it was given: calibrating from one measures nothing.
void refuse_simulation(const traces::TraceReader& reader, const traces::RunRecord& run) {
    const std::vector<std::int64_t> real = real_run_ids(reader);
    throw std::invalid_argument(fmt::format(
        "run {} is a simulation, and a simulation measures nothing: calibrate takes real runs "
        "({})",
        described(run),
        real.empty() ? fmt::format("this trace has none: {}", kRecordARealRun)
                     : fmt::format("this trace's: {}", fmt::join(real, ", "))));
}

// The runs calibrated from, checked to be finished runs of one configuration (and measured ones
// unless `timelines` says any).
std::vector<traces::RunRecord> runs_of(const traces::TraceReader& reader,
                                       const std::vector<std::int64_t>& run_ids,
                                       Timelines timelines) {
    if (run_ids.empty())
        throw std::invalid_argument("no run to calibrate from");
    std::vector<traces::RunRecord> runs;
    for (std::int64_t run_id : run_ids) {
        traces::RunRecord run = reader.run(run_id);
        if (timelines == Timelines::measured && run.kind != traces::RunKind::real)
            refuse_simulation(reader, run);
        if (run.status != traces::RunStatus::finished) {
            std::vector<std::int64_t> finished;
            for (const traces::RunRecord& other : reader.runs())
                if (other.kind == traces::RunKind::real &&
                    other.status == traces::RunStatus::finished)
                    finished.push_back(other.id);
            throw std::invalid_argument(fmt::format(
                "run {} did not finish; only a complete run can be calibrated from ({})", run_id,
                finished.empty() ? "this trace has none"
                                 : fmt::format("this trace's: {}; name one with --run",
                                               fmt::join(finished, ", "))));
        }
        if (!runs.empty()) {
            const traces::RunRecord& first = runs.front();
            const bool same_shape = traces::same_shape(run, first);
            // Where the shapes agree, the setting that does not is named.
            const std::optional<ConfigDifference> setting =
                config_difference(run.config, first.config);
            if (!same_shape || setting) {
                const std::string which =
                    same_shape
                        ? fmt::format(" ({})", describe_difference(*setting,
                                                                   fmt::format("run {}", first.id)))
                        : "";
                throw std::invalid_argument(fmt::format(
                    "run {} ({} pp={} v={} m={}) is not configured as run {} ({} pp={} v={} "
                    "m={}): calibrate takes repeats of one configuration{}",
                    run_id, run.schedule, run.pp, run.v, run.m, first.id, first.schedule, first.pp,
                    first.v, first.m, which));
            }
        }
        runs.push_back(std::move(run));
    }
    return runs;
}

// Per stage, how far its figures spread (StageSpread): over the runs' own actions of each kind
// (every microbatch of every repeat), else the profile's whole-stage figures, else not at all.
std::vector<StageSpread> stage_spreads(
    const std::vector<std::vector<traces::ActionRecord>>& run_actions,
    const std::vector<traces::ProfileRecord>& profile, int stage_count) {
    const auto over = [](std::int64_t numerator, std::int64_t denominator) {
        return denominator > 0 && numerator > 0
                   ? std::max(1.0,
                              static_cast<double>(numerator) / static_cast<double>(denominator))
                   : 1.0;
    };
    std::vector<StageSpread> spreads(static_cast<std::size_t>(stage_count));
    const auto set = [&](int stage, const std::string& quantity, std::int64_t median,
                         std::int64_t low, std::int64_t high) {
        StageSpread& spread = spreads[static_cast<std::size_t>(stage)];
        if (quantity == "B")
            spread.backward_high = over(high, median);
        else if (quantity == "I")
            spread.input_low = over(median, low);
        else if (quantity == "W")
            spread.weight_low = over(median, low);
    };
    for (const traces::ProfileRecord& row : profile)
        if (row.layer == traces::kProfileWholeStage && row.stage >= 0 && row.stage < stage_count)
            set(row.stage, row.quantity, row.median, row.low, row.high);
    std::map<std::pair<int, std::string>, std::vector<std::int64_t>> durations;
    for (const auto& actions : run_actions)
        for (const traces::ActionRecord& action : actions) {
            const auto kind = static_cast<ActionKind>(action.kind);
            const char* quantity = kind == ActionKind::full_backward     ? "B"
                                   : kind == ActionKind::backward_input  ? "I"
                                   : kind == ActionKind::backward_weight ? "W"
                                                                         : nullptr;
            if (quantity && action.stage >= 0 && action.stage < stage_count)
                durations[{action.stage, quantity}].push_back(action.end_ns - action.start_ns);
        }
    for (auto& [key, values] : durations) {
        const run_record::Spread spread = run_record::spread_of(std::move(values));
        set(key.first, key.second, spread.median, spread.low, spread.high);
    }
    return spreads;
}

// The fitted figures checked before anyone reads them (sim/calibration_checks.hpp): the stage
// costs as the simulator charges them for the run's own shape, and with a profile its layers
// against their peers. Every refused figure is named, on its own line, after the runs.
void refuse_impossible_figures(const Calibration& calibration, const std::string& runs_text,
                               const std::vector<StageSpread>& spreads,
                               const std::vector<traces::ProfileRecord>& profile) {
    std::vector<std::string> lines = layers_off_their_peers(profile);
    try {
        const int stage_count = static_cast<int>(spreads.size());
        const std::vector<std::string> stage_lines = impossible_stage_figures(
            cost_model_for(calibration.experiment, stage_count).stages, spreads);
        lines.insert(lines.begin(), stage_lines.begin(), stage_lines.end());
    } catch (const ExperimentError&) {
        // A split the layers cannot make: validation names it where the experiment is used.
    }
    if (lines.empty())
        return;
    for (std::string& line : lines)
        line = fmt::format("{}: {}", runs_text, line);
    throw ImpossibleCalibration(std::move(lines), calibration.from_profile);
}

}  // namespace

std::int64_t latest_measured_run(const traces::TraceReader& reader) {
    const std::vector<std::int64_t> real = real_run_ids(reader);
    if (!real.empty())
        return real.back();
    std::vector<std::string> runs;
    for (const traces::RunRecord& run : reader.runs())
        runs.push_back(described(run));
    throw std::invalid_argument(fmt::format(
        "no real run to calibrate from: {}; {}",
        runs.empty()       ? std::string("the trace has no runs")
        : runs.size() == 1 ? fmt::format("run {} is a simulation, and a simulation measures "
                                         "nothing",
                                         runs.front())
                           : fmt::format("runs {} are simulations, and a simulation measures "
                                         "nothing",
                                         fmt::join(runs, ", ")),
        kRecordARealRun));
}

Calibration calibrate_from_trace(const traces::TraceReader& reader, std::int64_t run_id,
                                 const std::string& schedule_file, Timelines timelines) {
    return calibrate_from_runs(reader, {run_id}, schedule_file, timelines);
}

Calibration calibrate_from_runs(const traces::TraceReader& reader,
                                const std::vector<std::int64_t>& run_ids,
                                const std::string& schedule_file, Timelines timelines) {
    const std::vector<traces::RunRecord> runs = runs_of(reader, run_ids, timelines);
    const traces::RunRecord& run = runs.front();
    const std::int64_t run_id = run.id;
    Calibration calibration;
    Experiment& experiment = calibration.experiment;
    try {
        experiment.shape.kind = parse_schedule_kind(run.schedule);
    } catch (const ScheduleConfigError&) {
        if (schedule_file.empty())
            throw std::invalid_argument(
                fmt::format("run {} ran schedule '{}', which is not a kind pipelens generates",
                            run_id, run.schedule));
        experiment.schedule_file = schedule_file;
    }
    experiment.shape.rank_count = run.pp;
    experiment.shape.stages_per_rank = run.v;
    experiment.shape.microbatch_count = run.m;
    experiment.name = fmt::format("calibrated from {} {} of {}", runs.size() == 1 ? "run" : "runs",
                                  fmt::join(run_ids, ", "), reader.path().string());
    experiment.source = reader.path().string();
    std::vector<std::int64_t> steps;
    std::map<int, std::vector<std::int64_t>> peaks;
    for (const traces::RunRecord& each : runs) {
        steps.push_back(each.step_time_ns.value_or(0));
        for (const traces::RankRecord& rank : reader.ranks(each.id)) {
            std::vector<std::int64_t>& sampled = peaks[rank.rank];
            if (rank.peak_memory_bytes > 0)
                sampled.push_back(rank.peak_memory_bytes);
        }
    }
    calibration.measured_step_ns = run_record::median_of(steps);
    for (auto& [rank, values] : peaks)
        calibration.measured_peak_bytes[rank] =
            values.empty() ? std::nullopt
                           : std::optional<std::int64_t>(run_record::median_of(std::move(values)));
    const std::optional<Experiment> recorded = recorded_experiment(run);
    carry_run_options(experiment, run, recorded);
    std::vector<std::vector<traces::ProfileRecord>> profiles;
    std::vector<std::vector<traces::ActionRecord>> run_actions;
    for (const traces::RunRecord& each : runs) {
        profiles.push_back(reader.profile(each.id));
        if (profiles.back().empty() != profiles.front().empty())
            throw std::invalid_argument(fmt::format(
                "run {} {} and run {} {}: calibrate takes profiled runs or unprofiled ones, not "
                "both",
                each.id, profiles.back().empty() ? "has no profile" : "has a profile", run_id,
                profiles.front().empty() ? "has none" : "has one"));
        run_actions.push_back(reader.actions(each.id));
        int named_microbatches = 0;
        for (const traces::ActionRecord& action : run_actions.back()) {
            named_microbatches = std::max(named_microbatches, action.microbatch + 1);
            for (const traces::ActionPartRecord& part : action.parts)
                named_microbatches = std::max(named_microbatches, part.microbatch + 1);
        }
        analysis::check_run_header(reader.path(), each, named_microbatches,
                                   run_actions.back().size());
        if (run_actions.back().empty() && profiles.back().empty())
            throw std::invalid_argument(fmt::format(
                "run {} recorded no action times; there is nothing to calibrate from", each.id));
    }
    calibration.measured_side_by_side = median_side_by_side(run_actions);
    // Every recorded step of every run: `run` records no warm-up step, so each is steady.
    std::vector<std::vector<traces::ActionRecord>> step_actions;
    for (const auto& actions : run_actions)
        for (auto& step : analysis::split_by_training_step(actions))
            step_actions.push_back(std::move(step));
    const std::vector<traces::ProfileRecord> profile =
        profiles.front().empty() ? std::vector<traces::ProfileRecord>{} : median_profile(profiles);
    std::vector<StepSamples> samples;
    for (const auto& step : step_actions)
        samples.push_back(step_samples(step, run.pp * run.v));
    // Without a profile the deliveries are the link; with one, they set its latency.
    record_run_deliveries(calibration, seen_deliveries(reader, runs));
    // The transport pipelens ran the run with; none for an imported run, whose SEND spans block
    // a thread nobody knows.
    record_send_issue(calibration, samples, recorded ? recorded->run.transport : "");
    if (!profile.empty()) {
        apply_profile(calibration, run, profile, step_actions, run_id);
        hold_link_to_run_deliveries(calibration);
    } else {
        calibrate_from_actions(calibration, runs, samples);
    }
    // Taken about what the costs are: means with a profile, medians without.
    experiment.jitter =
        fit_jitter(jitter_groups(samples), step_totals(samples),
                   calibration.from_profile ? JitterCentre::mean : JitterCentre::median);
    if (!calibration.assumed_split_stages.empty())  // shown by `simulate` with every prediction
        experiment.name += fmt::format("; no profile: I and W assumed, {}", kAssumedBackwardSplit);
    refuse_impossible_figures(
        calibration,
        fmt::format("{} {}", runs.size() == 1 ? "run" : "runs", fmt::join(run_ids, ", ")),
        stage_spreads(run_actions, profile, run.pp * run.v), profile);
    return calibration;
}

}  // namespace pipelens::sim
