// Dispatch from a validated schedule shape to its family's generator.
#include "engine/schedule/generate.hpp"

#include <string>

namespace pipelens {

Schedule generate_schedule(const ScheduleShape& shape) {
    validate_shape(shape);
    Schedule schedule;
    schedule.name = std::string(schedule_kind_name(shape.kind));
    schedule.rank_count = shape.rank_count;
    schedule.stages_per_rank = shape.stages_per_rank;
    schedule.microbatch_count = shape.microbatch_count;
    schedule.stage_count = shape.rank_count * shape.stages_per_rank;
    schedule.stage_to_rank =
        stage_to_rank_mapping(stage_placement(shape.kind), shape.rank_count, schedule.stage_count);
    schedule.ranks.resize(shape.rank_count);

    switch (shape.kind) {
        case ScheduleKind::gpipe:
            generators::gpipe(schedule);
            break;
        case ScheduleKind::one_f_one_b:
            generators::one_f_one_b(schedule);
            break;
        case ScheduleKind::looped_bfs:
            generators::looped_bfs(schedule);
            break;
        case ScheduleKind::interleaved_1f1b:
            generators::interleaved(schedule, false);
            break;
        case ScheduleKind::interleaved_zero_bubble:
            generators::interleaved(schedule, true);
            break;
        case ScheduleKind::zbv_zero_bubble:
            generators::zbv_zero_bubble(schedule);
            break;
        case ScheduleKind::dual_pipe_v:
            generators::dual_pipe_v(schedule);
            break;
        case ScheduleKind::zero_bubble_h2:
            generators::zero_bubble_h2(schedule);
            break;
        case ScheduleKind::zero_bubble_auto:
            generators::zero_bubble_auto(schedule, shape.zero_bubble);
            break;
    }
    return schedule;
}

}  // namespace pipelens
