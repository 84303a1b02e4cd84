// Reading and writing PyTorch's schedule CSV format.
#include "engine/schedule/schedule_csv.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "engine/schedule/action_facts.hpp"
#include "engine/schedule/placement_inference.hpp"
#include "engine/schedule/printed_1f1b_table.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/text/shortened.hpp"
#include "engine/text/text_file.hpp"

namespace pipelens {
namespace {

// One record as Python's csv.reader returns it (what PyTorch's _load_csv iterates), with the
// line it starts on. A blank line is a record with no cells.
struct CsvRecord {
    int line = 0;
    std::vector<std::string> cells;
};

// What Python's str.strip() removes in ASCII: PyTorch's _Action.from_str strips each cell, and an
// empty result is None (an idle slot).
constexpr std::string_view kBlank = " \t\r\n\v\f";

bool is_blank(std::string_view cell) {
    return cell.find_first_not_of(kBlank) == std::string_view::npos;
}

// Every cell, even an empty one, becomes a string in memory (about 40 bytes): a file of commas
// or newlines once took 43 times its size and, at the 1 GiB a text input may have, more memory
// than a machine has. Its separators bound its cells; past the memory there is, it is refused.
void refuse_cells_past_memory(std::string_view text, const std::string& source_name) {
    constexpr std::int64_t kBytesPerCell = 48;
    const auto separators = static_cast<std::int64_t>(std::count_if(
        text.begin(), text.end(), [](char c) { return c == ',' || c == '\n' || c == '\r'; }));
    const std::int64_t needed = (separators + 1) * kBytesPerCell;
    const std::int64_t available = available_memory_bytes();
    if (needed > available / 2)
        throw ScheduleTooLargeError(fmt::format(
            "{}: up to {} cells would take about {} MB to read, more than half of the {} MB this "
            "process can still take",
            source_name, separators + 1, needed >> 20, available >> 20));
}

// Python's csv.reader with the excel dialect over a file opened with newline="": a line ends at
// \r\n, \n or \r; a quote opens a quoted cell only at the start of a cell ("" inside is one
// quote, and a quoted cell may span lines); elsewhere a quote is an ordinary character. Unlike
// Python, a quoted cell still open at the end of the file is an error, not a cell.
class CsvRecordReader {
  public:
    CsvRecordReader(std::string_view text, const std::string& source_name)
        : text_(text), source_name_(source_name) {}

    std::vector<CsvRecord> read() {
        while (index_ < text_.size()) {
            CsvRecord& record = records_.emplace_back();
            record.line = line_;
            read_record(record);
        }
        return std::move(records_);
    }

  private:
    // Consumes one line end (\r\n counts once) if there is one at the cursor.
    bool take_line_end() {
        if (text_[index_] == '\n') {
            ++index_;
        } else if (text_[index_] == '\r') {
            ++index_;
            if (index_ < text_.size() && text_[index_] == '\n')
                ++index_;
        } else {
            return false;
        }
        ++line_;
        return true;
    }

    void read_record(CsvRecord& record) {
        if (take_line_end())
            return;  // a blank line: no cells
        while (true) {
            record.cells.push_back(read_cell(record.line));
            if (index_ >= text_.size() || take_line_end())
                return;
            ++index_;  // the comma
        }
    }

    // Reads up to, not past, the comma or line end that ends the cell.
    std::string read_cell(int record_line) {
        std::string cell;
        bool quoted = index_ < text_.size() && text_[index_] == '"';
        if (quoted)
            ++index_;
        while (index_ < text_.size()) {
            const char c = text_[index_];
            if (quoted) {
                if (c == '"' && index_ + 1 < text_.size() && text_[index_ + 1] == '"') {
                    cell += '"';
                    index_ += 2;
                    continue;
                }
                if (c == '"') {
                    quoted = false;  // what follows the closing quote joins the cell
                } else {
                    if (c == '\n' ||
                        (c == '\r' && (index_ + 1 >= text_.size() || text_[index_ + 1] != '\n')))
                        ++line_;
                    cell += c;
                }
                ++index_;
                continue;
            }
            if (c == ',' || c == '\n' || c == '\r')
                break;
            cell += c;
            ++index_;
        }
        if (quoted)
            throw ScheduleFileError(
                fmt::format("{}:{}: unterminated quoted cell", source_name_, record_line));
        return cell;
    }

    std::string_view text_;
    const std::string& source_name_;
    std::size_t index_ = 0;
    int line_ = 1;
    std::vector<CsvRecord> records_;
};

// PyTorch makes each record a rank (`for rank, row in enumerate(reader)`), so a blank line is a
// rank with no actions: trailing ones add ranks, one in the middle shifts every later row. No
// rank of a valid schedule is idle, so such a row is refused where it is.
void require_rank_rows(const std::vector<CsvRecord>& records, const std::string& source_name) {
    const int rows = static_cast<int>(records.size());
    int last_with_action = -1;
    for (int row = 0; row < rows; ++row)
        for (const std::string& cell : records[row].cells)
            if (!is_blank(cell))
                last_with_action = row;
    for (int row = 0; row < rows; ++row) {
        const CsvRecord& record = records[row];
        const bool has_action =
            std::any_of(record.cells.begin(), record.cells.end(),
                        [](const std::string& cell) { return !is_blank(cell); });
        if (has_action)
            continue;
        const std::string where = fmt::format("{}:{}", source_name, record.line);
        if (record.cells.size() > 1)
            throw ScheduleFileError(fmt::format(
                "{}: rank {}'s row has only empty cells: every rank runs at least one stage, so "
                "its row needs at least one action",
                where, row));
        if (last_with_action < 0)
            throw ScheduleFileError(fmt::format("{}: blank line and no actions anywhere", where));
        if (row > last_with_action)
            throw ScheduleFileError(fmt::format(
                "{}: blank line after the last rank's row: PyTorch's csv.reader makes every line a "
                "rank, so this is rank {} with no actions and the file is pp={}, not {}; delete "
                "it (one line end after the last row is fine)",
                where, row, rows, row));
        const std::string shifted =
            rows - row == 2
                ? fmt::format("the row below it becomes rank {}", row + 1)
                : fmt::format("the rows below it become ranks {}..{}", row + 1, rows - 1);
        throw ScheduleFileError(fmt::format(
            "{}: blank line: PyTorch's csv.reader makes every line a rank, so this is rank {} with "
            "no actions and {}; delete it",
            where, row, shifted));
    }
}

// The first empty cell, as "file:line: rank R, cell C", when there is one.
std::string first_empty_cell(const std::vector<CsvRecord>& records,
                             const std::string& source_name) {
    for (std::size_t row = 0; row < records.size(); ++row)
        for (std::size_t cell = 0; cell < records[row].cells.size(); ++cell)
            if (is_blank(records[row].cells[cell]))
                return fmt::format("{}:{}: rank {}, cell {}", source_name, records[row].line, row,
                                   cell + 1);
    return "";
}

// The distinct values of `values`, ascending.
std::vector<int> distinct(std::vector<int> values) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

// What the file itself says about its size: the numbers it names and how many forwards it has.
struct FileExtent {
    std::vector<int> stages;        // distinct, ascending
    std::vector<int> microbatches;  // distinct, ascending
    std::size_t forwards = 0;
    std::size_t parts = 0;

    int highest_stage() const { return stages.empty() ? -1 : stages.back(); }
    int highest_microbatch() const { return microbatches.empty() ? -1 : microbatches.back(); }
};

FileExtent measure_extent(Schedule& schedule) {
    FileExtent extent;
    for (const auto& actions : schedule.ranks)
        for (const Action& action : actions)
            for (const Action& part : schedule.parts_of(action)) {
                // Only lowering adds UNSHARD and RESHARD (a compute-only file may hold
                // REDUCE_GRAD, where upstream's _add_reduce_grad puts it): a file with them is
                // lowered even when one rank leaves it no SEND/RECV.
                schedule.has_communication |= is_communication(part.kind) ||
                                              part.kind == ActionKind::unshard ||
                                              part.kind == ActionKind::reshard;
                extent.stages.push_back(part.stage);
                if (part.microbatch != kNoMicrobatch)
                    extent.microbatches.push_back(part.microbatch);
                extent.forwards += part.kind == ActionKind::forward;
                ++extent.parts;
            }
    extent.stages = distinct(std::move(extent.stages));
    extent.microbatches = distinct(std::move(extent.microbatches));
    return extent;
}

// The first run of numbers missing from `used` (distinct, ascending, counted from 0): the
// missing ones are [first, next), `next` being the lowest number named above them.
struct NumberGap {
    int first = 0;
    int next = 0;
};

std::optional<NumberGap> first_gap(const std::vector<int>& used) {
    for (std::size_t index = 0; index < used.size(); ++index)
        if (used[index] != static_cast<int>(index))
            return NumberGap{static_cast<int>(index), used[index]};
    return std::nullopt;
}

// A schedule numbers its stages and microbatches 0, 1, 2, ... without gaps, and the shape is
// inferred from the highest numbers named; so a number above a gap is almost always one mistyped
// cell (5F2 for 1F2), which would otherwise become extra stages "not run by any rank". Names the
// first action that names it.
void require_no_gap(const Schedule& schedule, const std::vector<int>& used, bool stages,
                    const ActionLocator& locate) {
    const std::optional<NumberGap> gap = first_gap(used);
    if (!gap)
        return;
    const auto names_it = [&](const Action& part) {
        return (stages ? part.stage : part.microbatch) == gap->next;
    };
    int first_rank = -1, first_step = -1, naming = 0;
    for (int rank = 0; rank < static_cast<int>(schedule.ranks.size()); ++rank)
        for (int step = 0; step < static_cast<int>(schedule.ranks[rank].size()); ++step) {
            const auto parts = schedule.parts_of(schedule.ranks[rank][step]);
            if (std::none_of(parts.begin(), parts.end(), names_it))
                continue;
            if (naming++ == 0) {
                first_rank = rank;
                first_step = step;
            }
        }
    const char* what = stages ? "stage" : "microbatch";
    const char* whats = stages ? "stages" : "microbatches";
    const std::string missing = gap->next - gap->first == 1
                                    ? fmt::format("{} {}", what, gap->first)
                                    : fmt::format("{} {}..{}", whats, gap->first, gap->next - 1);
    throw ScheduleFileError(fmt::format(
        "{}: '{}' names {} {}, but no action names {}; {} are numbered from 0 without gaps, so "
        "is {} a typo?{}",
        locate(first_rank, first_step), schedule.text(schedule.ranks[first_rank][first_step]), what,
        gap->next, missing, whats, gap->next,
        naming > 1 ? fmt::format(" ({} actions name {} {})", naming, what, gap->next) : ""));
}

// Every later step (check, lowering, dry run) keeps a table of stages x microbatches. Without
// gaps each stage and microbatch is named by some action, but the table is still their product:
// a valid schedule runs a forward for every pair, so a table larger than the file's forwards
// can cover means the file is wrong: say why now, before anything of that size exists.
void require_coverable_extent(const FileExtent& extent, const std::string& source_name) {
    constexpr long long kMaxStageMicrobatches = 1LL << 28;
    const long long stage_count = extent.highest_stage() + 1LL;
    const long long microbatch_count = extent.highest_microbatch() + 1LL;
    // stage_to_rank alone is sized by the stages, even when no action names a microbatch.
    const long long table = std::max(stage_count, 1LL) * std::max(microbatch_count, 1LL);
    if (table > kMaxStageMicrobatches)
        throw ScheduleFileError(fmt::format(
            "{}: the schedule names stage {} and microbatch {}: more than {} stage-microbatches",
            source_name, extent.highest_stage(), extent.highest_microbatch(),
            kMaxStageMicrobatches));
    constexpr long long kAlwaysCheckedTable = 1LL << 16;
    if (table <= std::max<long long>(kAlwaysCheckedTable, static_cast<long long>(extent.parts)))
        return;
    throw ScheduleFileError(fmt::format(
        "{}: {} stages x {} microbatches need {} forwards (F), one per stage and microbatch, but "
        "the schedule has only {}",
        source_name, stage_count, microbatch_count, table, extent.forwards));
}

// Legacy-notation evidence that needs the actions read: on one rank, a W after a B of the same
// stage and microbatch. Today that pair is wrong (W needs an I, and B already did the weights);
// in the older notation it is the split backward, B being the input half.
struct SplitBackward {
    int rank = -1;
    int full_step = -1;
    int weight_step = -1;
};

std::optional<SplitBackward> first_b_then_w(const Schedule& schedule) {
    for (int rank = 0; rank < static_cast<int>(schedule.ranks.size()); ++rank) {
        std::map<std::pair<int, int>, int> full_backward_step;
        const auto& actions = schedule.ranks[rank];
        for (int step = 0; step < static_cast<int>(actions.size()); ++step) {
            const Action& action = actions[step];
            const std::pair<int, int> key{action.stage, action.microbatch};
            if (action.kind == ActionKind::full_backward)
                full_backward_step.emplace(key, step);
            if (action.kind != ActionKind::backward_weight)
                continue;
            if (const auto found = full_backward_step.find(key); found != full_backward_step.end())
                return SplitBackward{rank, found->second, step};
        }
    }
    return std::nullopt;
}

// The kind text of a plain token, after its stage number ("" for overlaps and malformed ones).
std::string_view kind_text_of(std::string_view cell) {
    const std::size_t begin = cell.find_first_not_of(kBlank);
    if (begin == std::string_view::npos || cell[begin] < '0' || cell[begin] > '9')
        return {};
    const std::size_t kind = cell.find_first_not_of("0123456789", begin);
    return kind == std::string_view::npos ? std::string_view{} : cell.substr(kind);
}

struct CellPosition {
    int row = -1;
    int cell = -1;
};

// The first cell whose token kind satisfies `matches`.
template <typename Predicate>
std::optional<CellPosition> first_cell(const std::vector<CsvRecord>& records, Predicate matches) {
    for (int row = 0; row < static_cast<int>(records.size()); ++row)
        for (int cell = 0; cell < static_cast<int>(records[row].cells.size()); ++cell)
            if (matches(records[row].cells[cell]))
                return CellPosition{row, cell};
    return std::nullopt;
}

struct ParsedRows {
    Schedule schedule;
    std::vector<std::vector<int>> columns;  // per rank, the cell index of each action
};

ParsedRows parse_rows(const std::vector<CsvRecord>& records, const std::string& source_name,
                      ActionNotation notation) {
    ParsedRows parsed;
    Schedule& schedule = parsed.schedule;
    schedule.name = std::filesystem::path(source_name).stem().string();
    for (int row = 0; row < static_cast<int>(records.size()); ++row) {
        auto& actions = schedule.ranks.emplace_back();
        auto& columns = parsed.columns.emplace_back();
        const auto& cells = records[row].cells;
        for (std::size_t cell = 0; cell < cells.size(); ++cell) {
            if (is_blank(cells[cell]))
                continue;  // idle slot (PyTorch's None)
            try {
                actions.push_back(parse_action(cells[cell], schedule.parts, notation));
                columns.push_back(static_cast<int>(cell));
                // PyTorch's regex takes "0F" too, but no rank can run a forward of no
                // microbatch: said here, where the cell is known.
                for (const Action& part : schedule.parts_of(actions.back()))
                    if (needs_microbatch(part.kind) && part.microbatch == kNoMicrobatch)
                        throw ActionParseError(
                            cells[cell],
                            fmt::format("{} has no microbatch index", schedule.text(part)));
            } catch (const ActionParseError& error) {
                throw ScheduleFileError(fmt::format("{}:{}: rank {}, cell {}: {}", source_name,
                                                    records[row].line, row, cell + 1,
                                                    error.what()));
            }
        }
    }
    schedule.rank_count = static_cast<int>(records.size());
    return parsed;
}

std::string cell_text(const std::vector<CsvRecord>& records, CellPosition position) {
    const std::string& cell = records[position.row].cells[position.cell];
    const std::size_t begin = cell.find_first_not_of(kBlank);
    const std::size_t end = cell.find_last_not_of(kBlank);
    return fmt::format("line {}, cell {}: {}", records[position.row].line, position.cell + 1,
                       cell.substr(begin, end - begin + 1));
}

// The notation a file without --notation is read in, and the cells that say so. BW exists only
// in the older notation, I and OVERLAP_F_B only in today's; a file with neither is today's
// unless it splits a backward as B then W, which only the older notation can mean.
ScheduleCsvReading infer_notation(const std::vector<CsvRecord>& records,
                                  const std::string& source_name, ParsedRows& current) {
    const auto legacy_cell = first_cell(
        records, [](std::string_view cell) { return kind_text_of(cell).substr(0, 2) == "BW"; });
    const auto current_cell = first_cell(records, [](std::string_view cell) {
        const std::size_t begin = cell.find_first_not_of(kBlank);
        return kind_text_of(cell).substr(0, 1) == "I" ||
               (begin != std::string_view::npos && cell[begin] == '(');
    });
    ScheduleCsvReading reading;
    if (legacy_cell && current_cell)
        throw ScheduleFileError(fmt::format(
            "{}: mixes PyTorch's two action notations: {} is the older notation's full backward "
            "but {} is only in today's; read it with --notation current or --notation legacy to "
            "be told which cells do not fit",
            source_name, cell_text(records, *legacy_cell), cell_text(records, *current_cell)));
    if (legacy_cell) {
        reading.notation = ActionNotation::legacy;
        reading.legacy_evidence = cell_text(records, *legacy_cell);
        return reading;
    }
    if (current_cell)
        return reading;
    current = parse_rows(records, source_name, ActionNotation::current);
    if (const auto split = first_b_then_w(current.schedule)) {
        const auto& columns = current.columns[split->rank];
        reading.notation = ActionNotation::legacy;
        reading.legacy_evidence =
            fmt::format("{} follows {} of the same stage and microbatch, and no cell is an I",
                        cell_text(records, {split->rank, columns[split->weight_step]}),
                        records[split->rank].cells[columns[split->full_step]]);
    }
    return reading;
}

}  // namespace

void infer_schedule_shape(Schedule& schedule, const std::string& source_name,
                          const ActionLocator& locate) {
    const FileExtent extent = measure_extent(schedule);
    const ActionLocator by_step = [&](int rank, int step) {
        return fmt::format("{}: rank {}, step {}", source_name, rank, step);
    };
    require_no_gap(schedule, extent.stages, true, locate ? locate : by_step);
    require_no_gap(schedule, extent.microbatches, false, locate ? locate : by_step);
    require_coverable_extent(extent, source_name);
    schedule.stage_count = extent.highest_stage() + 1;
    schedule.microbatch_count = extent.highest_microbatch() + 1;
    schedule.stages_per_rank =
        schedule.rank_count > 0 && schedule.stage_count % schedule.rank_count == 0
            ? schedule.stage_count / schedule.rank_count
            : 0;
    schedule.stage_to_rank = infer_stage_to_rank(schedule, SplitStage::first_rank);
}

std::optional<ActionNotation> parse_notation_choice(std::string_view text) {
    if (text == "auto")
        return std::nullopt;
    if (text == "current")
        return ActionNotation::current;
    if (text == "legacy")
        return ActionNotation::legacy;
    throw ScheduleFileError(fmt::format(
        "'{}' is not an action notation: auto (the default: inferred from the cells), current "
        "(F, I, W, B = full backward) or legacy (F, B = input backward, W, BW = full backward)",
        text));
}

std::string ScheduleCsvReading::note(const std::string& source_name,
                                     bool idle_slots_are_steps) const {
    std::string note;
    if (byte_order_mark)
        note = fmt::format(
            "{} opens with a UTF-8 byte order mark, read past here; PyTorch's _load_csv keeps it "
            "on the first cell and refuses the file (Invalid action string): save it without one",
            source_name);
    if (!legacy_evidence.empty())
        note += fmt::format(
            "{}{} is in PyTorch's older action notation ({}): read B as the input backward "
            "(today's I), W as the weight backward and BW as the full backward (today's B); pass "
            "--notation current to read it as today's notation",
            note.empty() ? "" : "; ", source_name, legacy_evidence);
    if (printed_1f1b_forwards)
        note += fmt::format(
            "{}{}: the last rank's forwards are numbered 1 to {} and its backwards 0 to {}, as "
            "PyTorch's Schedule1F1B prints that rank (its pipeline_order); the rank runs forward "
            "k before backward k, so its forwards are read as 0 to {}",
            note.empty() ? "" : "; ", source_name, *printed_1f1b_forwards,
            *printed_1f1b_forwards - 1, *printed_1f1b_forwards - 1);
    if (!empty_cell_in_lowered.empty() && !idle_slots_are_steps)
        note += fmt::format(
            "{}{} is empty, in a schedule with communication actions (a simulated dump, one column "
            "per step): read past, but PyTorch's _load_csv(format=\"compute_comms\") refuses "
            "empty cells",
            note.empty() ? "" : "; ", empty_cell_in_lowered);
    if (reduce_grad_in_compute_only)
        note += fmt::format(
            "{}{} is compute-only but holds REDUCE_GRAD, as PyTorch's _dump_csv writes GPipe and "
            "1F1B: read here, but PyTorch's _load_csv(format=\"compute_only\") refuses it",
            note.empty() ? "" : "; ", source_name);
    return note;
}

ScheduleCsvReading parse_schedule_csv_as(std::string_view text, const std::string& source_name,
                                         std::optional<ActionNotation> notation,
                                         std::vector<std::vector<int>>* columns) {
    // A CSV saved by a spreadsheet opens with a UTF-8 byte order mark, which Python's csv
    // module would leave on the first cell; it is not part of any action (noted: PyTorch
    // refuses it).
    const bool byte_order_mark = text.starts_with("\xEF\xBB\xBF");
    if (byte_order_mark)
        text.remove_prefix(3);
    refuse_cells_past_memory(text, source_name);
    const std::vector<CsvRecord> records = CsvRecordReader(text, source_name).read();
    if (records.empty())
        throw ScheduleFileError(source_name + ": the schedule file is empty");
    require_rank_rows(records, source_name);
    ParsedRows parsed;
    ScheduleCsvReading reading;
    if (notation)
        reading.notation = *notation;
    else
        reading = infer_notation(records, source_name, parsed);
    if (parsed.schedule.ranks.empty() || reading.notation == ActionNotation::legacy)
        parsed = parse_rows(records, source_name, reading.notation);
    const ActionLocator locate = [&](int rank, int step) {
        return fmt::format("{}:{}: rank {}, cell {}", source_name, records[rank].line, rank,
                           parsed.columns[rank][step] + 1);
    };
    reading.printed_1f1b_forwards = renumber_printed_1f1b_last_rank(parsed.schedule);
    infer_schedule_shape(parsed.schedule, source_name, locate);
    if (parsed.schedule.has_communication) {
        reading.empty_cell_in_lowered = first_empty_cell(records, source_name);
        link_send_recv_pairs(parsed.schedule);
    } else {
        for (const auto& actions : parsed.schedule.ranks)
            reading.reduce_grad_in_compute_only |= std::any_of(
                actions.begin(), actions.end(),
                [](const Action& action) { return action.kind == ActionKind::reduce_grad; });
    }
    if (columns != nullptr)
        *columns = std::move(parsed.columns);
    reading.schedule = std::move(parsed.schedule);
    reading.byte_order_mark = byte_order_mark;
    return reading;
}

Schedule parse_schedule_csv(std::string_view text, const std::string& source_name,
                            std::vector<std::vector<int>>* columns) {
    return parse_schedule_csv_as(text, source_name, ActionNotation::current, columns).schedule;
}

std::string read_schedule_csv_text(const std::string& path) {
    std::string text;
    try {
        text = read_text_file(path);
    } catch (const TextFileError& error) {
        if (error.problem() == TextFileError::Problem::cannot_open)
            throw ScheduleFileError(fmt::format("cannot open schedule file '{}': {}",
                                                shown_text(path, 1024), error.reason()));
        throw;
    }
    // A trace named as the schedule (schedule.file in an experiment, which no command-line
    // check sees) would otherwise fail on its binary pages as "a blank line".
    if (text.starts_with(std::string_view("SQLite format 3\0", 16)))
        throw ScheduleFileError(fmt::format(
            "schedule file '{}' is an SQLite database (a pipelens trace?), not a schedule CSV",
            path));
    return text;
}

Schedule read_schedule_csv(const std::string& path) {
    return parse_schedule_csv(read_schedule_csv_text(path), path);
}

ScheduleCsvReading read_schedule_csv_as(const std::string& path,
                                        std::optional<ActionNotation> notation) {
    return parse_schedule_csv_as(read_schedule_csv_text(path), path, notation);
}

std::string format_schedule_csv(const Schedule& schedule) {
    std::string out;
    out.reserve(schedule.action_count() * 6);
    for (const auto& actions : schedule.ranks) {
        for (std::size_t index = 0; index < actions.size(); ++index) {
            if (index > 0)
                out += ',';
            append_action_text(out, actions[index], schedule.parts);
        }
        out += "\r\n";
    }
    return out;
}

void write_schedule_csv(const Schedule& schedule, const std::string& path) {
    std::ofstream file(path, std::ios::binary);
    if (!file)
        throw ScheduleFileError(fmt::format("cannot write schedule file '{}'", path));
    file << format_schedule_csv(schedule);
    file.close();  // a full disk shows only when the buffer is written out
    if (!file)
        throw ScheduleFileError(fmt::format("failed writing schedule file '{}'", path));
}

void link_send_recv_pairs(Schedule& schedule) {
    // Key: (sending stage, microbatch, direction) -> pair id.
    std::map<std::tuple<int, int, bool>, int> pair_of_send;
    schedule.pair_count = 0;
    for (auto& actions : schedule.ranks)
        for (Action& action : actions)
            if (is_send(action.kind)) {
                const bool forward = action.kind == ActionKind::send_forward;
                auto [found, inserted] = pair_of_send.emplace(
                    std::tuple{action.stage, action.microbatch, forward}, schedule.pair_count);
                if (inserted)
                    ++schedule.pair_count;
                action.link = found->second;
            }
    for (auto& actions : schedule.ranks)
        for (Action& action : actions)
            if (is_receive(action.kind)) {
                const bool forward = action.kind == ActionKind::recv_forward;
                auto found =
                    pair_of_send.find({transfer_peer_stage(action), action.microbatch, forward});
                action.link = found == pair_of_send.end() ? kNoPair : found->second;
            }
}

}  // namespace pipelens
