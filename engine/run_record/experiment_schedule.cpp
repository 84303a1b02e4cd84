// Experiment -> recorded schedule events -> lowered schedule. A CSV that already carries
// SEND/RECV actions is used as written (after the structure check), so a user can simulate
// exactly the order their runtime executes. The recorded load_schedule_csv event always holds
// today's notation (replays read it so): a file in PyTorch's older one is recorded rewritten.
#include "engine/run_record/experiment_schedule.hpp"

#include <optional>

#include <fmt/format.h>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {

std::shared_ptr<const Schedule> record_experiment_schedule(recorder::StateRecorder& recorder,
                                                           Experiment& experiment) {
    if (experiment.schedule_file.empty()) {
        validate_experiment(experiment);
        recorder.choose_schedule(experiment.shape);
    } else {
        const std::string text = read_schedule_csv_text(experiment.schedule_file);
        const ScheduleCsvReading reading =
            parse_schedule_csv_as(text, experiment.schedule_file, experiment.schedule_notation);
        recorder.load_schedule_csv(experiment.schedule_file,
                                   reading.notation == ActionNotation::legacy
                                       ? format_schedule_csv(reading.schedule)
                                       : text);
        const recorder::ScheduleState& chosen = recorder.state().schedule;
        if (!experiment.rank_count_source.empty() && experiment.shape.rank_count != chosen.pp)
            throw ExperimentError(fmt::format(
                "{} is {} but the schedule file {} has {} rows (one per rank); pp must match "
                "the file, or leave it out to take the file's",
                experiment.rank_count_source, experiment.shape.rank_count, experiment.schedule_file,
                chosen.pp));
        // v and m are the file's as well: one given that differs is refused, not ignored.
        const auto require_files = [&](const std::string& source, int given, int files,
                                       const char* name, const char* meaning) {
            if (!source.empty() && given != files)
                throw ExperimentError(fmt::format(
                    "{} is {} but the schedule file {} has {} = {} ({}); {} must match the file, "
                    "or leave it out to take the file's",
                    source, given, experiment.schedule_file, name, files, meaning, name));
        };
        require_files(experiment.stages_per_rank_source, experiment.shape.stages_per_rank, chosen.v,
                      "v", "stages per rank");
        require_files(experiment.microbatch_count_source, experiment.shape.microbatch_count,
                      chosen.m, "m", "microbatches");
        if (experiment.defer_receives && chosen.schedule->has_communication)
            throw ExperimentError(fmt::format(
                "the schedule file {} already has its SEND/RECV actions, so there is no lowering "
                "to defer receives in; drop defer_recv (--defer-recv) or give a compute-only "
                "file",
                experiment.schedule_file));
        experiment.shape.rank_count = chosen.pp;
        experiment.shape.stages_per_rank = chosen.v;
        experiment.shape.microbatch_count = chosen.m;
        validate_experiment(experiment, chosen.stage_count);
    }
    try {
        recorder.lower_schedule(
            experiment.unshard_ns > 0 || experiment.reshard_ns > 0 || experiment.reduce_grad_ns > 0,
            experiment.defer_receives);
    } catch (const ScheduleCheckError& error) {  // a file's problems name the file
        if (experiment.schedule_file.empty())
            throw;
        throw ScheduleCheckError(error.report(), experiment.schedule_file);
    } catch (const ScheduleHangError& error) {
        if (experiment.schedule_file.empty())
            throw;
        throw ScheduleHangError(error.report(), experiment.schedule_file);
    }
    return recorder.state().schedule.schedule;
}

void record_executed_schedule(recorder::StateRecorder& recorder, const Schedule& lowered,
                              const ZeroBubbleInputs& zero_bubble) {
    // Whether `shape`'s schedule lowers to `lowered` eagerly (false) or with deferred receives
    // (true); nothing when neither, or when the shape does not generate. Generated once.
    const auto deferral_that_gives_it = [&](const ScheduleShape& shape) -> std::optional<bool> {
        try {
            const Schedule compute = generate_schedule(shape);
            for (const bool defer_receives : {false, true}) {
                LoweringOptions options;
                options.defer_receives = defer_receives;
                if (same_actions(lower(compute, options), lowered))
                    return defer_receives;
            }
        } catch (const std::exception&) {
            // Not this shape: recorded as CSV below.
        }
        return std::nullopt;
    };
    std::optional<ScheduleShape> shape;
    try {
        shape = ScheduleShape{parse_schedule_kind(lowered.name), lowered.rank_count,
                              lowered.stages_per_rank, lowered.microbatch_count};
        if (shape->kind == ScheduleKind::zero_bubble_auto)
            shape->zero_bubble = zero_bubble;
    } catch (const ScheduleConfigError&) {
        // Not a generated kind: recorded as CSV below.
    }
    if (shape)
        if (const std::optional<bool> defer_receives = deferral_that_gives_it(*shape)) {
            recorder.choose_schedule(*shape);  // regenerates what was compared
            recorder.lower_schedule(false, *defer_receives);
            return;
        }
    recorder.load_schedule_csv("executed schedule", format_schedule_csv(lowered));
    recorder.lower_schedule(false);
    if (!same_actions(*recorder.state().schedule.schedule, lowered))
        throw std::logic_error("the recorded schedule differs from the one being executed");
}

std::string settle_schedule_notation(Experiment& experiment) {
    if (experiment.schedule_file.empty() || experiment.schedule_notation)
        return {};
    const ScheduleCsvReading reading = read_schedule_csv_as(experiment.schedule_file, std::nullopt);
    if (reading.notation != ActionNotation::legacy)
        return {};
    experiment.schedule_notation = ActionNotation::legacy;
    return reading.note(experiment.schedule_file);
}

void settle_schedule_file_shape(Experiment& experiment) {
    if (experiment.schedule_file.empty())
        return;
    Experiment read = experiment;
    (void)lowered_schedule_for(read);
    experiment.shape.rank_count = read.shape.rank_count;
    experiment.shape.stages_per_rank = read.shape.stages_per_rank;
    experiment.shape.microbatch_count = read.shape.microbatch_count;
}

Schedule lowered_schedule_for(Experiment& experiment) {
    recorder::StateRecorder recorder(-1, "sim");
    return *record_experiment_schedule(recorder, experiment);
}

}  // namespace pipelens
