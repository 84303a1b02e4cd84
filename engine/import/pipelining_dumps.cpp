// Both dumps become the same thing: per rank, actions in step order, each with its first step
// and its length in steps. The schedule's shape is left to the CSV reader (parse_schedule_csv),
// given the actions in order, so that a dump and the same schedule given to `pipelens check`
// agree on pp, v, m and stage_to_rank.
#include "engine/import/pipelining_dumps.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "engine/import/import_format.hpp"
#include "engine/import/json_document.hpp"
#include "engine/schedule/schedule_csv.hpp"

namespace pipelens::import {
namespace {

using Json = nlohmann::json;

// Steps beyond this are not a schedule dump (and would overflow as ns).
constexpr std::int64_t kMaxStep = std::int64_t{1} << 40;

struct StepSpan {
    std::int64_t step = 0;
    std::int64_t length = 1;
};

const std::string& one_file(const std::vector<std::string>& files, std::string_view writer) {
    if (files.size() != 1)
        throw ImportError(fmt::format(
            "{}: expected one file ({} writes every rank into one), got {}{}", writer, writer,
            files.size(), files.empty() ? "" : fmt::format(": {}", fmt::join(files, ", "))));
    return files.front();
}

// The rows as PyTorch's current notation, with what the reading had to say about them (a
// printed Schedule1F1B table read as its runtime's order, a byte order mark).
ScheduleCsvReading parse_csv(std::string_view text, const std::string& path,
                             std::vector<std::vector<int>>* columns = nullptr) {
    try {
        ScheduleCsvReading reading =
            parse_schedule_csv_as(text, path, ActionNotation::current, columns);
        if (reading.schedule.name.empty())
            reading.schedule.name = "imported";
        return reading;
    } catch (const ScheduleFileError& error) {
        throw ImportError(error.what());
    }
}

// An import reads a dump's idle slots as its steps: that PyTorch's loader refuses them is no news.
ImportedRun with_reading_note(ImportedRun run, const ScheduleCsvReading& reading,
                              const std::string& path) {
    if (std::string note = reading.note(path, /*idle_slots_are_steps=*/true); !note.empty())
        run.notes.push_back(std::move(note));
    return run;
}

// True when some rank waits: a step before its first action or between two of them. Without
// one, the steps are only each rank's action order (a dump of an unsimulated schedule).
bool has_idle_step(const std::vector<std::vector<StepSpan>>& spans) {
    for (const auto& rank : spans) {
        std::int64_t next = 0;
        for (const StepSpan& span : rank) {
            if (span.step > next)
                return true;
            next = span.step + span.length;
        }
    }
    return false;
}

ImportedRun unit_step_run(Schedule schedule, const std::vector<std::vector<StepSpan>>& spans,
                          const std::string& path, ImportFormat format) {
    ImportedRun run;
    run.format = std::string(format_name(format));
    run.sources = {path};
    run.unit_steps = true;
    run.notes.push_back(
        "times are PyTorch's simulated unit steps, not measurements: one step is drawn as 1 us");
    if (!has_idle_step(spans))
        run.notes.push_back(
            "no rank ever waits in this file, so its steps are each rank's action order, not a "
            "simulated timeline (dump the output of _simulate_comms_compute for one)");
    if (spans.size() != schedule.ranks.size())
        throw ImportError(fmt::format("{}: {} ranks of steps but {} of actions", path, spans.size(),
                                      schedule.ranks.size()));
    for (std::size_t rank = 0; rank < spans.size(); ++rank) {
        if (spans[rank].size() != schedule.ranks[rank].size())
            throw ImportError(fmt::format("{}: rank {} has {} steps but {} actions", path, rank,
                                          spans[rank].size(), schedule.ranks[rank].size()));
        auto& timings = run.timings.emplace_back();
        for (const StepSpan& span : spans[rank])
            timings.push_back(
                {span.step * kUnitStepNs, (span.step + span.length) * kUnitStepNs, -1});
    }
    run.schedule = std::move(schedule);
    return run;
}

// ---- _dump_chrometrace ----

struct StepEvent {
    std::size_t index = 0;  // position in traceEvents, for messages
    int rank = 0;
    StepSpan span;
    std::string text;  // the action's canonical text
};

std::optional<std::int64_t> whole_number(const Json* value) {
    if (value == nullptr)
        return std::nullopt;
    if (value->is_number_integer())
        return value->get<std::int64_t>();
    if (value->is_number_float()) {
        const double number = value->get<double>();
        if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 1e15)
            return static_cast<std::int64_t>(number);
    }
    return std::nullopt;
}

const Json* field(const Json& event, const char* name) {
    const auto found = event.find(name);
    return found == event.end() ? nullptr : &*found;
}

const Json& trace_events(const Json& document, const std::string& path) {
    if (document.is_array())
        return document;
    if (document.is_object())
        if (const Json* events = field(document, "traceEvents"); events && events->is_array())
            return *events;
    throw ImportError(fmt::format(
        "{}: expected {{\"traceEvents\": [...]}} as _dump_chrometrace writes it", path));
}

// One event as a step of a rank's action; nullopt for events that are not complete ("X")
// events, which a viewer may have added (metadata, counters).
std::optional<StepEvent> read_event(const Json& event, std::size_t index, const std::string& path) {
    const std::string where = fmt::format("{}: event {}", path, index);
    if (!event.is_object())
        throw ImportError(fmt::format("{}: not an object", where));
    if (const Json* phase = field(event, "ph"); phase && *phase != "X")
        return std::nullopt;
    const Json* name = field(event, "name");
    if (name == nullptr || !name->is_string())
        throw ImportError(fmt::format("{}: no \"name\" holding the action text", where));
    StepEvent step;
    step.index = index;
    try {
        std::vector<Action> parts;
        const Action action = parse_action(name->get<std::string>(), parts);
        step.text = action_text(action, parts);
    } catch (const ActionParseError& error) {
        throw ImportError(fmt::format("{}: {}", where, error.what()));
    }
    const Json* rank_field = field(event, "pid") ? field(event, "pid") : field(event, "tid");
    const auto rank = whole_number(rank_field);
    const auto start = whole_number(field(event, "ts"));
    const auto length = field(event, "dur") ? whole_number(field(event, "dur")) : 1;
    if (!rank || *rank < 0 || *rank > std::numeric_limits<int>::max())
        throw ImportError(fmt::format("{} ({}): \"pid\" is not a rank", where, step.text));
    if (!start || *start < 0 || *start > kMaxStep)
        throw ImportError(fmt::format("{} ({}): \"ts\" is not a step number", where, step.text));
    if (!length || *length < 1 || *length > kMaxStep)
        throw ImportError(
            fmt::format("{} ({}): \"dur\" is not a whole number of steps", where, step.text));
    step.rank = static_cast<int>(*rank);
    step.span = {*start, *length};
    return step;
}

// Events by rank, each rank's in step order; ranks 0..max all present.
std::vector<std::vector<StepEvent>> events_by_rank(const Json& events, const std::string& path) {
    std::map<int, std::vector<StepEvent>> by_rank;
    for (std::size_t index = 0; index < events.size(); ++index)
        if (auto step = read_event(events[index], index, path))
            by_rank[step->rank].push_back(std::move(*step));
    if (by_rank.empty())
        throw ImportError(fmt::format("{}: no action events (\"ph\": \"X\")", path));
    std::vector<std::vector<StepEvent>> ranks;
    for (auto& [rank, steps] : by_rank) {
        if (rank != static_cast<int>(ranks.size()))
            throw ImportError(
                fmt::format("{}: rank {} has no events but rank {} has", path, ranks.size(), rank));
        std::stable_sort(steps.begin(), steps.end(),
                         [](const auto& a, const auto& b) { return a.span.step < b.span.step; });
        for (std::size_t index = 1; index < steps.size(); ++index)
            if (steps[index].span.step == steps[index - 1].span.step)
                throw ImportError(fmt::format(
                    "{}: rank {} has two actions at step {}: event {} ({}) and event {} ({})", path,
                    rank, steps[index].span.step, steps[index - 1].index, steps[index - 1].text,
                    steps[index].index, steps[index].text));
        ranks.push_back(std::move(steps));
    }
    return ranks;
}

}  // namespace

ImportedRun read_pipelining_chrometrace(const std::vector<std::string>& files) {
    const std::string& path = one_file(files, "_dump_chrometrace");
    const Json document = parse_json_document(read_input_file(path), path);
    const std::vector<std::vector<StepEvent>> ranks =
        events_by_rank(trace_events(document, path), path);
    std::string rows;
    std::vector<std::vector<StepSpan>> spans;
    for (const auto& rank : ranks) {
        auto& rank_spans = spans.emplace_back();
        for (std::size_t index = 0; index < rank.size(); ++index) {
            rows += index == 0 ? "" : ",";
            rows += rank[index].text;
            rank_spans.push_back(rank[index].span);
        }
        rows += "\r\n";
    }
    ScheduleCsvReading reading = parse_csv(rows, path);
    Schedule schedule = std::move(reading.schedule);
    return with_reading_note(
        unit_step_run(std::move(schedule), spans, path, ImportFormat::pipelining_chrometrace),
        reading, path);
}

ImportedRun read_pipelining_csv(const std::vector<std::string>& files) {
    const std::string& path = one_file(files, "_dump_csv");
    const std::string text = read_input_file(path);
    std::vector<std::vector<int>> columns;  // each action's cell: its unit time step
    ScheduleCsvReading reading = parse_csv(text, path, &columns);
    Schedule schedule = std::move(reading.schedule);
    std::vector<std::vector<StepSpan>> spans;
    for (const std::vector<int>& row : columns) {
        auto& rank_spans = spans.emplace_back();
        for (int column : row)
            rank_spans.push_back({column, 1});
    }
    return with_reading_note(
        unit_step_run(std::move(schedule), spans, path, ImportFormat::pipelining_csv), reading,
        path);
}

}  // namespace pipelens::import
