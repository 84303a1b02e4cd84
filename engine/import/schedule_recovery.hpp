// Recovering which schedule an imported run executed. The importer knows only each rank's
// actions in the order they ran; naming the generated kind with the same compute order (and the
// shape: pp, v, m, stage placement) lets `calibrate`, `check` and `simulate` treat the import
// like a pipelens run. A run that matches no kind keeps the name "imported" and can still be
// written as a PyTorch CSV schedule.
#pragma once

#include <string>
#include <vector>

#include "engine/schedule/schedule.hpp"
#include "engine/schedule/schedule_kind.hpp"

namespace pipelens::import {

struct ImportedRun;

// Sets pp, stage count, v and m from the actions (stage_to_rank from the rank each stage ran
// on); throws ImportError naming `source` when a stage ran on two ranks or a rank ran none.
// `rank_names`, when given, names each pipeline rank in those errors ("rank 1 (global rank 3,
// rank3.json)"), since the pipeline's rank numbers are not the files'.
void infer_shape(Schedule& schedule, const std::string& source,
                 const std::vector<std::string>& rank_names = {});

// Every generated kind whose per-rank compute order (F, I, W, B, OVERLAP_F_B; communication
// dropped) equals `imported`'s, in all_schedule_kinds() order. Several kinds coincide on small
// shapes (InterleavedZeroBubble and ZBVZeroBubble at pp=1): the order alone cannot tell them
// apart, so a caller names the first and says which others fit.
std::vector<ScheduleKind> recognise_schedules(const Schedule& imported);

// The note an import adds when `kinds` (recognise_schedules' answer) holds more than one kind;
// empty otherwise.
std::string coinciding_kinds_note(const std::vector<ScheduleKind>& kinds);

// `imported` without its communication: what `lower` takes and what a CSV schedule holds.
Schedule compute_only(const Schedule& imported);

// Whether `name` is a kind pipelens generates, spelled as parse_schedule_kind reads it. A run so
// named can be rebuilt from its kind and shape; any other is simulated from its CSV schedule.
bool names_generated_kind(const std::string& name);

// Names `run`'s schedule after the generated kind with the same compute order, so that
// `calibrate` and a simulation can rebuild it, and notes the name the importer gave it. A run
// already named after a kind, or whose order no kind generates, is left as it is.
void name_recognised_schedule(ImportedRun& run);

}  // namespace pipelens::import
