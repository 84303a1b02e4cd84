// Experiment -> lowered schedule. A CSV that already carries SEND/RECV actions is used as
// written (after the structure check), so a user can simulate exactly the order their
// runtime executes.
#include "engine/experiment/experiment_schedule.hpp"

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {

Schedule lowered_schedule_for(Experiment& experiment) {
    Schedule schedule;
    if (experiment.schedule_file.empty()) {
        validate_experiment(experiment);
        schedule = generate_schedule(experiment.shape);
    } else {
        schedule = read_schedule_csv(experiment.schedule_file);
        experiment.shape.rank_count = schedule.rank_count;
        experiment.shape.stages_per_rank = schedule.stages_per_rank;
        experiment.shape.microbatch_count = schedule.microbatch_count;
        validate_experiment(experiment, schedule.stage_count);
    }
    if (schedule.has_communication) {
        require_valid_structure(schedule);
        return schedule;
    }
    LoweringOptions options;
    options.keep_fsdp_actions =
        experiment.unshard_ns > 0 || experiment.reshard_ns > 0 || experiment.reduce_grad_ns > 0;
    return lower(schedule, options);
}

}  // namespace pipelens
