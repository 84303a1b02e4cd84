// Real-run recording. The per-rank figures are engine/analysis's bubble accounting over the
// measured timeline: the idle time before a computation is attributed to the peer whose work it
// waited for last by the dependency rules (what the simulator attributes it to), never to the
// rank itself.
#include "engine/run_record/run_trace.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "engine/analysis/bubble_accounting.hpp"
#include "engine/analysis/training_steps.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "engine/recorder/recorded_trace.hpp"
#include "engine/run_record/statistics.hpp"

namespace pipelens::run_record {
namespace {

std::int64_t bytes_of(const std::vector<TensorMeta>& metas, bool gradients_only) {
    std::int64_t bytes = 0;
    for (const TensorMeta& meta : metas) {
        if (gradients_only && !meta.requires_grad)
            continue;
        bytes += meta.byte_count();
    }
    return bytes;
}

std::int64_t transfer_bytes(const Action& action, const PipelineRunResult& result) {
    const auto& inputs = result.stage_inputs;
    switch (action.kind) {
        case ActionKind::send_forward:
            return action.stage + 1 < static_cast<int>(inputs.size())
                       ? bytes_of(inputs[action.stage + 1], false)
                       : 0;
        case ActionKind::recv_forward:
            return bytes_of(inputs.at(action.stage), false);
        case ActionKind::send_backward:
            return bytes_of(inputs.at(action.stage), true);
        case ActionKind::recv_backward:
            return action.stage + 1 < static_cast<int>(inputs.size())
                       ? bytes_of(inputs[action.stage + 1], true)
                       : 0;
        default:
            return 0;
    }
}

// The run as the analyses see it: each rank's lowered program with the times it ran; an
// action it never reached never ended.
analysis::TimedSchedule timed_run(const Schedule& lowered, const PipelineRunResult& result) {
    analysis::TimedSchedule timed{lowered, {}, {}, {}};
    timed.times.resize(lowered.ranks.size());
    for (std::size_t rank = 0; rank < lowered.ranks.size(); ++rank) {
        const std::vector<Action>& actions = lowered.ranks[rank];
        timed.times[rank].reserve(actions.size());
        for (std::size_t step = 0; step < actions.size(); ++step)
            timed.times[rank].push_back({0, -1, static_cast<std::int32_t>(step),
                                         uses_communication_stream(actions[step].kind)});
    }
    for (const RankRun& rank : result.ranks)
        for (const ActionTiming& timing : rank.timeline) {
            analysis::ActionSpan& span = timed.times.at(rank.rank).at(timing.step);
            span.start_ns = timing.start_ns;
            span.end_ns = timing.end_ns;
            span.bytes = std::max<std::int64_t>(timing.bytes, 0);
        }
    return timed;
}

}  // namespace

namespace {

// The recorded steps of the run, each as a result of its own holding only what its bubble
// accounting reads (step time, each rank's id and timeline), its times shifted so that the step
// begins at zero. One pass over the timelines: a copy of the whole run per step made a run of
// many steps quadratic in time and memory (2,000 steps of 128 actions took 8 GB).
std::vector<PipelineRunResult> split_steps(const PipelineRunResult& result,
                                           std::size_t step_count) {
    std::vector<PipelineRunResult> steps(step_count);
    for (std::size_t step = 0; step < step_count; ++step) {
        steps[step].step_time_ns =
            step < result.step_times_ns.size() ? result.step_times_ns[step] : result.step_time_ns;
        steps[step].ranks.resize(result.ranks.size());
    }
    for (std::size_t index = 0; index < result.ranks.size(); ++index) {
        const RankRun& rank = result.ranks[index];
        for (PipelineRunResult& step : steps)
            step.ranks[index].rank = rank.rank;
        for (ActionTiming timing : rank.timeline) {
            const auto step = static_cast<std::size_t>(timing.repeat);
            if (step >= step_count)
                continue;
            const std::int64_t start =
                step < result.step_starts_ns.size() ? result.step_starts_ns[step] : 0;
            timing.start_ns -= start;
            timing.end_ns -= start;
            steps[step].ranks[index].timeline.push_back(timing);
        }
    }
    return steps;
}

// Each rank's figures for one step (the first of several, or the only one).
std::vector<analysis::RankBubbles> step_bubbles(const Schedule& lowered,
                                                const PipelineRunResult& step) {
    const analysis::TimedSchedule timed = timed_run(lowered, step);
    return analysis::account_bubbles(timed, analysis::HoldGraph(timed), step.step_time_ns);
}

}  // namespace

std::vector<traces::RankRecord> real_rank_records(const Schedule& lowered,
                                                  const PipelineRunResult& result) {
    std::vector<std::vector<analysis::RankBubbles>> steps;
    const std::size_t step_count = std::max<std::size_t>(result.step_times_ns.size(), 1);
    if (step_count == 1 && result.step_starts_ns.empty())
        steps.push_back(step_bubbles(lowered, result));
    else
        for (const PipelineRunResult& step : split_steps(result, step_count))
            steps.push_back(step_bubbles(lowered, step));
    const bool has_step = traces::step_figures_apply(real_run_outcome(result));
    std::vector<std::int64_t> step_times = result.step_times_ns;
    step_times.resize(std::min(step_times.size(), steps.size()));
    const std::size_t shown_step =
        steps.size() == 1 ? 0 : analysis::median_step(step_times, result.step_time_ns).value_or(0);
    std::vector<traces::RankRecord> records;
    for (const RankRun& rank : result.ranks) {
        traces::RankRecord record;
        record.rank = rank.rank;
        record.peak_memory_bytes = rank.peak_memory_bytes;
        if (shown_step < rank.core_waits_ns.size())  // the step its other figures are of
            record.core_wait_ns = rank.core_waits_ns[shown_step];
        if (rank.clock) {
            record.clock_offset_ns = rank.clock->offset_ns;
            record.clock_uncertainty_ns = rank.clock->uncertainty_ns;
        }
        const analysis::RankBubbles& figures = steps.at(shown_step).at(rank.rank);
        record.busy_ns = figures.busy_ns;
        record.bubble_ns = figures.bubble_ns;
        record.bubble_ratio = figures.bubble_ratio;
        // A rank that never computed idled the whole step, all warm-up; but a run that stopped
        // has no step, and one of its ranks that never began has no warm-up to report.
        record.warmup_ns = figures.computed || has_step ? figures.split.warmup_ns : 0;
        record.cooldown_ns = figures.split.cooldown_ns;
        record.waiting_on = traces::waiting_on_json(figures.split.waiting_on_rank);
        records.push_back(std::move(record));
    }
    return records;
}

std::string accuracy_message(const StageAccuracy& divergence, const ReferenceTolerance& tolerance) {
    if (divergence.non_finite)
        return fmt::format(
            "stage {} microbatch {} is the first to diverge from the single-rank reference: its "
            "outputs have non-finite values (NaN or Inf)",
            divergence.stage, divergence.microbatch);
    return fmt::format(
        "stage {} microbatch {} is the first to diverge from the single-rank reference: max abs "
        "error {:.6g}, max relative error {:.6g} (tolerance rtol {:g}, atol {:g})",
        divergence.stage, divergence.microbatch, divergence.max_abs_error,
        divergence.max_relative_error, tolerance.relative, tolerance.absolute);
}

std::size_t whole_steps(const Schedule& lowered, const PipelineRunResult& result) {
    if (result.completed)
        return result.step_times_ns.size();
    std::size_t whole = result.step_times_ns.size();
    for (const RankRun& rank : result.ranks) {
        if (rank.device.empty() || rank.rank < 0 || rank.rank >= lowered.rank_count)
            continue;                  // never reported: its steps are unknown, not short
        std::vector<std::size_t> ran;  // actions per recorded step
        for (const ActionTiming& timing : rank.timeline) {
            const auto step = static_cast<std::size_t>(std::max(timing.repeat, 0));
            if (step >= ran.size())
                ran.resize(step + 1, 0);
            ++ran[step];
        }
        std::size_t leading = 0;
        while (leading < ran.size() && ran[leading] == lowered.ranks[rank.rank].size())
            ++leading;
        whole = std::min(whole, leading);
    }
    return whole;
}

std::vector<traces::ErrorRecord> run_error_records(const PipelineRunResult& result) {
    std::vector<traces::ErrorRecord> errors;
    if (const auto& divergence = result.accuracy.first_divergence) {
        traces::ErrorRecord error;
        error.rank = divergence->rank;
        error.stage = divergence->stage;
        error.microbatch = divergence->microbatch;
        error.kind = "accuracy_mismatch";
        error.expected = "the single-rank reference's outputs";
        error.actual = divergence->non_finite
                           ? std::string("non-finite values (NaN or Inf)")
                           : fmt::format("max abs error {:.6g}, max relative error {:.6g}",
                                         divergence->max_abs_error, divergence->max_relative_error);
        error.message = accuracy_message(*divergence, result.accuracy.tolerance);
        errors.push_back(std::move(error));
    }
    const ReferenceComparison& reference = result.reference;
    if (result.completed && reference.checked &&
        (!reference.outputs_match || !reference.gradients_match)) {
        traces::ErrorRecord error;
        error.kind = "reference_mismatch";
        error.expected = "the single-rank reference's outputs and gradients";
        error.actual = fmt::format("outputs max abs error {:.6g}, gradients max abs error {:.6g}",
                                   reference.output_max_error, reference.gradient_max_error);
        error.message = fmt::format(
            "the pipelined step's {} differ from the single-rank reference's ({}; loss {:.6g} "
            "against {:.6g}){}",
            !reference.outputs_match && !reference.gradients_match ? "outputs and gradients"
            : !reference.outputs_match                             ? "outputs"
                                                                   : "gradients",
            error.actual, result.loss, reference.reference_loss,
            result.accuracy.checked ? ""
                                    : "; --check-accuracy names the stage they first differ on");
        errors.push_back(std::move(error));
    }
    // A rank that died or was lost without a report has no moment of its own: recorded untimed,
    // not at 0, where the viewer drew it across every rank at the step's start.
    const auto record_of = [](const RunFailure& failure) {
        const bool untimed = failure.kind == "rank_died" || failure.kind == "lost";
        return traces::ErrorRecord{
            failure.rank,
            failure.stage,
            failure.microbatch,
            failure.action,
            failure.kind,
            failure.expected,
            failure.actual,
            failure.message,
            untimed ? std::nullopt : std::optional<std::int64_t>(failure.time_ns),
            failure.started_ns};
    };
    for (const RankRun& rank : result.ranks)
        if (rank.failure)
            errors.push_back(record_of(*rank.failure));
    for (const RunFailure& failure : result.further_failures)
        errors.push_back(record_of(failure));
    return errors;
}

traces::RunOutcome real_run_outcome(const PipelineRunResult& result) {
    return traces::run_outcome(
        result.completed ? traces::RunStatus::finished : traces::RunStatus::failed,
        run_error_records(result));
}

namespace {

// One more than the highest SEND/RECV link of the lowered schedule: the pair ids one training
// step takes.
std::int32_t pairs_per_step(const Schedule& lowered) {
    std::int32_t links = 0;
    for (const auto& actions : lowered.ranks)
        for (const Action& action : actions)
            if (is_communication(action.kind) && action.link >= 0)
                links = std::max(links, action.link + 1);
    return links;
}

// Every recorded step's actions, each SEND/RECV with its own step's pair id (schema version 8:
// step k's copy of link L is pair k x links + L), and every step's pairs, sized as their sends.
void write_actions_and_pairs(traces::TraceWriter& writer, std::int64_t run_id,
                             const Schedule& lowered, const PipelineRunResult& result) {
    const std::int32_t links = pairs_per_step(lowered);
    std::map<std::tuple<int, int, int>, std::int64_t> moved;  // (rank, index, step) -> bytes
    int steps = 1;
    for (const RankRun& rank : result.ranks)
        for (const ActionTiming& timing : rank.timeline) {
            const Action& action = lowered.ranks[rank.rank][timing.step];
            steps = std::max(steps, timing.repeat + 1);
            traces::ActionRecord record = recorder::action_record(lowered, rank.rank, timing.step);
            if (record.pair_id >= 0)
                record.pair_id += timing.repeat * links;
            record.start_ns = timing.start_ns;
            record.end_ns = timing.end_ns;
            record.bytes = timing.bytes >= 0 ? timing.bytes : transfer_bytes(action, result);
            moved[{rank.rank, timing.step, timing.repeat}] = record.bytes;
            writer.add_action(run_id, record);
        }
    std::map<int, traces::PairRecord> pairs;  // the first step's, by link
    for (int rank = 0; rank < lowered.rank_count; ++rank)
        for (std::size_t step = 0; step < lowered.ranks[rank].size(); ++step) {
            const Action& action = lowered.ranks[rank][step];
            if (!is_communication(action.kind) || action.link < 0)
                continue;
            traces::PairRecord& pair = pairs[action.link];
            pair.pair_id = action.link;
            const bool sends =
                action.kind == ActionKind::send_forward || action.kind == ActionKind::send_backward;
            (sends ? pair.send_rank : pair.recv_rank) = rank;
            (sends ? pair.send_step : pair.recv_step) = static_cast<int>(step);
        }
    for (int training_step = 0; training_step < steps; ++training_step)
        for (const auto& [link, first] : pairs) {
            traces::PairRecord pair = first;
            pair.pair_id = link + training_step * links;
            pair.training_step = training_step;
            const auto sent = moved.find({pair.send_rank, pair.send_step, training_step});
            pair.bytes = sent != moved.end() ? sent->second : 0;
            writer.add_pair(run_id, pair);
        }
}

}  // namespace

std::int64_t record_real_run(traces::TraceWriter& writer, const Schedule& lowered,
                             const PipelineRunResult& result, const Experiment& experiment) {
    return record_measured_run(writer, lowered, result, experiment_to_toml(experiment));
}

std::int64_t record_measured_run(traces::TraceWriter& writer, const Schedule& lowered,
                                 const PipelineRunResult& result, const std::string& config,
                                 traces::RunKind kind) {
    traces::RunRecord run;
    run.kind = kind;
    run.schedule = lowered.name;
    run.pp = lowered.rank_count;
    run.v = lowered.stages_per_rank;
    run.m = lowered.microbatch_count;
    run.config = config;
    return writer.write_run(run, [&](std::int64_t run_id) {
        const std::vector<traces::RankRecord> ranks = real_rank_records(lowered, result);
        double bubble_total = 0;
        for (const traces::RankRecord& rank : ranks) {
            writer.add_rank(run_id, rank);
            bubble_total += rank.bubble_ratio;
        }
        write_actions_and_pairs(writer, run_id, lowered, result);
        for (const ProfileFigure& figure : result.profile)
            writer.add_profile(run_id, {figure.rank, figure.stage, figure.layer, figure.layer_name,
                                        figure.quantity, figure.peer, figure.bytes, figure.median,
                                        figure.low, figure.high, figure.samples});
        for (const RankRun& rank : result.ranks)
            for (const MemoryPoint& point : rank.memory)
                writer.add_memory(run_id, {rank.rank, point.time_ns, point.bytes});
        for (const RankRecording& recording : result.recordings)
            recorder::write_recording(writer, run_id, recording.rank, recording.parts.events,
                                      recording.parts.state, recording.parts.failures);
        for (const traces::ErrorRecord& error : run_error_records(result))
            writer.add_error(run_id, error);
        const traces::RunOutcome outcome = real_run_outcome(result);
        if (!traces::step_figures_apply(outcome))
            writer.fail_run(run_id, outcome.first_error ? outcome.first_error->message
                                                        : std::string("a rank failed"));
        else
            writer.finish_run(run_id, result.step_time_ns,
                              ranks.empty() ? 0 : bubble_total / static_cast<double>(ranks.size()));
    });
}

}  // namespace pipelens::run_record
