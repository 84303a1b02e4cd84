// What `pipelens import` does with a set of files, defined once for the CLI and the viewer (which
// imports dropped files the same way): one format for all the files, each read by its importer,
// and the result recorded as a run in a trace — a timeline run (named after the generated kind
// with the same compute order, when there is one), or flight-recorder dumps analysed and
// recorded with their findings.
//
// Invariants: every file is read and checked before `out` is opened, so input that fails to
// import writes nothing (an ImportError naming the file, and the line or byte where known); the
// progress callback is called from the importing thread, in stage order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/import/flight_recorder_analysis.hpp"
#include "engine/import/import_format.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens::import {

// The format of all of `files`, told from their first bytes; ImportError naming the file that
// is none, or two files of different formats.
ImportFormat detect_common_format(const std::vector<std::string>& files);

struct ImportRequest {
    std::optional<int> step;   // profiler traces of several steps: which (default: the last)
    std::string schedule_csv;  // when set: the recovered compute-only schedule is written there
};

enum class ImportStage { reading, recording };

struct ImportResult {
    ImportFormat format{};
    std::int64_t run_id = 0;
    std::size_t file_count = 0;  // the files read (for flight recorders: the dumps)
    std::vector<std::string> notes;
    // A timeline's schedule without its communication, and whether a generated kind has its
    // compute order (else it is simulated from its CSV).
    Schedule compute;
    bool generated_kind = false;
    // `check`'s static check of what the ranks ran, communication included where the files
    // hold it (a SEND the trace lost, a stage on two ranks): the run is recorded as read either
    // way, and this is the verdict.
    CheckReport structure;
    std::optional<FlightRecorderReport> flight_recorder;  // for flight-recorder dumps
};

// Reads `files` as `format` and records them in the trace `out` (created when absent; a new run
// beside any there). ImportError when the files cannot be read as `format`; what opening or
// writing the trace throws otherwise.
ImportResult import_files(const std::vector<std::string>& files, ImportFormat format,
                          const std::string& out, const ImportRequest& request = {},
                          const std::function<void(ImportStage)>& progress = {});

}  // namespace pipelens::import
