// What every importer produces: another tool's record of a pipeline run (PyTorch profiler
// traces, PyTorch's unit-step dumps, Megatron timers) as pipelens' Action IR with times, so that
// one function records it with the same tables a pipelens run fills, and `summary`, the critical
// path and the viewer work on it unchanged.
//
// Invariants: `schedule.ranks[r]` lists the actions rank r executed in the order it started
// them, and `timings[r]` holds their times one to one, on the run's one clock (ns, the earliest
// start of any rank at 0 after record_imported_run). An import error names the file and, where
// known, the line or byte offset; nothing is written for an input that fails to read.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/run_record/clock_offset.hpp"
#include "engine/schedule/schedule.hpp"
#include "traces/trace_records.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::import {

// Input that cannot be imported; the message names the file (and line or offset where known).
class ImportError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The whole of an input file, gzip-decompressed when it is gzip (told by its bytes, not its
// name); ImportError naming it when it cannot be opened or read, or its gzip stream is cut short;
// TextFileError (too large) past kLargestTextFile decompressed bytes.
std::string read_input_file(const std::string& path);

struct ImportedTiming {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t bytes = -1;  // SEND/RECV: what moved, when the source says; -1: unknown
};

struct ImportedRun {
    std::string format;                // "pytorch-profiler", "megatron-timers", ...
    std::vector<std::string> sources;  // the files read, by rank
    // Each rank's rank in the whole job, where the source names it (a profiler trace's
    // distributedInfo.rank): pipeline rank r was global rank global_ranks[r]. Kept in the
    // run's configuration; empty where the source knows only pipeline ranks.
    std::vector<int> global_ranks;
    Schedule schedule;  // executed order per rank; SEND/RECV not yet linked
    std::vector<std::vector<ImportedTiming>> timings;       // [rank][step], same shape as schedule
    std::vector<std::vector<traces::MemoryRecord>> memory;  // per rank, may be empty
    // Per rank: its clock's offset to the run's clock as estimated by the importer (rank 0's
    // clock minus this rank's) and how sure it is; none where the ranks shared a clock.
    std::vector<std::optional<run_record::ClockOffset>> clocks;
    std::vector<traces::ErrorRecord> errors;
    // What the reader had to decide that a user should know ("times are CPU ranges: the trace
    // has no GPU kernels"); printed by `pipelens import` and kept in the run's configuration.
    std::vector<std::string> notes;
    bool unit_steps = false;  // times are PyTorch's unit steps (a schedule dump), not measured
};

// Links each SEND to its RECV, shifts every time so the earliest start is 0, derives the
// per-rank figures (busy, bubbles by the rank waited on, warm-up, cool-down, peak memory) and
// writes the run: kind `real` (`sim` for unit steps), `failed` when errors were imported.
// Returns the run's id.
std::int64_t record_imported_run(traces::TraceWriter& writer, ImportedRun run);

}  // namespace pipelens::import
