// Reading and writing PyTorch's schedule CSV format.
#include "engine/schedule/schedule_csv.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

namespace pipelens {
namespace {

// Splits one CSV record into cells; handles double-quoted cells as spreadsheets write them.
std::vector<std::string> split_cells(std::string_view line, const std::string& where) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (std::size_t index = 0; index < line.size(); ++index) {
        const char c = line[index];
        if (quoted) {
            if (c == '"' && index + 1 < line.size() && line[index + 1] == '"') {
                cells.back() += '"';
                ++index;
            } else if (c == '"') {
                quoted = false;
            } else {
                cells.back() += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            cells.emplace_back();
        } else {
            cells.back() += c;
        }
    }
    if (quoted)
        throw ScheduleFileError(where + ": unterminated quoted cell");
    return cells;
}

std::size_t distinct_count(std::vector<int> values) {
    std::sort(values.begin(), values.end());
    return static_cast<std::size_t>(std::unique(values.begin(), values.end()) - values.begin());
}

// What the file itself says about its size: the highest numbers it names, and how many
// distinct stages, microbatches and forwards it actually contains.
struct FileExtent {
    int highest_stage = -1;
    int highest_microbatch = -1;
    std::size_t stages = 0;
    std::size_t microbatches = 0;
    std::size_t forwards = 0;
    std::size_t parts = 0;
};

FileExtent measure_extent(Schedule& schedule) {
    FileExtent extent;
    std::vector<int> stages;
    std::vector<int> microbatches;
    for (const auto& actions : schedule.ranks)
        for (const Action& action : actions)
            for (const Action& part : schedule.parts_of(action)) {
                extent.highest_stage = std::max(extent.highest_stage, part.stage);
                extent.highest_microbatch = std::max(extent.highest_microbatch, part.microbatch);
                schedule.has_communication |= is_communication(part.kind);
                stages.push_back(part.stage);
                if (part.microbatch != kNoMicrobatch)
                    microbatches.push_back(part.microbatch);
                extent.forwards += part.kind == ActionKind::forward;
                ++extent.parts;
            }
    extent.stages = distinct_count(std::move(stages));
    extent.microbatches = distinct_count(std::move(microbatches));
    return extent;
}

// Every later step (check, lowering, dry run) keeps a table of stages x microbatches, so a tiny
// file naming stage 333333333 would cost gigabytes there. A valid schedule numbers its stages and
// microbatches without gaps and runs a forward for every pair, so a table larger than the file's
// actions can cover means the file is wrong: say why now, before anything of that size exists.
// Small tables are left to the static check, whose per-action messages say more.
void require_coverable_extent(const FileExtent& extent, const std::string& source_name) {
    constexpr long long kMaxStageMicrobatches = 1LL << 28;
    const long long stage_count = extent.highest_stage + 1LL;
    const long long microbatch_count = extent.highest_microbatch + 1LL;
    // stage_to_rank alone is sized by the stages, even when no action names a microbatch.
    const long long table = std::max(stage_count, 1LL) * std::max(microbatch_count, 1LL);
    if (table > kMaxStageMicrobatches)
        throw ScheduleFileError(fmt::format(
            "{}: the schedule names stage {} and microbatch {}: more than {} stage-microbatches",
            source_name, extent.highest_stage, extent.highest_microbatch, kMaxStageMicrobatches));
    constexpr long long kAlwaysCheckedTable = 1LL << 16;
    if (table <= std::max<long long>(kAlwaysCheckedTable, static_cast<long long>(extent.parts)))
        return;
    if (stage_count > static_cast<long long>(extent.stages))
        throw ScheduleFileError(fmt::format(
            "{}: the schedule names stage {} but uses only {} distinct stage numbers; stages must "
            "be numbered 0..N-1 without gaps",
            source_name, extent.highest_stage, extent.stages));
    if (microbatch_count > static_cast<long long>(extent.microbatches))
        throw ScheduleFileError(fmt::format(
            "{}: the schedule names microbatch {} but uses only {} distinct microbatch numbers; "
            "microbatches must be numbered 0..M-1 without gaps",
            source_name, extent.highest_microbatch, extent.microbatches));
    throw ScheduleFileError(fmt::format(
        "{}: {} stages x {} microbatches need {} forwards (F), one per stage and microbatch, but "
        "the schedule has only {}",
        source_name, stage_count, microbatch_count, table, extent.forwards));
}

}  // namespace

void infer_schedule_shape(Schedule& schedule, const std::string& source_name) {
    const FileExtent extent = measure_extent(schedule);
    require_coverable_extent(extent, source_name);
    const int highest_stage = extent.highest_stage;
    const int highest_microbatch = extent.highest_microbatch;
    schedule.stage_count = highest_stage + 1;
    schedule.microbatch_count = highest_microbatch + 1;
    schedule.stages_per_rank =
        schedule.rank_count > 0 && schedule.stage_count % schedule.rank_count == 0
            ? schedule.stage_count / schedule.rank_count
            : 0;
    schedule.stage_to_rank.assign(schedule.stage_count, -1);
    for (int rank = 0; rank < schedule.rank_count; ++rank)
        for (const Action& action : schedule.ranks[rank])
            for (const Action& part : schedule.parts_of(action))
                if (part.stage >= 0 && schedule.stage_to_rank[part.stage] < 0)
                    schedule.stage_to_rank[part.stage] = rank;
}

Schedule parse_schedule_csv(std::string_view text, const std::string& source_name,
                            std::vector<std::vector<int>>* columns) {
    if (columns != nullptr)
        columns->clear();
    Schedule schedule;
    schedule.name = std::filesystem::path(source_name).stem().string();
    std::size_t line_start = 0;
    int row = 0;
    while (line_start < text.size()) {
        std::size_t line_end = text.find('\n', line_start);
        if (line_end == std::string_view::npos)
            line_end = text.size();
        std::string_view line = text.substr(line_start, line_end - line_start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        line_start = line_end + 1;
        ++row;
        const std::string where = fmt::format("{}: row {} (rank {})", source_name, row, row - 1);
        auto& actions = schedule.ranks.emplace_back();
        if (columns != nullptr)
            columns->emplace_back();
        if (line.empty())
            continue;
        const std::vector<std::string> cells = split_cells(line, where);
        for (std::size_t cell = 0; cell < cells.size(); ++cell) {
            if (cells[cell].find_first_not_of(" \t") == std::string::npos)
                continue;  // idle slot
            try {
                actions.push_back(parse_action(cells[cell], schedule.parts));
                if (columns != nullptr)
                    columns->back().push_back(static_cast<int>(cell));
            } catch (const ActionParseError& error) {
                throw ScheduleFileError(
                    fmt::format("{}, cell {}: {}", where, cell + 1, error.what()));
            }
        }
    }
    if (schedule.ranks.empty())
        throw ScheduleFileError(source_name + ": the schedule file is empty");
    schedule.rank_count = static_cast<int>(schedule.ranks.size());
    infer_schedule_shape(schedule, source_name);
    if (schedule.stage_count == 0)
        throw ScheduleFileError(source_name + ": the schedule has no actions");
    if (schedule.has_communication)
        link_send_recv_pairs(schedule);
    return schedule;
}

std::string read_schedule_csv_text(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file)
        throw ScheduleFileError(fmt::format("cannot open schedule file '{}'", path));
    std::ostringstream content;
    content << file.rdbuf();
    return content.str();
}

Schedule read_schedule_csv(const std::string& path) {
    return parse_schedule_csv(read_schedule_csv_text(path), path);
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
    if (!file)
        throw ScheduleFileError(fmt::format("failed writing schedule file '{}'", path));
}

void link_send_recv_pairs(Schedule& schedule) {
    // Key: (sending stage, microbatch, direction) -> pair id.
    std::map<std::tuple<int, int, bool>, int> pair_of_send;
    schedule.pair_count = 0;
    for (auto& actions : schedule.ranks)
        for (Action& action : actions)
            if (action.kind == ActionKind::send_forward ||
                action.kind == ActionKind::send_backward) {
                const bool forward = action.kind == ActionKind::send_forward;
                auto [found, inserted] = pair_of_send.emplace(
                    std::tuple{action.stage, action.microbatch, forward}, schedule.pair_count);
                if (inserted)
                    ++schedule.pair_count;
                action.link = found->second;
            }
    for (auto& actions : schedule.ranks)
        for (Action& action : actions)
            if (action.kind == ActionKind::recv_forward ||
                action.kind == ActionKind::recv_backward) {
                const bool forward = action.kind == ActionKind::recv_forward;
                const int sender = forward ? action.stage - 1 : action.stage + 1;
                auto found = pair_of_send.find({sender, action.microbatch, forward});
                action.link = found == pair_of_send.end() ? kNoPair : found->second;
            }
}

}  // namespace pipelens
