// One format for all the files, read by its importer and recorded (import_files.hpp).
#include "engine/import/import_files.hpp"

#include <new>

#include <fmt/format.h>

#include "engine/import/flight_recorder_dump.hpp"
#include "engine/import/flight_recorder_import.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/import/megatron_timers.hpp"
#include "engine/import/pipelining_dumps.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "engine/import/schedule_recovery.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/text/text_file.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::import {
namespace {

ImportedRun read_timeline(ImportFormat format, const std::vector<std::string>& files,
                          const ImportRequest& request) {
    switch (format) {
        case ImportFormat::pytorch_profiler:
            return read_pytorch_profiler(files, {request.step});
        case ImportFormat::pipelining_chrometrace:
            return read_pipelining_chrometrace(files);
        case ImportFormat::pipelining_csv:
            return read_pipelining_csv(files);
        case ImportFormat::megatron_timers:
            return read_megatron_timers(files);
        case ImportFormat::flight_recorder:
            break;
    }
    throw ImportError(fmt::format("{} files hold no timeline", format_name(format)));
}

void report(const std::function<void(ImportStage)>& progress, ImportStage stage) {
    if (progress)
        progress(stage);
}

// Why a dump holds no op and the way out: PyTorch's flight recorder keeps nothing unless its
// buffer size is set (FlightRecorder reads TORCH_FR_BUFFER_SIZE, and the older name after it).
constexpr const char* kRecorderOff =
    "the flight recorder was off (TORCH_FR_BUFFER_SIZE unset or 0, PyTorch's default): set "
    "TORCH_FR_BUFFER_SIZE (TORCH_NCCL_TRACE_BUFFER_SIZE in older PyTorch) to the number of ops "
    "to keep, such as 2000, in every rank's environment, and dump again";

// A dump without entries recorded nothing, so its rank is analysed as one that left no dump
// (a note says why); dumps that all hold nothing are refused, since they can show neither a
// hang nor its absence, where they once read as "no hang and no mismatch".
std::vector<FlightRecorderDump> dumps_with_ops(std::vector<FlightRecorderDump> dumps,
                                               std::vector<std::string>& notes) {
    std::vector<FlightRecorderDump> kept;
    std::vector<std::string> empty;
    for (FlightRecorderDump& dump : dumps) {
        if (!dump.entries.empty()) {
            kept.push_back(std::move(dump));
            continue;
        }
        empty.push_back(dump.file);
        notes.push_back(
            fmt::format("rank {} ({}): its dump holds no op, so it is read as a rank "
                        "without a dump: {}",
                        dump.rank, dump.file, kRecorderOff));
    }
    if (kept.empty())
        throw ImportError(
            fmt::format("{}: {} (no entries), so {} show neither a hang nor its absence: {}",
                        fmt::join(empty, ", "),
                        empty.size() == 1 ? "the flight-recorder dump holds no op"
                                          : "none of the flight-recorder dumps holds an op",
                        empty.size() == 1 ? "it can" : "they can", kRecorderOff));
    return kept;
}

// Flight-recorder dumps are not a timeline of pipeline actions but the last collectives of a
// job that may have hung: analysed, and recorded with every finding as an error.
ImportResult import_flight_recorder(const std::vector<std::string>& files, const std::string& out,
                                    const std::function<void(ImportStage)>& progress) {
    report(progress, ImportStage::reading);
    std::vector<std::string> empty_notes;
    const std::vector<FlightRecorderDump> dumps =
        dumps_with_ops(read_flight_recorder_dumps(files), empty_notes);
    ImportResult result;
    result.format = ImportFormat::flight_recorder;
    result.file_count = files.size();
    result.flight_recorder = analyse_flight_recorder(dumps);
    std::vector<std::string>& notes = result.flight_recorder->notes;
    notes.insert(notes.begin(), empty_notes.begin(), empty_notes.end());
    report(progress, ImportStage::recording);
    traces::TraceWriter writer(out);
    result.run_id = record_flight_recorder(writer, dumps, *result.flight_recorder);
    return result;
}

ImportResult import_timeline(const std::vector<std::string>& files, ImportFormat format,
                             const std::string& out, const ImportRequest& request,
                             const std::function<void(ImportStage)>& progress) {
    report(progress, ImportStage::reading);
    ImportedRun imported = read_timeline(format, files, request);
    name_recognised_schedule(imported);
    ImportResult result;
    result.format = format;
    result.file_count = files.size();
    result.structure = check_structure(imported.schedule);
    result.compute = compute_only(imported.schedule);
    result.generated_kind = names_generated_kind(imported.schedule.name);
    result.notes = imported.notes;
    if (!request.schedule_csv.empty())
        write_schedule_csv(result.compute, request.schedule_csv);
    report(progress, ImportStage::recording);
    traces::TraceWriter writer(out);
    result.run_id = record_imported_run(writer, std::move(imported));
    return result;
}

}  // namespace

ImportFormat detect_common_format(const std::vector<std::string>& files) {
    if (files.empty())
        throw ImportError("no files to import");
    const ImportFormat first = detect_format(files.front());
    for (std::size_t index = 1; index < files.size(); ++index)
        if (const ImportFormat other = detect_format(files[index]); other != first)
            throw ImportError(fmt::format(
                "{} is {} but {} is {}; import one kind of file at a time (or give --format)",
                files.front(), format_name(first), files[index], format_name(other)));
    return first;
}

ImportResult import_files(const std::vector<std::string>& files, ImportFormat format,
                          const std::string& out, const ImportRequest& request,
                          const std::function<void(ImportStage)>& progress) {
    try {
        if (format == ImportFormat::flight_recorder)
            return import_flight_recorder(files, out, progress);
        return import_timeline(files, format, out, request, progress);
    } catch (const std::bad_alloc&) {
        // Its memory is free again once unwound: enough to say which input asked too much.
        throw TextFileError(
            TextFileError::Problem::too_large,
            fmt::format("{}{}: not enough memory to read it as {}",
                        files.empty() ? std::string("import") : files.front(),
                        files.size() > 1 ? fmt::format(" (and {} more)", files.size() - 1) : "",
                        format_name(format)));
    }
}

}  // namespace pipelens::import
