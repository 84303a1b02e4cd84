// Human-readable grid of a schedule: one row per step, one column per rank, in the style of
// PyTorch's `_format_pipeline_order` ("Step 03: 0F1 1RECV_F0 ...").
#pragma once

#include <string>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

std::string format_schedule_table(const Schedule& schedule);

}  // namespace pipelens
