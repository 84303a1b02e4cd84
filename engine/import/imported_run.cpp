// Recording an imported run. The measured-run recorder of engine/run_record does the writing, so
// an imported run and a pipelens run differ only in where their times came from.
#include "engine/import/imported_run.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <zlib.h>
#include <nlohmann/json.hpp>

#include "engine/run_record/run_result.hpp"
#include "engine/run_record/run_trace.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/text/text_file.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::import {
namespace {

void check_shape(const ImportedRun& run) {
    if (run.timings.size() != run.schedule.ranks.size())
        throw ImportError(fmt::format("import ({}): {} ranks of actions but {} of times",
                                      run.format, run.schedule.ranks.size(), run.timings.size()));
    for (std::size_t rank = 0; rank < run.timings.size(); ++rank)
        if (run.timings[rank].size() != run.schedule.ranks[rank].size())
            throw ImportError(fmt::format("import ({}): rank {} has {} actions but {} times",
                                          run.format, rank, run.schedule.ranks[rank].size(),
                                          run.timings[rank].size()));
}

std::int64_t earliest_start(const ImportedRun& run) {
    std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
    for (const auto& rank : run.timings)
        for (const ImportedTiming& timing : rank)
            earliest = std::min(earliest, timing.start_ns);
    return earliest == std::numeric_limits<std::int64_t>::max() ? 0 : earliest;
}

run_record::RunFailure failure_of(const traces::ErrorRecord& error, std::int64_t zero_ns) {
    run_record::RunFailure failure;
    failure.rank = error.rank;
    failure.stage = error.stage;
    failure.microbatch = error.microbatch;
    failure.action = error.action;
    failure.kind = error.kind;
    failure.expected = error.expected;
    failure.actual = error.actual;
    failure.message = error.message;
    failure.time_ns = error.time_ns ? *error.time_ns - zero_ns : 0;
    if (error.started_ns)
        failure.started_ns = *error.started_ns - zero_ns;
    return failure;
}

run_record::RankRun rank_run(const ImportedRun& run, int rank, std::int64_t zero_ns) {
    run_record::RankRun out;
    out.rank = rank;
    const auto& actions = run.schedule.ranks[rank];
    const auto& timings = run.timings[rank];
    for (std::size_t step = 0; step < actions.size(); ++step) {
        const ImportedTiming& timing = timings[step];
        out.timeline.push_back({static_cast<int>(step), timing.start_ns - zero_ns,
                                timing.end_ns - zero_ns, timing.bytes < 0 ? 0 : timing.bytes});
        if (is_compute(actions[step].kind))
            out.busy_ns += timing.end_ns - timing.start_ns;
    }
    if (static_cast<std::size_t>(rank) < run.memory.size())
        for (const traces::MemoryRecord& point : run.memory[rank]) {
            out.memory.push_back({point.time_ns - zero_ns, point.bytes});
            out.peak_memory_bytes = std::max(out.peak_memory_bytes, point.bytes);
        }
    if (static_cast<std::size_t>(rank) < run.clocks.size())
        out.clock = run.clocks[rank];
    return out;
}

// The run's configuration text: where it came from and what the reader decided.
std::string import_config(const ImportedRun& run) {
    nlohmann::json config;
    config["imported"] = run.format;
    config["sources"] = run.sources;
    if (!run.global_ranks.empty())
        config["global_ranks"] = run.global_ranks;
    config["notes"] = run.notes;
    config["unit_steps"] = run.unit_steps;
    return config.dump(2);
}

}  // namespace

std::string read_input_file(const std::string& path) {
    check_text_file(path);  // a 2 GB file was read to the cap before it was refused
    gzFile file = gzopen(path.c_str(), "rb");  // reads plain files unchanged
    if (file == nullptr)
        throw ImportError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    std::string bytes;
    std::array<char, 256 * 1024> chunk{};
    int read = 0;
    while ((read = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0) {
        // Decompressed, a few kilobytes can be gigabytes: the cap of a plain text input.
        if (bytes.size() + static_cast<std::size_t>(read) > kLargestTextFile) {
            gzclose(file);
            throw TextFileError(
                TextFileError::Problem::too_large,
                fmt::format("{}: holds more than {} once decompressed", path,
                            format_bytes(static_cast<std::int64_t>(kLargestTextFile))));
        }
        bytes.append(chunk.data(), static_cast<std::size_t>(read));
    }
    int code = Z_OK;
    gzerror(file, &code);
    gzclose(file);
    if (read < 0)
        throw ImportError(fmt::format("{}: cannot read (corrupt or truncated gzip?)", path));
    if (code == Z_BUF_ERROR)  // the input ended inside a gzip stream
        throw ImportError(fmt::format(
            "{}: the gzip stream ends early, after {} decompressed bytes (a truncated file?)", path,
            bytes.size()));
    return bytes;
}

std::int64_t record_imported_run(traces::TraceWriter& writer, ImportedRun run) {
    check_shape(run);
    link_send_recv_pairs(run.schedule);
    for (const auto& rank : run.schedule.ranks)
        for (const Action& action : rank)
            run.schedule.has_communication |= is_communication(action.kind);
    const std::int64_t zero_ns = earliest_start(run);

    run_record::PipelineRunResult result;
    std::int64_t end_ns = 0;
    for (int rank = 0; rank < static_cast<int>(run.schedule.ranks.size()); ++rank) {
        result.ranks.push_back(rank_run(run, rank, zero_ns));
        for (const run_record::ActionTiming& timing : result.ranks.back().timeline)
            end_ns = std::max(end_ns, timing.end_ns);
    }
    result.step_time_ns = end_ns;
    result.completed = run.errors.empty();
    for (const traces::ErrorRecord& error : run.errors) {
        run_record::RunFailure failure = failure_of(error, zero_ns);
        const bool rank_known =
            failure.rank >= 0 && failure.rank < static_cast<int>(result.ranks.size());
        if (rank_known && !result.ranks[failure.rank].failure)
            result.ranks[failure.rank].failure = std::move(failure);
        else
            result.further_failures.push_back(std::move(failure));
    }
    return run_record::record_measured_run(
        writer, run.schedule, result, import_config(run),
        run.unit_steps ? traces::RunKind::simulated : traces::RunKind::real);
}

}  // namespace pipelens::import
