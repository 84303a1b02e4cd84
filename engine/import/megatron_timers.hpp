// Megatron-LM per-microbatch timers as a pipelens run: the JSON files that the PP-timer patch of
// the PP-Schedule-Visualization project (Victarry/Megatron-LM commit ad3bc3a2) writes, one per
// rank, named event_times_PP{pp}_VPP{v}_TPxCPxDP_rank_{r}_pp_rank_{p}_rank_{g}.json and holding
// {"forward-{mb}-start": ms, "forward-{mb}-end": ms, "backward-...", "total-execution-time": ms}
// (with virtual stages "forward-{chunk}-{mb}-start", ...): CUDA-event milliseconds since the
// rank's own start event, recorded after a barrier.
//
// Invariants: the pipeline rank comes from the file name (the content does not say it); the
// files cover ranks 0..pp-1 once each (files of other tensor/context/data-parallel ranks are set
// aside, as the upstream plot does); model chunk c of rank r is stage c * pp + r (Megatron's
// interleaved layout); every rank times a forward (F) and a backward (B) of every microbatch on
// every one of its stages; times are converted from the decimal text exactly, rounded to the
// nearest ns. Anything else is an ImportError naming the file and, where one is at fault, the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/import/imported_run.hpp"

namespace pipelens::import {

// Reads one file per pipeline rank (in any order) into a run of F and B actions per rank, in
// the order each rank started them, with the schedule named "Megatron-1F1B" or
// "Megatron-Interleaved1F1B".
ImportedRun read_megatron_timers(const std::vector<std::string>& files);

// A JSON number of milliseconds, as written ("12.5", "3.0720000993460417e-05"), in ns rounded
// to the nearest (halves away from zero) without passing through a binary float; nullopt for
// text that is not a JSON number or a value beyond the int64 range.
std::optional<std::int64_t> milliseconds_text_to_ns(std::string_view text);

}  // namespace pipelens::import
