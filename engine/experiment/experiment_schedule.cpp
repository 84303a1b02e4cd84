// Experiment -> recorded schedule events -> lowered schedule. A CSV that already carries
// SEND/RECV actions is used as written (after the structure check), so a user can simulate
// exactly the order their runtime executes.
#include "engine/experiment/experiment_schedule.hpp"

#include "engine/schedule/schedule_csv.hpp"

namespace pipelens {

std::shared_ptr<const Schedule> record_experiment_schedule(recorder::StateRecorder& recorder,
                                                           Experiment& experiment) {
    if (experiment.schedule_file.empty()) {
        validate_experiment(experiment);
        recorder.choose_schedule(experiment.shape);
    } else {
        recorder.load_schedule_csv(experiment.schedule_file,
                                   read_schedule_csv_text(experiment.schedule_file));
        const recorder::ScheduleState& chosen = recorder.state().schedule;
        experiment.shape.rank_count = chosen.pp;
        experiment.shape.stages_per_rank = chosen.v;
        experiment.shape.microbatch_count = chosen.m;
        validate_experiment(experiment, chosen.stage_count);
    }
    recorder.lower_schedule(experiment.unshard_ns > 0 || experiment.reshard_ns > 0 ||
                            experiment.reduce_grad_ns > 0);
    return recorder.state().schedule.schedule;
}

Schedule lowered_schedule_for(Experiment& experiment) {
    recorder::StateRecorder recorder(-1, "sim");
    return *record_experiment_schedule(recorder, experiment);
}

}  // namespace pipelens
