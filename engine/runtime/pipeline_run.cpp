// Pipeline runs: set-up (model, split, batch, shape inference), one step per rank, the
// single-rank reference, and the gathering of every rank's report on rank 0. Reports travel as
// JSON through the transport, the same way for threads and processes, so `local` exercises the
// exact path `gloo` and `nccl` take.
#include "engine/runtime/pipeline_run.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/run_record/experiment_schedule.hpp"
#include "engine/runtime/clock_sync.hpp"
#include "engine/runtime/gloo_transport.hpp"
#include "engine/runtime/link_profiler.hpp"
#include "engine/runtime/local_transport.hpp"
#include "engine/runtime/nccl_transport.hpp"
#include "engine/runtime/pipeline_setup.hpp"
#include "engine/runtime/rank_executor.hpp"
#include "engine/runtime/shared_parameters.hpp"
#include "engine/runtime/stage_profiler.hpp"
#include "engine/runtime/torch_meta.hpp"
#include "engine/stage_plan/backend_choice.hpp"
#include "engine/stage_plan/stage_split.hpp"

namespace pipelens::runtime {
namespace {

// What one rank reports to rank 0.
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

// JSON has no NaN or Inf (nlohmann writes them as null), yet a loss may well be NaN: such
// values travel as their names.
nlohmann::json number_to_json(double value) {
    if (std::isfinite(value))
        return value;
    return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
}

double number_from_json(const nlohmann::json& json) {
    if (!json.is_string())
        return json.get<double>();
    const std::string text = json.get<std::string>();
    if (text == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    return text == "inf" ? std::numeric_limits<double>::infinity()
                         : -std::numeric_limits<double>::infinity();
}

nlohmann::json to_json(const RankReport& report) {
    nlohmann::json json;
    json["rank"] = report.run.rank;
    json["busy_ns"] = report.run.busy_ns;
    nlohmann::json timeline = nlohmann::json::array();
    for (const run_record::ActionTiming& timing : report.run.timeline)
        timeline.push_back({timing.step, timing.start_ns, timing.end_ns});
    json["timeline"] = std::move(timeline);
    nlohmann::json memory = nlohmann::json::array();
    for (const run_record::MemoryPoint& point : report.run.memory)
        memory.push_back({point.time_ns, point.bytes});
    json["memory"] = std::move(memory);
    json["peak_memory_bytes"] = report.run.peak_memory_bytes;
    nlohmann::json profile = nlohmann::json::array();
    for (const run_record::ProfileFigure& figure : report.profile)
        profile.push_back({figure.rank, figure.stage, figure.layer, figure.layer_name,
                           figure.quantity, figure.peer, figure.bytes, figure.median, figure.low,
                           figure.high, figure.samples});
    json["profile"] = std::move(profile);
    if (report.run.clock)
        json["clock"] = {report.run.clock->offset_ns, report.run.clock->uncertainty_ns};
    if (report.run.failure) {
        const run_record::RunFailure& failure = *report.run.failure;
        json["failure"] = {{"rank", failure.rank},
                           {"stage", failure.stage},
                           {"microbatch", failure.microbatch},
                           {"action", failure.action},
                           {"kind", failure.kind},
                           {"expected", failure.expected},
                           {"actual", failure.actual},
                           {"message", failure.message},
                           {"time_ns", failure.time_ns}};
        if (failure.started_ns)
            json["failure"]["started_ns"] = *failure.started_ns;
    }
    json["holds_last_stage"] = report.holds_last_stage;
    json["loss"] = number_to_json(report.loss);
    json["reference_loss"] = number_to_json(report.reference_loss);
    json["output_max_error"] = number_to_json(report.output_max_error);
    json["gradient_max_error"] = number_to_json(report.gradient_max_error);
    json["outputs_match"] = report.outputs_match;
    json["gradients_match"] = report.gradients_match;
    nlohmann::json accuracy = nlohmann::json::array();
    for (const run_record::StageAccuracy& entry : report.accuracy)
        accuracy.push_back({entry.stage, entry.microbatch, number_to_json(entry.max_abs_error),
                            number_to_json(entry.max_relative_error), entry.diverges,
                            entry.non_finite});
    json["accuracy"] = std::move(accuracy);
    json["recording"] = report.recording;
    return json;
}

RankReport from_json(const nlohmann::json& json) {
    RankReport report;
    report.run.rank = json.at("rank");
    report.run.busy_ns = json.at("busy_ns");
    for (const auto& timing : json.at("timeline"))
        report.run.timeline.push_back({timing[0], timing[1], timing[2], -1});
    for (const auto& point : json.at("memory"))
        report.run.memory.push_back({point[0], point[1]});
    report.run.peak_memory_bytes = json.at("peak_memory_bytes");
    for (const auto& figure : json.at("profile"))
        report.profile.push_back({figure[0], figure[1], figure[2], figure[3], figure[4], figure[5],
                                  figure[6], figure[7], figure[8], figure[9], figure[10]});
    if (json.contains("clock"))
        report.run.clock = run_record::ClockOffset{json["clock"][0], json["clock"][1]};
    if (json.contains("failure")) {
        const auto& failure = json["failure"];
        report.run.failure = run_record::RunFailure{
            failure["rank"],    failure["stage"],    failure["microbatch"], failure["action"],
            failure["kind"],    failure["expected"], failure["actual"],     failure["message"],
            failure["time_ns"], std::nullopt};
        if (failure.contains("started_ns"))
            report.run.failure->started_ns = failure["started_ns"].get<std::int64_t>();
    }
    report.holds_last_stage = json.at("holds_last_stage");
    report.loss = number_from_json(json.at("loss"));
    report.reference_loss = number_from_json(json.at("reference_loss"));
    report.output_max_error = number_from_json(json.at("output_max_error"));
    report.gradient_max_error = number_from_json(json.at("gradient_max_error"));
    report.outputs_match = json.at("outputs_match");
    report.gradients_match = json.at("gradients_match");
    for (const auto& entry : json.at("accuracy"))
        report.accuracy.push_back({entry[0], entry[1], number_from_json(entry[2]),
                                   number_from_json(entry[3]), entry[4], entry[5]});
    report.recording = json.at("recording");
    return report;
}

bool close(const torch::Tensor& actual, const torch::Tensor& expected, double& max_error) {
    max_error = run_record::larger_error(max_error, (actual - expected).abs().max().item<double>());
    return torch::allclose(actual, expected, run_record::kRelativeTolerance,
                           run_record::kAbsoluteTolerance);
}

// The single-rank reference: the whole model on the whole batch, compared with what this rank
// computed for its stages.
void compare_with_reference(const run_record::PipelineRunOptions& options, int stage_count,
                            const std::vector<StageLayers>& stages, const RankPlan& plan,
                            const Batch& batch, RankReport& report) {
    const PipelineModel reference = build_model(model_spec(options), stage_count);
    const torch::Tensor output = run_layers(reference.layers, batch.whole_inputs).at(0);
    const torch::Tensor loss = torch::mse_loss(output, batch.whole_target);
    loss.backward();
    report.reference_loss = loss.item<double>();
    for (const auto& [index, stage] : plan.stages) {
        const std::vector<torch::Tensor> mine = stage->parameters();
        std::vector<torch::Tensor> theirs;
        for (const ModelLayer& layer : layers_of(reference, stages[index]))
            theirs.insert(theirs.end(), layer.parameters.begin(), layer.parameters.end());
        for (std::size_t at = 0; at < mine.size() && at < theirs.size(); ++at) {
            if (!mine[at].grad().defined() || !theirs[at].grad().defined()) {
                report.gradients_match &= mine[at].grad().defined() == theirs[at].grad().defined();
                continue;
            }
            report.gradients_match &=
                close(mine[at].grad(), theirs[at].grad(), report.gradient_max_error);
        }
        if (stage->is_last()) {
            TensorList outputs;
            for (int microbatch = 0; microbatch < static_cast<int>(batch.targets.size());
                 ++microbatch)
                outputs.push_back(stage->output(microbatch));
            report.outputs_match = close(torch::cat(outputs, options.chunk_dim), output.detach(),
                                         report.output_max_error);
        }
    }
}

// Every stage of this rank against the reference model run stage by stage on the same
// microbatch: the first stage whose outputs diverge is where the error entered.
std::vector<run_record::StageAccuracy> check_stage_accuracy(
    const run_record::PipelineRunOptions& options, int stage_count,
    const std::vector<StageLayers>& stages, const RankPlan& plan, const Batch& batch) {
    const PipelineModel reference = build_model(model_spec(options), stage_count);
    torch::NoGradGuard no_grad;
    std::vector<run_record::StageAccuracy> results;
    for (int microbatch = 0; microbatch < static_cast<int>(batch.microbatch_inputs.size());
         ++microbatch) {
        TensorList values = batch.microbatch_inputs[microbatch];
        for (int index = 0; index < stage_count; ++index) {
            values = run_layers(layers_of(reference, stages[index]), values);
            const auto held = plan.stages.find(index);
            if (held == plan.stages.end())
                continue;
            const TensorList& actual = held->second->kept_outputs(microbatch);
            run_record::StageAccuracy entry{index, microbatch, 0, 0, false, false};
            double largest = 0;
            for (std::size_t at = 0; at < actual.size() && at < values.size(); ++at) {
                entry.non_finite |= actual[at].is_floating_point() &&
                                    !torch::isfinite(actual[at]).all().item<bool>();
                if (!actual[at].is_floating_point() || actual[at].sizes() != values[at].sizes()) {
                    entry.diverges |= !actual[at].equal(values[at]);
                    continue;
                }
                const torch::Tensor expected = values[at].to(actual[at].scalar_type());
                largest = std::max(largest, expected.abs().max().item<double>());
                entry.diverges |= !close(actual[at], expected, entry.max_abs_error);
            }
            entry.max_relative_error =
                largest > 0 || std::isnan(entry.max_abs_error) ? entry.max_abs_error / largest : 0;
            results.push_back(entry);
        }
    }
    return results;
}

// The F of `stage` for `microbatch` on `rank`, as the schedule writes it ("" if none).
std::string forward_text(const Schedule& lowered, int rank, int stage, int microbatch) {
    for (const Action& action : lowered.ranks.at(rank))
        for (const Action& part : lowered.parts_of(action))
            if (part.kind == ActionKind::forward && part.stage == stage &&
                part.microbatch == microbatch)
                return lowered.text(part);
    return "";
}

// The first microbatch whose model outputs (or loss) the last stage computed as NaN or Inf.
// Metadata checks cannot see them and a NaN compares as no error, so without this a run that
// produced NaN would be recorded as finished. Looked at after the step, outside its timing.
std::optional<run_record::RunFailure> non_finite_outputs(const PipelineStage& last,
                                                         const Schedule& lowered, int rank) {
    for (int microbatch = 0; microbatch < lowered.microbatch_count; ++microbatch) {
        const torch::Tensor& output = last.output(microbatch);
        const std::int64_t bad =
            output.is_floating_point() ? (~torch::isfinite(output)).sum().item<std::int64_t>() : 0;
        const double loss = last.loss(microbatch);
        if (bad == 0 && std::isfinite(loss))
            continue;
        run_record::RunFailure failure;
        failure.rank = rank;
        failure.stage = last.index();
        failure.microbatch = microbatch;
        failure.action = forward_text(lowered, rank, last.index(), microbatch);
        failure.kind = "non_finite";
        failure.expected = "finite values";
        failure.actual =
            fmt::format("{} of {} values NaN or Inf, loss {}", bad, output.numel(), loss);
        failure.message = fmt::format(
            "Stage {} forward outputs[0] has {} non-finite value{} (NaN or Inf) of {} and the loss "
            "is {} (rank {}, microbatch {}); --check-accuracy names the stage they first appear on",
            last.index(), bad, bad == 1 ? "" : "s", output.numel(), loss, rank, microbatch);
        return failure;
    }
    return std::nullopt;
}

std::int64_t steady_clock_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Everything a rank needs before the step starts: built once, outside the timed step. The
// recording holds the engine state the rank built, event by event; the plan is made from it.
struct PreparedRank {
    explicit PreparedRank(int rank) : recording(rank, "real", steady_clock_ns) {}
    recorder::StateRecorder recording;
    PipelineModel model;
    std::vector<StageLayers> stages;
    Batch batch;
    RankPlan plan;
    MemoryAccountHandle memory;  // this rank's tensors during the measured step
    std::optional<run_record::RunFailure>
        failure;  // set-up failed here (a stage backend's compile error)
};

// The recorded split as layer ranges of `model`.
std::vector<StageLayers> stages_of(const recorder::PipelineState& state,
                                   const PipelineModel& model) {
    std::vector<StageLayers> stages;
    int first = 0;
    for (const recorder::StageState& stage : state.stages) {
        stages.push_back({first, static_cast<int>(stage.layers.size())});
        first += static_cast<int>(stage.layers.size());
    }
    if (first != static_cast<int>(model.layers.size()))
        throw std::logic_error("the recorded split does not cover the model's layers");
    return stages;
}

std::unique_ptr<PreparedRank> prepare_rank(const run_record::PipelineRunOptions& options,
                                           const Schedule& lowered, int rank) {
    const int stage_count = lowered.stage_count;
    auto prepared = std::make_unique<PreparedRank>(rank);
    recorder::StateRecorder& recording = prepared->recording;
    recording.configure_transport(
        {options.transport, lowered.rank_count, options.timeout_ms * 1'000'000, "cpu"});
    record_executed_schedule(recording, lowered, options.zero_bubble);
    prepared->model = build_model(model_spec(options), stage_count);
    recording.split_model(options.model, layer_names(prepared->model), options.split_points);
    prepared->stages = stages_of(recording.state(), prepared->model);
    prepared->batch = make_batch(prepared->model, options, lowered.microbatch_count);
    const std::vector<StageMeta> inferred =
        infer_shapes(prepared->model, prepared->stages, prepared->batch);
    for (int index = 0; index < stage_count; ++index)
        recording.set_stage_meta(index, inferred[index].inputs, inferred[index].outputs);
    recording.plan_buffers();
    if (!options.backends.empty()) {
        const std::vector<std::string> backends =
            choose_stage_backends(options.backends, stage_count);
        for (int index = 0; index < stage_count; ++index)
            recording.set_stage_backend(index, backends[index]);
    }

    RankPlan& plan = prepared->plan;
    plan.rank = rank;
    plan.lowered = &lowered;
    for (const recorder::StageState& stage : recording.state().stages)
        plan.stage_meta.push_back({*stage.inputs, *stage.outputs});
    plan.timeout = std::chrono::milliseconds(options.timeout_ms);
    for (const std::string& text : options.faults)
        plan.faults.push_back(run_record::parse_fault(text));
    try {
        for (const recorder::StageState& stage : recording.state().stages)
            if (stage.rank == rank)
                plan.stages[stage.index] = std::make_unique<PipelineStage>(
                    stage.index, stage_count, lowered.microbatch_count,
                    layers_of(prepared->model, prepared->stages[stage.index]),
                    plan.stage_meta[stage.index], stage.backend, options.check_accuracy);
    } catch (const BackendError& error) {
        prepared->failure = run_record::RunFailure{
            rank,           error.stage(), -1, "",          error.kind(), error.expected(),
            error.actual(), error.what(),  0,  std::nullopt};
        return prepared;
    }
    if (plan.stages.contains(0))
        plan.microbatch_inputs = prepared->batch.microbatch_inputs;
    if (plan.stages.contains(stage_count - 1))
        plan.targets = prepared->batch.targets;
    return prepared;
}

// Runs the warm-up steps, then the measured one. All ranks pass a barrier before each step, and
// time zero is the moment they leave it.
RankOutcome run_steps(const run_record::PipelineRunOptions& options, const Schedule& lowered,
                      RankPlan& plan, MemoryAccount* memory, Transport& transport) {
    const std::chrono::milliseconds timeout(options.timeout_ms);
    RankOutcome outcome;
    for (int step = 0; step <= options.warmup_steps; ++step) {
        for (auto& [index, stage] : plan.stages)
            stage->reset();
        plan.tag_offset = step * lowered.pair_count;
        try {
            transport.barrier(timeout);
        } catch (const std::exception& error) {
            outcome.rank = plan.rank;
            outcome.failure = run_record::RunFailure{
                plan.rank, -1,
                -1,        "",
                "stopped", "",
                "",        fmt::format("stopped before step {}: {}", step, error.what()),
                0,         std::nullopt};
            return outcome;
        }
        // Memory is counted in the measured step only: what warm-up allocated and still holds
        // (gradients are dropped between steps) is not the step's.
        const bool measured = step == options.warmup_steps;
        plan.memory = measured ? memory : nullptr;
        const ScopedMemoryAccount charged_to(plan.memory);
        outcome = execute_rank(plan, transport, std::chrono::steady_clock::now());
        if (outcome.failure)
            return outcome;
    }
    return outcome;
}

// A failure of `rank` outside any stage or action.
run_record::RunFailure rank_error(int rank, std::string message) {
    return run_record::RunFailure{rank, -1,          -1, "", "error", "", "", std::move(message),
                                  0,    std::nullopt};
}

// The first message tag after those of every step (warm-up and measured).
int tags_after_steps(const run_record::PipelineRunOptions& options, const Schedule& lowered) {
    return (options.warmup_steps + 1) * lowered.pair_count;
}

// The rank's clock: the host's, unless a `rankN=clock:` fault puts it off.
run_record::RankClock clock_of(const std::vector<run_record::Fault>& faults, int rank) {
    run_record::RankClock clock;
    for (const run_record::Fault& fault : faults)
        if (fault.kind == run_record::Fault::Kind::clock_skew && fault.rank == rank)
            clock.skew_ns += fault.clock_skew_ns;
    return clock;
}

// Where this rank's time zero lies on the run's clock (rank 0's), measured against rank 0 over
// the transport: the shift to add to the rank's times. Sets `run.clock`, or `run.failure` when
// the measurement fails (the shift is then 0: the rank's own clock).
std::int64_t put_on_run_clock(const run_record::PipelineRunOptions& options,
                              const Schedule& lowered, const RankPlan& plan, Transport& transport,
                              std::chrono::steady_clock::time_point epoch,
                              run_record::RankRun& run) {
    const run_record::RankClock clock = clock_of(plan.faults, plan.rank);
    try {
        const std::int64_t own_zero_ns = clock.at(epoch);
        const ClockAlignment alignment =
            align_clock_with_rank_zero(transport, tags_after_steps(options, lowered), clock,
                                       own_zero_ns, std::chrono::milliseconds(options.timeout_ms));
        run.clock = alignment.to_rank_zero;
        return run_record::zero_on_run_clock(own_zero_ns, alignment.to_rank_zero,
                                             alignment.rank_zero_zero_ns);
    } catch (const std::exception& error) {
        run.failure = rank_error(
            plan.rank, fmt::format("rank {} could not put its times on rank 0's clock: {}",
                                   plan.rank, error.what()));
        return 0;
    }
}

// The largest message a stage boundary carries.
std::int64_t largest_boundary_bytes(const RankPlan& plan) {
    std::int64_t largest = 0;
    for (std::size_t stage = 1; stage < plan.stage_meta.size(); ++stage) {
        std::int64_t bytes = 0;
        for (const TensorMeta& input : plan.stage_meta[stage].inputs)
            bytes += input.byte_count();
        largest = std::max(largest, bytes);
    }
    return largest;
}

// `--profile`, once the step and its checks are done (it resets the stages): all ranks pass a
// barrier and measure their stages, layers and links at the same time.
void profile_rank(const run_record::PipelineRunOptions& options, const Schedule& lowered,
                  PreparedRank& prepared, Transport& transport, RankReport& report) {
    const int rank = prepared.plan.rank;
    const std::chrono::milliseconds timeout(options.timeout_ms);
    try {
        transport.barrier(timeout);
        StageProfileInput input;
        input.rank = rank;
        input.stages = &prepared.plan.stages;
        input.model = &prepared.model;
        input.split = &prepared.stages;
        input.first_stage_inputs = prepared.batch.microbatch_inputs.at(0);
        input.last_stage_target = prepared.batch.targets.at(0);
        input.budget = kStageProfileBudget;
        report.profile = profile_stages(input);
        std::size_t parameters = 0;
        for (const ModelLayer& layer : prepared.model.layers)
            parameters += layer.parameters.size();
        const int tag_base = tags_after_steps(options, lowered) + kClockTags +
                             static_cast<int>(parameters);  // after the shared gradients' tags
        const std::vector<run_record::ProfileFigure> links =
            profile_links(transport, tag_base,
                          link_profile_sizes(largest_boundary_bytes(prepared.plan)), timeout);
        report.profile.insert(report.profile.end(), links.begin(), links.end());
    } catch (const std::exception& error) {
        report.run.failure =
            rank_error(rank, fmt::format("rank {} could not profile: {}", rank, error.what()));
        transport.abort(report.run.failure->message);
    }
}

RankReport run_prepared_rank(const run_record::PipelineRunOptions& options, const Schedule& lowered,
                             PreparedRank& prepared, Transport& transport) {
    const int stage_count = lowered.stage_count;
    const int rank = prepared.plan.rank;
    RankPlan& plan = prepared.plan;
    RankReport report;
    report.run.rank = rank;
    // Event times go on the run's clock: ns from the measured step's time zero, so set-up is
    // negative; from the moment the rank gave up when no step began.
    const auto report_recording = [&](std::optional<std::chrono::steady_clock::time_point> zero) {
        report.recording = recorder::recording_to_json(
            prepared.recording,
            zero ? std::chrono::duration_cast<std::chrono::nanoseconds>(zero->time_since_epoch())
                       .count()
                 : steady_clock_ns());
    };
    if (prepared.failure) {
        report_recording(std::nullopt);
        transport.abort(fmt::format("rank {}: {}", rank, prepared.failure->message));
        report.run.failure = prepared.failure;
        return report;
    }
    const RankOutcome outcome = run_steps(options, lowered, plan, prepared.memory.get(), transport);
    // Measured once every rank has run its step; a failed step leaves the rank's times on its
    // own clock.
    std::int64_t zero_shift_ns = 0;
    if (outcome.failure)
        report.run.failure = outcome.failure;
    else if (outcome.epoch)
        zero_shift_ns =
            put_on_run_clock(options, lowered, plan, transport, *outcome.epoch, report.run);
    report_recording(outcome.epoch
                         ? std::optional(*outcome.epoch - std::chrono::nanoseconds(zero_shift_ns))
                         : std::nullopt);
    for (const TimedAction& timed : outcome.timeline) {
        report.run.timeline.push_back(
            {timed.step, timed.start_ns + zero_shift_ns, timed.end_ns + zero_shift_ns, -1});
        if (is_compute(lowered.ranks[rank][timed.step].kind))
            report.run.busy_ns += timed.end_ns - timed.start_ns;
    }
    for (const run_record::MemoryPoint& point : outcome.memory)
        report.run.memory.push_back({point.time_ns + zero_shift_ns, point.bytes});
    report.run.peak_memory_bytes = outcome.peak_memory_bytes;
    if (report.run.failure) {
        if (options.profile)  // the others would wait for it at the profile's barrier
            transport.abort(report.run.failure->message);
        return report;
    }
    try {
        sum_shared_gradients(find_shared_parameters(prepared.model, prepared.stages, lowered, rank),
                             rank, transport, tags_after_steps(options, lowered) + kClockTags,
                             std::chrono::milliseconds(options.timeout_ms));
        transport.finish_sends(std::chrono::milliseconds(options.timeout_ms));
    } catch (const std::exception& error) {
        report.run.failure = rank_error(
            rank, fmt::format("rank {} could not add up the gradients of shared parameters: {}",
                              rank, error.what()));
        if (options.profile)  // the others would wait for it at the profile's barrier
            transport.abort(report.run.failure->message);
        return report;
    }
    if (plan.stages.contains(stage_count - 1)) {
        report.holds_last_stage = true;
        for (int microbatch = 0; microbatch < lowered.microbatch_count; ++microbatch)
            report.loss += plan.stages.at(stage_count - 1)->loss(microbatch);
        report.loss /= lowered.microbatch_count;
        report.run.failure = non_finite_outputs(*plan.stages.at(stage_count - 1), lowered, rank);
        if (report.run.failure && !report.run.timeline.empty())
            report.run.failure->time_ns = report.run.timeline.back().end_ns;
    }
    if (options.check_reference)
        compare_with_reference(options, stage_count, prepared.stages, plan, prepared.batch, report);
    if (options.check_accuracy)
        report.accuracy =
            check_stage_accuracy(options, stage_count, prepared.stages, plan, prepared.batch);
    if (options.profile)
        profile_rank(options, lowered, prepared, transport, report);
    return report;
}

run_record::PipelineRunResult merge(const std::vector<RankReport>& reports,
                                    const run_record::PipelineRunOptions& options) {
    run_record::PipelineRunResult result;
    result.completed = true;
    result.device = "cpu";
    result.reference.checked = options.check_reference;
    result.reference.outputs_match = true;
    result.reference.gradients_match = true;
    result.accuracy.checked = options.check_accuracy;
    for (const RankReport& report : reports) {
        result.ranks.push_back(report.run);
        if (!report.recording.is_null())
            result.recordings.push_back(
                {report.run.rank, recorder::recording_from_json(report.recording)});
        result.accuracy.stages.insert(result.accuracy.stages.end(), report.accuracy.begin(),
                                      report.accuracy.end());
        result.profile.insert(result.profile.end(), report.profile.begin(), report.profile.end());
        result.completed &= !report.run.failure.has_value();
        for (const run_record::ActionTiming& timing : report.run.timeline)
            result.step_time_ns = std::max(result.step_time_ns, timing.end_ns);
        if (report.holds_last_stage) {
            result.loss = report.loss;
            result.reference.reference_loss = report.reference_loss;
            result.reference.loss_error = std::abs(report.loss - report.reference_loss);
        }
        result.reference.output_max_error =
            run_record::larger_error(result.reference.output_max_error, report.output_max_error);
        result.reference.gradient_max_error = run_record::larger_error(
            result.reference.gradient_max_error, report.gradient_max_error);
        result.reference.outputs_match &= report.outputs_match;
        result.reference.gradients_match &= report.gradients_match;
    }
    if (!result.completed) {
        result.reference.outputs_match = result.reference.gradients_match = false;
    }
    std::sort(result.accuracy.stages.begin(), result.accuracy.stages.end(),
              [](const run_record::StageAccuracy& left, const run_record::StageAccuracy& right) {
                  return std::pair(left.stage, left.microbatch) <
                         std::pair(right.stage, right.microbatch);
              });
    for (const run_record::StageAccuracy& entry : result.accuracy.stages)
        if (entry.diverges) {
            result.accuracy.first_divergence = entry;
            break;
        }
    return result;
}

std::vector<std::vector<TensorMeta>> boundary_inputs(const run_record::PipelineRunOptions& options,
                                                     const Schedule& lowered) {
    const PipelineModel model = build_model(model_spec(options), lowered.stage_count);
    const auto stages = plan_stages(model, options, lowered.stage_count);
    const Batch batch = make_batch(model, options, lowered.microbatch_count);
    const std::vector<StageMeta> metas = infer_shapes(model, stages, batch);
    // A backend that cannot act on its stage is a usage error, found here once; the failure a
    // fault-injecting backend is meant to raise is left to the rank, which records it.
    const std::vector<std::string> backends =
        choose_stage_backends(options.backends, lowered.stage_count);
    for (int index = 0; index < lowered.stage_count; ++index) {
        TensorList example;
        for (const TensorMeta& input : metas[index].inputs)
            example.push_back(empty_like_meta(input).zero_());
        try {
            StageBackend(backends[index], index, layers_of(model, stages[index]), example);
        } catch (const BackendError&) {
        }
    }
    std::vector<std::vector<TensorMeta>> inputs;
    for (const StageMeta& meta : metas)
        inputs.push_back(meta.inputs);
    return inputs;
}

// An empty payload is a rank that never reported: it died (how, when `deaths` says) or hangs.
std::vector<RankReport> reports_from(const std::vector<std::string>& payloads,
                                     const run_record::PipelineRunOptions& options,
                                     const std::vector<std::string>& deaths = {}) {
    std::vector<RankReport> reports;
    for (std::size_t rank = 0; rank < payloads.size(); ++rank) {
        if (!payloads[rank].empty()) {
            reports.push_back(from_json(nlohmann::json::parse(payloads[rank])));
            continue;
        }
        RankReport lost;
        lost.run.rank = static_cast<int>(rank);
        const bool died = rank < deaths.size() && !deaths[rank].empty();
        lost.run.failure = run_record::RunFailure{
            static_cast<int>(rank),
            -1,
            -1,
            "",
            died ? "rank_died" : "lost",
            "",
            "",
            died ? fmt::format("rank {} died ({}) before it reported; its actions are not "
                               "recorded",
                               rank, deaths[rank])
                 : fmt::format("rank {} sent no report within {} ms: it died or hangs", rank,
                               options.timeout_ms),
            0,
            std::nullopt};
        reports.push_back(std::move(lost));
    }
    return reports;
}

void write_report_file(const std::string& path, const std::string& payload) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << payload;
    if (!file.flush())
        throw std::runtime_error(fmt::format("{}: cannot write this rank's report", path));
}

run_record::PipelineRunResult run_local(const run_record::PipelineRunOptions& options,
                                        const Schedule& lowered) {
    const int world_size = lowered.rank_count;
    auto fabric = std::make_shared<LocalFabric>(world_size);
    std::vector<std::string> payloads;
    std::vector<std::string> thread_errors(world_size);
    {
        std::vector<std::jthread> threads;
        for (int rank = 0; rank < world_size; ++rank)
            threads.emplace_back([&, rank] {
                // Set again in each rank thread: whether LibTorch's count belongs to the process
                // or to the calling thread depends on its parallel backend (with OpenMP, a count
                // set in one thread was not seen by another in our checks).
                torch::set_num_threads(options.intra_op_threads);
                LocalTransport transport(fabric, rank);
                try {
                    const std::unique_ptr<PreparedRank> prepared =
                        prepare_rank(options, lowered, rank);
                    const RankReport report =
                        run_prepared_rank(options, lowered, *prepared, transport);
                    auto gathered = transport.gather_to_rank_zero(
                        to_json(report).dump(), std::chrono::milliseconds(options.timeout_ms));
                    if (rank == 0)
                        payloads = std::move(gathered);
                } catch (const std::exception& error) {
                    thread_errors[rank] = error.what();
                    transport.abort(fmt::format("rank {}: {}", rank, error.what()));
                }
            });
    }
    for (int rank = 0; rank < world_size; ++rank)
        if (!thread_errors[rank].empty())
            throw std::runtime_error(fmt::format("rank {}: {}", rank, thread_errors[rank]));
    return merge(reports_from(payloads, options), options);
}

run_record::PipelineRunResult run_distributed(const run_record::PipelineRunOptions& options,
                                              const Schedule& lowered) {
    Rendezvous rendezvous;
    rendezvous.master_address = options.master_address;
    rendezvous.master_port = options.master_port;
    rendezvous.rank = options.rank;
    rendezvous.world_size = options.world_size;
    rendezvous.timeout = std::chrono::milliseconds(options.rendezvous_timeout_ms);
    if (options.world_size != lowered.rank_count)
        throw std::invalid_argument(
            fmt::format("the schedule has {} ranks but the world size is {}", lowered.rank_count,
                        options.world_size));
    std::unique_ptr<Transport> transport =
        options.transport == "gloo"
            ? make_gloo_transport(rendezvous)
            : make_nccl_transport(rendezvous, options.device >= 0 ? options.device : options.rank);
    std::unique_ptr<PreparedRank> prepared = prepare_rank(options, lowered, options.rank);
    RankReport report = run_prepared_rank(options, lowered, *prepared, *transport);
    const std::string payload = to_json(report).dump();
    if (!options.report_path.empty())
        write_report_file(options.report_path, payload);
    const auto payloads =
        transport->gather_to_rank_zero(payload, std::chrono::milliseconds(options.timeout_ms));
    if (options.rank != 0)
        return merge({report}, options);
    return merge(reports_from(payloads, options), options);
}

}  // namespace

run_record::PipelineRunResult merge_rank_reports(const std::vector<std::string>& payloads,
                                                 const std::vector<std::string>& deaths,
                                                 const run_record::PipelineRunOptions& given,
                                                 const Schedule& lowered) {
    const run_record::PipelineRunOptions options = with_model_layers(given, lowered);
    run_record::PipelineRunResult result;
    try {
        result = merge(reports_from(payloads, options, deaths), options);
    } catch (const nlohmann::json::exception& error) {
        throw std::invalid_argument(fmt::format("a rank's report is malformed: {}", error.what()));
    }
    result.stage_inputs = boundary_inputs(options, lowered);
    return result;
}

run_record::PipelineRunResult run_pipeline(const run_record::PipelineRunOptions& given,
                                           const Schedule& lowered) {
    if (!lowered.has_communication)
        throw std::invalid_argument("run_pipeline needs a lowered schedule (with SEND/RECV)");
    const run_record::PipelineRunOptions options = with_model_layers(given, lowered);
    for (const std::string& text : options.faults) {
        const run_record::Fault fault = run_record::parse_fault(text);
        if (fault.kind == run_record::Fault::Kind::die && options.transport == "local")
            throw std::invalid_argument(fmt::format(
                "--fault {}: a rank can only die on its own with one process per rank (--transport "
                "gloo --nproc N)",
                text));
        if (fault.rank >= lowered.rank_count)
            throw std::invalid_argument(fmt::format("--fault {}: there is no rank {} (ranks 0..{})",
                                                    text, fault.rank, lowered.rank_count - 1));
        if (fault.stage >= lowered.stage_count)
            throw std::invalid_argument(
                fmt::format("--fault {}: there is no stage {} (stages 0..{})", text, fault.stage,
                            lowered.stage_count - 1));
    }
    // Builds, splits and infers once up front, so a bad model, split or batch is one error
    // here instead of one per rank.
    std::vector<std::vector<TensorMeta>> stage_inputs = boundary_inputs(options, lowered);
    torch::set_num_threads(options.intra_op_threads);  // this process's own rank (gloo, nccl)
    run_record::PipelineRunResult result;
    if (options.transport == "local")
        result = run_local(options, lowered);
    else if (options.transport == "gloo" || options.transport == "nccl")
        result = run_distributed(options, lowered);
    else
        throw std::invalid_argument("unknown transport '" + options.transport +
                                    "' (use local, gloo or nccl)");
    result.stage_inputs = std::move(stage_inputs);
    return result;
}

}  // namespace pipelens::runtime
