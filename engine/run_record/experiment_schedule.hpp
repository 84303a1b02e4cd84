// The schedule an experiment describes: generated from (kind, pp, v, m) or read from a PyTorch
// CSV file (whose shape then replaces the experiment's), validated, and lowered with
// SEND/RECV pairs. FSDP actions stay in the lowered schedule when the experiment gives them a
// cost, so the simulator charges them; otherwise they are stripped as in `--comms`.
#pragma once

#include <memory>

#include "engine/experiment/experiment.hpp"
#include "engine/recorder/state_recorder.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens {

// Records the choice and the lowering on `recorder` (choose_schedule or load_schedule_csv,
// then lower_schedule), fills experiment.shape from a schedule file when there is one and
// validates the experiment (ExperimentError). Returns the lowered schedule the recorded state
// now holds. A broken schedule throws ScheduleFileError, ScheduleCheckError or
// ScheduleHangError.
std::shared_ptr<const Schedule> record_experiment_schedule(recorder::StateRecorder& recorder,
                                                           Experiment& experiment);

// Records a schedule that is already lowered (what a real run executes) as the calls that
// make it: choose_schedule + lower_schedule when its kind and shape generate exactly these
// actions, else load_schedule_csv of its own CSV text + lower_schedule. Throws
// std::logic_error if the recorded state's schedule is not `lowered` action for action.
void record_executed_schedule(recorder::StateRecorder& recorder, const Schedule& lowered,
                              const ZeroBubbleInputs& zero_bubble = {});

// The same without keeping the recording.
Schedule lowered_schedule_for(Experiment& experiment);

// An experiment read from a file that names a schedule file: pp, v and m set to what that file
// gives, as simulating it would set them (so that fields show them and a kind set in place of
// the file keeps the pipeline's shape). Nothing for a generated kind; throws what reading the
// file throws.
void settle_schedule_file_shape(Experiment& experiment);

// For a schedule file whose notation was not given: reads it, and when its cells show PyTorch's
// older notation pins experiment.schedule_notation to legacy (so every later reading, the
// recorded experiment and the ranks of a run agree) and returns the note saying so; else "".
// ScheduleFileError when the file cannot be read as a schedule.
std::string settle_schedule_notation(Experiment& experiment);

}  // namespace pipelens
