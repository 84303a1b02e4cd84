// File kinds by content (file_kind.hpp). TOML and CSV are told apart by the first line that is
// not blank or a comment: a TOML table header or `key = value`, against comma-separated actions.
#include "traces/file_kind.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include <zlib.h>

namespace pipelens::traces {
namespace {

constexpr std::size_t kHeadBytes = 64 * 1024;
constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

std::string_view trimmed(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos)
        return {};
    return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// The first line that is neither blank nor a comment ('#').
std::string_view first_meaningful_line(std::string_view head) {
    while (!head.empty()) {
        const std::size_t end = std::min(head.find('\n'), head.size());
        const std::string_view line = trimmed(head.substr(0, end));
        if (!line.empty() && line.front() != '#')
            return line;
        head.remove_prefix(std::min(end + 1, head.size()));
    }
    return {};
}

bool is_key_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == '"' || c == ' ';
}

// `[table]`, `[[array]]` (a trailing comment allowed) or `key = value`. A header holds key
// characters only, so a JSON array of arrays (`[[-1, 1, 512]]`) is not taken for one.
bool is_toml_line(std::string_view line) {
    if (line.starts_with('[')) {
        line = trimmed(line.substr(0, line.find('#')));
        const bool array_table = line.starts_with("[[");
        const std::string_view close = array_table ? "]]" : "]";
        if (!line.ends_with(close) || line.size() <= 2 * close.size())
            return false;
        const std::string_view name = line.substr(close.size(), line.size() - 2 * close.size());
        const bool starts_as_key =
            std::isalpha(static_cast<unsigned char>(name.front())) || name.front() == '"';
        return starts_as_key && std::all_of(name.begin(), name.end(), is_key_char);
    }
    const std::size_t equals = line.find('=');
    if (equals == 0 || equals == std::string_view::npos)
        return false;
    // A key is bare or quoted parts joined by dots, spaces only around them: `1F1B pp=4 v=1`
    // (a line of `simulate`'s output) is no key; `"a.b" = 1` is one part.
    std::string_view key = trimmed(line.substr(0, equals));
    while (true) {
        std::size_t end = 0;
        if (key.starts_with('"')) {
            end = key.find('"', 1);
            if (end == std::string_view::npos)
                return false;
            ++end;
        } else {
            while (end < key.size() && key[end] != '.' && key[end] != ' ' && key[end] != '\t') {
                if (!is_key_char(key[end]) || key[end] == '"')
                    return false;
                ++end;
            }
            if (end == 0)
                return false;
        }
        key = trimmed(key.substr(end));
        if (key.empty())
            return true;
        if (!key.starts_with('.'))
            return false;
        key = trimmed(key.substr(1));
    }
}

bool is_plan_table(std::string_view head) {
    return contains(head, "\n[cluster]") || contains(head, "\n[plan]") ||
           head.starts_with("[cluster]") || head.starts_with("[plan]");
}

// A row of actions: cells such as 0F0, 1SEND_F2, (0F7;7B3)OVERLAP_F_B (DualPipeV's overlapped
// pair) or empty ones, separated by commas.
bool is_csv_line(std::string_view line) {
    bool any_action = false;
    while (true) {
        const std::size_t comma = std::min(line.find(','), line.size());
        const std::string_view cell = trimmed(line.substr(0, comma));
        if (!cell.empty()) {
            const bool overlapped = cell.front() == '(' && cell.size() > 1 &&
                                    std::isdigit(static_cast<unsigned char>(cell[1]));
            if (!std::isdigit(static_cast<unsigned char>(cell.front())) && !overlapped &&
                cell != "None")
                return false;
            // An action holds no spaces or '=' but between the parentheses of an overlap,
            // whose parts PyTorch trims (`1F1B pp=4 v=1 m=8` is a line of text).
            int depth = 0;
            for (const char c : cell) {
                depth += c == '(' ? 1 : c == ')' ? -1 : 0;
                const bool inside = depth > 0 && (c == ' ' || c == ';');
                if (!inside && !std::isalnum(static_cast<unsigned char>(c)) && c != '_' &&
                    c != '(' && c != ')')
                    return false;
            }
            any_action = true;
        }
        if (comma == line.size())
            return any_action || contains(line, ",");
        line.remove_prefix(comma + 1);
    }
}

// The member names of the JSON object whose '{' is head[open], in order, as far as `head` goes
// (a head cut inside the object gives the names before the cut).
std::vector<std::string_view> top_level_keys(std::string_view head, std::size_t open) {
    std::vector<std::string_view> keys;
    int depth = 0;
    bool expect_key = false;
    for (std::size_t at = open; at < head.size(); ++at) {
        const char c = head[at];
        if (c == '"') {
            std::size_t end = at + 1;
            while (end < head.size() && head[end] != '"')
                end += head[end] == '\\' ? 2 : 1;
            if (end >= head.size())
                break;
            if (depth == 1 && expect_key)
                keys.push_back(head.substr(at + 1, end - at - 1));
            expect_key = false;
            at = end;
        } else if (c == '{' || c == '[') {
            ++depth;
            expect_key = depth == 1;
        } else if (c == '}' || c == ']') {
            if (--depth == 0)
                break;
        } else if (c == ',') {
            expect_key = depth == 1;
        }
    }
    return keys;
}

bool has_key(const std::vector<std::string_view>& keys, std::string_view wanted) {
    return std::find(keys.begin(), keys.end(), wanted) != keys.end();
}

// By the object's own top-level members, never by a name nested in them: a profiler trace of a
// distributed run holds `pg_config` inside `distributedInfo`, a flight-recorder dump at the top.
FileKind json_object_kind(std::string_view head, std::size_t open) {
    const std::vector<std::string_view> keys = top_level_keys(head, open);
    const bool profiler = has_key(keys, "schemaVersion") || has_key(keys, "deviceProperties") ||
                          has_key(keys, "distributedInfo");
    if (profiler || has_key(keys, "traceEvents")) {
        // _dump_chrometrace writes only name/cat/ph/pid/tid/ts/dur with these two categories.
        const bool unit_steps = contains(head, "\"cat\": \"computation\"") ||
                                contains(head, "\"cat\": \"communication\"");
        return unit_steps && !profiler ? FileKind::pipelining_chrometrace
                                       : FileKind::pytorch_profiler;
    }
    if (has_key(keys, "pg_config") || has_key(keys, "entries") || has_key(keys, "pg_status"))
        return FileKind::flight_recorder;
    if (std::any_of(keys.begin(), keys.end(), [](std::string_view key) {
            return key.starts_with("forward-") || key.starts_with("backward-");
        }))
        return FileKind::megatron_timers;
    return FileKind::unknown;
}

// A bare array of events is Chrome's other trace form: its first element has a phase ("ph").
FileKind json_array_kind(std::string_view head, std::size_t open) {
    const std::size_t element = head.find_first_not_of(" \t\r\n", open + 1);
    if (element == std::string_view::npos || head[element] != '{')
        return FileKind::unknown;
    return has_key(top_level_keys(head, element), "ph") ? FileKind::pytorch_profiler
                                                        : FileKind::unknown;
}

FileKind text_kind(std::string_view head) {
    const std::string_view line = first_meaningful_line(head);
    if (line.empty() || std::memchr(head.data(), '\0', head.size()) != nullptr)
        return FileKind::unknown;
    if (is_toml_line(line))
        return is_plan_table(head) ? FileKind::plan_toml : FileKind::experiment_toml;
    if (is_csv_line(line))
        return FileKind::schedule_csv;
    return FileKind::unknown;
}

}  // namespace

FileKind file_kind_of_head(std::string_view head) {
    if (head.starts_with(kSqliteMagic))
        return FileKind::sqlite;
    // A pickle starts with PROTO (0x80) and its version; the flight recorder's default dump.
    if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80)
        return FileKind::flight_recorder;
    const std::size_t first = head.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos)
        return FileKind::unknown;
    if (head[first] == '{')
        return json_object_kind(head, first);
    if (head[first] == '[' && json_array_kind(head, first) != FileKind::unknown)
        return FileKind::pytorch_profiler;
    return text_kind(head);
}

FileKind file_kind_of(const std::string& path) {
    gzFile file = gzopen(path.c_str(), "rb");  // reads plain files unchanged
    if (file == nullptr)
        return FileKind::unknown;
    std::string head(kHeadBytes, '\0');
    const int read = gzread(file, head.data(), static_cast<unsigned>(head.size()));
    gzclose(file);
    if (read < 0)
        return FileKind::unknown;
    head.resize(static_cast<std::size_t>(read));
    return file_kind_of_head(head);
}

std::string_view file_kind_description(FileKind kind) {
    switch (kind) {
        case FileKind::unknown:
            return "";
        case FileKind::sqlite:
            return "a pipelens trace (SQLite)";
        case FileKind::experiment_toml:
            return "an experiment (TOML)";
        case FileKind::plan_toml:
            return "a plan (TOML with [cluster] or [plan])";
        case FileKind::schedule_csv:
            return "a schedule (PyTorch CSV)";
        case FileKind::pytorch_profiler:
            return "a PyTorch profiler trace (JSON)";
        case FileKind::pipelining_chrometrace:
            return "a pipelining chrometrace dump (JSON)";
        case FileKind::flight_recorder:
            return "an NCCL flight-recorder dump";
        case FileKind::megatron_timers:
            return "Megatron-LM timers (JSON)";
    }
    return "";
}

}  // namespace pipelens::traces
