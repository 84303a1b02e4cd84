// The schedule an experiment describes: generated from (kind, pp, v, m) or read from a PyTorch
// CSV file (whose shape then replaces the experiment's), validated, and lowered with
// SEND/RECV pairs. FSDP actions stay in the lowered schedule when the experiment gives them a
// cost, so the simulator charges them; otherwise they are stripped as in `--comms`.
#pragma once

#include "engine/experiment/experiment.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens {

// Fills experiment.shape from a schedule file when there is one, validates the experiment
// (ExperimentError), and returns the lowered schedule (ScheduleFileError, ScheduleCheckError
// or ScheduleHangError when the schedule itself is broken).
Schedule lowered_schedule_for(Experiment& experiment);

}  // namespace pipelens
