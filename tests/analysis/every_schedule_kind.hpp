// The schedule shapes the analysis tests sweep: every generated kind at pp = 4, its loop or V
// kinds with two stages per rank, eight microbatches. One list, so the critical-path and the
// bubble-accounting tests cover the same kinds and a new kind is added to both at once.
#pragma once

#include <array>

#include "engine/schedule/schedule_kind.hpp"

namespace pipelens {

inline const std::array<ScheduleShape, 7> kEveryScheduleKind = {{
    {ScheduleKind::gpipe, 4, 1, 8},
    {ScheduleKind::one_f_one_b, 4, 1, 8},
    {ScheduleKind::interleaved_1f1b, 4, 2, 8},
    {ScheduleKind::looped_bfs, 4, 2, 8},
    {ScheduleKind::interleaved_zero_bubble, 4, 2, 8},
    {ScheduleKind::zbv_zero_bubble, 4, 2, 8},
    {ScheduleKind::dual_pipe_v, 4, 2, 8},
}};

}  // namespace pipelens
