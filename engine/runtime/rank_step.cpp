// One rank's set-up and step (see rank_step.hpp).
#include "engine/runtime/rank_step.hpp"

#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "engine/recorder/recorded_trace.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "engine/run_record/run_queue_wait.hpp"
#include "engine/runtime/clock_sync.hpp"
#include "engine/runtime/device_placement.hpp"
#include "engine/runtime/link_profiler.hpp"
#include "engine/runtime/reference_check.hpp"
#include "engine/runtime/shared_parameters.hpp"
#include "engine/runtime/stage_profiler.hpp"
#include "engine/runtime/torch_profile.hpp"
#include "engine/stage_plan/backend_choice.hpp"

namespace pipelens::runtime {
namespace {

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
                                                         const Schedule& lowered, int rank,
                                                         bool accuracy_checked) {
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
            "is {} (rank {}, microbatch {}){}",
            last.index(), bad, bad == 1 ? "" : "s", output.numel(), loss, rank, microbatch,
            // With the check, the merge of the reports names that stage here instead.
            accuracy_checked ? "" : "; --check-accuracy names the stage they first appear on");
        return failure;
    }
    return std::nullopt;
}

std::int64_t steady_clock_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

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

}  // namespace

PreparedRank::PreparedRank(int rank) : recording(rank, "real", steady_clock_ns) {}

std::unique_ptr<PreparedRank> prepare_rank(const run_record::PipelineRunOptions& options,
                                           const Schedule& lowered, int rank) {
    const int stage_count = lowered.stage_count;
    auto prepared = std::make_unique<PreparedRank>(rank);
    recorder::StateRecorder& recording = prepared->recording;
    // float32 is left out (empty), so a float32 run records the event it always recorded.
    recording.configure_transport(
        {options.transport, lowered.rank_count, options.timeout_ms * 1'000'000,
         torch_device(options.device).str(),
         options.dtype == run_record::kDefaultRunDtype ? std::string() : options.dtype});
    record_executed_schedule(recording, lowered, options.zero_bubble);
    prepared->model = build_model(model_spec(options), stage_count);
    recording.split_model(options.model, layer_names(prepared->model), options.split_points);
    prepared->stages = stages_of(recording.state(), prepared->model);
    prepared->batch = make_batch(prepared->model, options, lowered.microbatch_count);
    // After the batch: a TorchScript model's batch runs its layers once, on the CPU.
    const c10::Device device = torch_device(options.device);
    const c10::ScalarType dtype = run_scalar_type(options.dtype);
    place_model(prepared->model, device, dtype);
    place_batch(prepared->batch, device, dtype);
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
    plan.device = device;
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
                    plan.stage_meta[stage.index], stage.backend, options.check_accuracy, device);
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

namespace {

// A GPU's memory sampler, whose figures replace the CPU account's there (it sees no GPU
// tensors); none on the CPU, or where the CUDA sampler was not built.
std::unique_ptr<DeviceMemory> gpu_memory(const c10::Device& device, MemoryAccount& account) {
    if (device.is_cpu())
        return nullptr;
    try {
        return make_device_memory(device, account);
    } catch (const std::runtime_error&) {
        return nullptr;
    }
}

// The recorded steps of one rank, one after another on the first one's clock.
struct StepsOutcome {
    RankOutcome outcome;               // every recorded step's actions and memory, concatenated
    std::vector<int> repeat_of;        // per timeline entry: its recorded step
    std::vector<std::int64_t> starts;  // when each recorded step began, on the same clock
    // A GPU's: what the device held when the recorded steps began, which `memory` leaves out.
    std::optional<std::int64_t> memory_baseline_bytes;
    std::vector<std::int64_t> core_waits_ns;  // per recorded step (RankRun's)
    bool core_wait_read = true;               // no reading failed
};

std::int64_t ns_between(std::chrono::steady_clock::time_point from,
                        std::chrono::steady_clock::time_point to) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
}

// Appends one recorded step's outcome to the run's so far.
void append_step(StepsOutcome& steps, RankOutcome step, int repeat) {
    RankOutcome& all = steps.outcome;
    steps.repeat_of.insert(steps.repeat_of.end(), step.timeline.size(), repeat);
    all.timeline.insert(all.timeline.end(), step.timeline.begin(), step.timeline.end());
    all.memory.insert(all.memory.end(), step.memory.begin(), step.memory.end());
    all.peak_memory_bytes = std::max(all.peak_memory_bytes, step.peak_memory_bytes);
    all.rank = step.rank;
    all.failure = std::move(step.failure);
    if (!all.epoch)
        all.epoch = step.epoch;
}

// A profile that cannot start is said and left out: the run and its records go on without it.
void start_torch_profile(const RankPlan& plan, std::optional<TorchProfile>& torch_profile) {
    try {
        torch_profile.emplace(plan.device);
    } catch (const std::runtime_error& error) {
        fmt::print(stderr, "pipelens: rank {}: {}\n", plan.rank, error.what());
    }
}

// Written whether or not the steps failed: what ran until the failure is what explains it.
void write_torch_profile(const run_record::PipelineRunOptions& options, int rank,
                         std::optional<TorchProfile>& torch_profile) {
    if (!torch_profile)
        return;
    try {
        torch_profile->write(torch_profile_path(options.torch_profile_directory, rank), rank,
                             options.world_size, options.transport);
    } catch (const std::exception& error) {
        fmt::print(stderr, "pipelens: rank {}: {}\n", rank, error.what());
    }
    torch_profile.reset();
}

// Runs the warm-up steps, then the recorded ones. All ranks pass a barrier before each step.
// Time zero is the moment they leave the first recorded step's barrier, and every later step's
// times are measured from it too, so steps follow one another on one clock.
// LibTorch's profiler, when asked for, covers the recorded steps only (it starts after warm-up).
StepsOutcome run_steps(const run_record::PipelineRunOptions& options, const Schedule& lowered,
                       RankPlan& plan, MemoryAccount* memory, Transport& transport,
                       std::optional<TorchProfile>& torch_profile) {
    const std::chrono::milliseconds timeout(options.timeout_ms);
    const std::unique_ptr<DeviceMemory> device_memory = gpu_memory(plan.device, *memory);
    std::optional<MemoryAboveBaseline> steps_memory;  // from the first recorded step on
    StepsOutcome steps;
    const int step_count = options.warmup_steps + options.recorded_steps;
    const run_record::RunQueueWait core_wait;  // this thread's: the rank's
    for (int step = 0; step < step_count; ++step) {
        for (auto& [index, stage] : plan.stages)
            stage->reset();
        plan.tag_offset = step * lowered.pair_count;
        try {
            transport.barrier(timeout);
        } catch (const std::exception& error) {
            steps.outcome.rank = plan.rank;
            steps.outcome.failure = run_record::RunFailure{
                plan.rank, -1,
                -1,        "",
                "stopped", "",
                "",        fmt::format("stopped before step {}: {}", step, error.what()),
                0,         std::nullopt};
            return steps;
        }
        const auto left_barrier = std::chrono::steady_clock::now();
        // Memory is counted in the recorded steps only: what warm-up allocated and still holds
        // (gradients are dropped between steps) is not theirs.
        const bool recorded = step >= options.warmup_steps;
        if (recorded && device_memory && !steps_memory) {
            steps_memory.emplace(*device_memory);
            steps.memory_baseline_bytes = steps_memory->baseline_bytes();
        }
        plan.memory = recorded ? memory : nullptr;
        plan.device_memory = recorded && steps_memory ? &*steps_memory : nullptr;
        // Tried once, as the first recorded step begins: a profiler that will not start is said
        // once, not at every step.
        if (step == options.warmup_steps && !options.torch_profile_directory.empty())
            start_torch_profile(plan, torch_profile);
        plan.mark_actions = recorded && torch_profile.has_value();
        const ScopedMemoryAccount charged_to(plan.memory);
        const auto epoch = steps.outcome.epoch.value_or(left_barrier);
        const std::optional<std::int64_t> waited_before = core_wait.waited_ns();
        RankOutcome outcome = execute_rank(plan, transport, epoch);
        const std::optional<std::int64_t> waited_after = core_wait.waited_ns();
        if (recorded && waited_before && waited_after)
            steps.core_waits_ns.push_back(*waited_after - *waited_before);
        else if (recorded)
            steps.core_wait_read = false;
        if (!recorded) {
            if (outcome.failure) {
                steps.outcome = std::move(outcome);
                return steps;
            }
            continue;
        }
        steps.starts.push_back(ns_between(epoch, left_barrier));
        append_step(steps, std::move(outcome), step - options.warmup_steps);
        if (steps.outcome.failure)
            return steps;
    }
    return steps;
}

// A failure of `rank` outside any stage or action.
run_record::RunFailure rank_error(int rank, std::string message) {
    return run_record::RunFailure{rank, -1,          -1, "", "error", "", "", std::move(message),
                                  0,    std::nullopt};
}

// The first message tag after those of every step (warm-up and recorded).
int tags_after_steps(const run_record::PipelineRunOptions& options, const Schedule& lowered) {
    return (options.warmup_steps + options.recorded_steps) * lowered.pair_count;
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
        ClockAlignment alignment =
            align_clock_with_rank_zero(transport, tags_after_steps(options, lowered), clock,
                                       own_zero_ns, std::chrono::milliseconds(options.timeout_ms));
        // Threads read one clock: the offset is exactly what the faults put between them. An
        // estimate's few microseconds of error once ended a RECV before its SEND began.
        if (transport.shares_one_clock())
            alignment.to_rank_zero = {clock_of(plan.faults, 0).skew_ns - clock.skew_ns, 0};
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
        input.device = prepared.plan.device;
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

}  // namespace

RankReport run_prepared_rank(const run_record::PipelineRunOptions& options, const Schedule& lowered,
                             PreparedRank& prepared, Transport& transport) {
    const int stage_count = lowered.stage_count;
    const int rank = prepared.plan.rank;
    RankPlan& plan = prepared.plan;
    RankReport report;
    report.run.rank = rank;
    report.run.device = torch_device(options.device).str();
    // Event times go on the run's clock: ns from the first recorded step's time zero, so set-up is
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
    std::optional<TorchProfile> torch_profile;
    const StepsOutcome steps =
        run_steps(options, lowered, plan, prepared.memory.get(), transport, torch_profile);
    write_torch_profile(options, rank, torch_profile);
    const RankOutcome& outcome = steps.outcome;
    // Measured once every rank has run its step; a failed step leaves the rank's times on its
    // own clock.
    std::int64_t zero_shift_ns = 0;
    if (outcome.epoch)
        report.run.host_zero = run_record::HostZero{
            run_record::host_clock_id(),
            std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.epoch->time_since_epoch())
                .count(),
            clock_of(plan.faults, rank).skew_ns};
    if (outcome.failure)
        report.run.failure = outcome.failure;
    else if (outcome.epoch)
        zero_shift_ns =
            put_on_run_clock(options, lowered, plan, transport, *outcome.epoch, report.run);
    report_recording(outcome.epoch
                         ? std::optional(*outcome.epoch - std::chrono::nanoseconds(zero_shift_ns))
                         : std::nullopt);
    for (std::size_t index = 0; index < outcome.timeline.size(); ++index) {
        const TimedAction& timed = outcome.timeline[index];
        report.run.timeline.push_back(
            {timed.step, timed.start_ns + zero_shift_ns, timed.end_ns + zero_shift_ns, -1,
             index < steps.repeat_of.size() ? steps.repeat_of[index] : 0});
        if (is_compute(lowered.ranks[rank][timed.step].kind))
            report.run.busy_ns += timed.end_ns - timed.start_ns;
    }
    for (const std::int64_t start_ns : steps.starts)
        report.run.step_starts_ns.push_back(start_ns + zero_shift_ns);
    for (const run_record::MemoryPoint& point : outcome.memory)
        report.run.memory.push_back({point.time_ns + zero_shift_ns, point.bytes});
    report.run.peak_memory_bytes = outcome.peak_memory_bytes;
    report.run.memory_before_steps_bytes = steps.memory_baseline_bytes;
    if (steps.core_wait_read)
        report.run.core_waits_ns = steps.core_waits_ns;
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
        report.run.failure = non_finite_outputs(*plan.stages.at(stage_count - 1), lowered, rank,
                                                options.check_accuracy);
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

}  // namespace pipelens::runtime
