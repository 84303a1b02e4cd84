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

// Flight-recorder dumps are not a timeline of pipeline actions but the last collectives of a
// job that may have hung: analysed, and recorded with every finding as an error.
ImportResult import_flight_recorder(const std::vector<std::string>& files, const std::string& out,
                                    const std::function<void(ImportStage)>& progress) {
    report(progress, ImportStage::reading);
    const std::vector<FlightRecorderDump> dumps = read_flight_recorder_dumps(files);
    ImportResult result;
    result.format = ImportFormat::flight_recorder;
    result.file_count = dumps.size();
    result.flight_recorder = analyse_flight_recorder(dumps);
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
