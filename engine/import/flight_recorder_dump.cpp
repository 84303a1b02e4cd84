// Reading flight-recorder dumps. Both encodings go through one JSON value (the pickle reader
// yields the same shape as `_dump_nccl_trace_json`, tuples as arrays), so there is one reader of
// fields; it accepts what differs between the two (JSON writes absent times as 0 and pg_status
// figures as strings, pickles write None and integers).
#include "engine/import/flight_recorder_dump.hpp"

#include "engine/import/rank_file_name.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "engine/import/imported_run.hpp"
#include "engine/import/json_document.hpp"
#include "engine/import/pickle_reader.hpp"
#include "engine/import/rank_set.hpp"
#include "engine/text/shortened.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::import {
namespace {

using nlohmann::json;

std::optional<std::int64_t> parse_int(std::string_view text) {
    while (!text.empty() && text.front() == ' ')
        text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ')
        text.remove_suffix(1);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty())
        return std::nullopt;
    return value;
}

// A value as an error message shows it: scalars as JSON text (cut short), containers by kind,
// so a crafted file cannot make a message huge or its writing recurse deeply.
std::string brief(const json& value) {
    if (value.is_array())
        return fmt::format("a list of {} item(s)", value.size());
    if (value.is_object())
        return fmt::format("a dict of {} key(s)", value.size());
    return shortened(value.dump(-1, ' ', false, json::error_handler_t::replace), 60);
}

// One JSON object being read, and where it is, so every complaint names the file and entry.
class Fields {
  public:
    Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

    const std::string& where() const { return where_; }
    const json* find(const char* key) const {
        const auto found = object_.find(key);
        return found == object_.end() ? nullptr : &*found;
    }
    [[noreturn]] void fail(const char* key, std::string_view what) const {
        throw ImportError(fmt::format("{}: `{}` {}", where_, key, what));
    }
    const json& require(const char* key) const {
        const json* value = find(key);
        if (value == nullptr)
            fail(key, "is missing");
        return *value;
    }

    std::int64_t integer_of(const char* key, const json& value) const {
        if (value.is_number_integer() && !value.is_number_unsigned())
            return value.get<std::int64_t>();
        if (value.is_number_unsigned() &&
            value.get<std::uint64_t>() <=
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return static_cast<std::int64_t>(value.get<std::uint64_t>());
        if (value.is_string())
            if (const auto parsed = parse_int(value.get<std::string>()))
                return *parsed;
        fail(key, fmt::format("should be an integer, not {}", brief(value)));
    }
    std::int64_t integer(const char* key) const { return integer_of(key, require(key)); }
    // A count the recorder keeps from 0 (record ids, sequence numbers): a negative one is damage,
    // and once came out as a finding about "collective #-5".
    std::int64_t count(const char* key) const { return counted(key, integer(key)); }
    std::int64_t count_or(const char* key, std::int64_t fallback) const {
        return counted(key, integer_or(key, fallback));
    }
    std::int64_t counted(const char* key, std::int64_t value) const {
        if (value < 0)
            fail(key, fmt::format("is {}, but the recorder counts it from 0", value));
        return value;
    }
    std::int64_t integer_or(const char* key, std::int64_t fallback) const {
        const json* value = find(key);
        return value == nullptr || value->is_null() ? fallback : integer_of(key, *value);
    }
    // A time the recorder had not seen yet: absent, None (pickle) or 0 (JSON). The recorder's
    // clock is nanoseconds since the epoch, so a negative one is damage, not a time.
    std::optional<std::int64_t> time(const char* key) const {
        const std::int64_t value = time_of(key, integer_or(key, 0));
        return value == 0 ? std::nullopt : std::optional<std::int64_t>(value);
    }
    std::int64_t required_time(const char* key) const { return time_of(key, integer(key)); }
    std::int64_t time_of(const char* key, std::int64_t value) const {
        if (value < 0)
            fail(key, fmt::format("is {}, which is no time (nanoseconds since the epoch)", value));
        return value;
    }
    std::string text(const char* key) const {
        const json& value = require(key);
        if (!value.is_string())
            fail(key, fmt::format("should be a string, not {}", brief(value)));
        return value.get<std::string>();
    }
    std::string text_or(const char* key, std::string fallback) const {
        return find(key) == nullptr ? fallback : text(key);
    }
    bool flag_or(const char* key, bool fallback) const {
        const json* value = find(key);
        if (value == nullptr || value->is_null())
            return fallback;
        if (!value->is_boolean())
            fail(key, fmt::format("should be true or false, not {}", brief(*value)));
        return value->get<bool>();
    }
    std::vector<std::vector<std::int64_t>> sizes(const char* key) const {
        return list_of<std::vector<std::int64_t>>(
            key, "tensor shapes", [](const json& shape) { return shape.is_array(); },
            [&](const json& shape) {
                std::vector<std::int64_t> dims;
                for (const json& dim : shape)
                    dims.push_back(integer_of(key, dim));
                return dims;
            });
    }
    std::vector<std::string> strings(const char* key) const {
        return list_of<std::string>(
            key, "strings", [](const json& item) { return item.is_string(); },
            [](const json& item) { return item.get<std::string>(); });
    }

  private:
    // A list field: absent or null reads as empty; anything else must be a list whose every
    // item `fits`, and a misfit names the whole list in its message.
    template <typename Item, typename Fits, typename Convert>
    std::vector<Item> list_of(const char* key, std::string_view items, Fits fits,
                              Convert convert) const {
        std::vector<Item> out;
        const json* value = find(key);
        if (value == nullptr || value->is_null())
            return out;
        if (!value->is_array())
            fail(key, fmt::format("should be a list of {}", items));
        for (const json& item : *value) {
            if (!fits(item))
                fail(key, fmt::format("should be a list of {}, not {}", items, brief(*value)));
            out.push_back(convert(item));
        }
        return out;
    }

    const json& object_;
    std::string where_;
};

std::vector<int> parse_ranks(const json& value, const Fields& fields) {
    std::vector<int> ranks;
    auto add = [&](std::int64_t rank) {
        if (rank < 0 || rank > std::numeric_limits<int>::max())
            fields.fail("ranks", fmt::format("holds rank {}, which is not a rank", rank));
        ranks.push_back(static_cast<int>(rank));
    };
    if (value.is_array()) {
        for (const json& rank : value)
            add(fields.integer_of("ranks", rank));
        return ranks;
    }
    // PyTorch writes the list as text, "[0, 1, 2]".
    // Not a conditional expression: its std::string temporary would leave the view dangling.
    std::string_view text;
    if (value.is_string())
        text = value.get_ref<const std::string&>();
    if (text.size() < 2 || text.front() != '[' || text.back() != ']')
        fields.fail("ranks", fmt::format("should be a list like \"[0, 1]\", not {}", brief(value)));
    text = text.substr(1, text.size() - 2);
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const auto rank = parse_int(text.substr(0, comma));
        if (!rank)
            fields.fail("ranks",
                        fmt::format("should be a list like \"[0, 1]\", not {}", brief(value)));
        add(*rank);
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    }
    return ranks;
}

// A group's members are a set: a rank listed twice would make it wait for itself.
std::vector<int> parse_member_ranks(const json& value, const Fields& fields) {
    std::vector<int> ranks = parse_ranks(value, fields);
    if (const std::optional<int> twice = rank_listed_twice(ranks))
        fields.fail("ranks", fmt::format("lists rank {} twice", *twice));
    return ranks;
}

std::vector<ProcessGroupConfig> parse_pg_config(const json& dump, const std::string& file) {
    const Fields top(dump, file);
    const json& config = top.require("pg_config");
    if (!config.is_object())
        top.fail("pg_config", "should map group names to {name, desc, ranks}");
    std::vector<ProcessGroupConfig> groups;
    for (const auto& [key, value] : config.items()) {
        if (!value.is_object())
            top.fail("pg_config", fmt::format("entry '{}' should be {{name, desc, ranks}}", key));
        const Fields group(value, fmt::format("{}: pg_config '{}'", file, key));
        groups.push_back({group.text_or("name", key), group.text_or("desc", ""),
                          parse_member_ranks(group.require("ranks"), group)});
    }
    return groups;
}

// Older dumps have no pg_status, and nothing relies on it (it is only reported), so a group's
// status that cannot be read is left out with a note rather than refusing the dump.
std::vector<ProcessGroupStatus> parse_pg_status(const json& dump, const std::string& file,
                                                std::vector<std::string>& notes) {
    std::vector<ProcessGroupStatus> out;
    const auto found = dump.find("pg_status");
    if (found == dump.end() || !found->is_object())
        return out;
    for (const auto& [key, value] : found->items()) {
        if (!value.is_object())
            continue;
        const Fields status(value, fmt::format("{}: pg_status '{}'", file, key));
        try {
            out.push_back({key, status.integer_or("last_enqueued_collective", -1),
                           status.integer_or("last_started_collective", -1),
                           status.integer_or("last_completed_collective", -1)});
        } catch (const ImportError& error) {
            notes.push_back(std::string(error.what()) + "; that group's status is left out");
        }
    }
    return out;
}

EntryState parse_state(const Fields& fields) {
    const std::string state = fields.text("state");
    if (state == "scheduled")
        return EntryState::scheduled;
    if (state == "started")
        return EntryState::started;
    if (state == "completed")
        return EntryState::completed;
    fields.fail("state", fmt::format("is '{}'; expected scheduled, started or completed", state));
}

std::vector<StackFrame> parse_frames(const Fields& fields) {
    std::vector<StackFrame> frames;
    const json* value = fields.find("frames");
    if (value == nullptr || !value->is_array())
        return frames;
    for (const json& frame : *value) {
        if (!frame.is_object())
            continue;
        const Fields parts(frame, fields.where() + ": frame");
        frames.push_back({parts.text_or("name", ""), parts.text_or("filename", ""),
                          parts.integer_or("line", 0)});
    }
    return frames;
}

// The group's member at `local` (a rank within the group, as profiling names count them), from
// its members in ascending order.
int global_rank(const std::string& group, const std::vector<int>& sorted, int local,
                const Fields& fields) {
    if (local < 0 || local >= static_cast<int>(sorted.size()))
        fields.fail("profiling_name",
                    fmt::format("names rank {} of process group '{}', which has {} ranks", local,
                                group, sorted.size()));
    return sorted[static_cast<std::size_t>(local)];
}

FlightRecorderEntry parse_entry(const json& value, const Fields& fields) {
    if (!value.is_object())
        throw ImportError(fields.where() + ": should be a dict of the op's fields");
    FlightRecorderEntry entry;
    entry.record_id = fields.count("record_id");
    entry.pg_id = fields.integer_or("pg_id", 0);
    const json& group = fields.require("process_group");
    if (!group.is_array() || group.size() != 2 || !group[0].is_string() || !group[1].is_string())
        fields.fail("process_group", fmt::format("should be (name, desc), not {}", brief(group)));
    entry.pg_name = group[0].get<std::string>();
    entry.pg_desc = group[1].get<std::string>();
    entry.collective_seq_id = fields.count("collective_seq_id");
    entry.p2p_seq_id = fields.count_or("p2p_seq_id", 0);
    entry.op_id = fields.integer_or("op_id", 0);
    entry.profiling_name = fields.text("profiling_name");
    try {
        entry.op = parse_profiling_name(entry.profiling_name);
    } catch (const ImportError& error) {
        fields.fail("profiling_name", error.what());
    }
    entry.time_created_ns = fields.required_time("time_created_ns");
    entry.time_discovered_started_ns = fields.time("time_discovered_started_ns");
    entry.time_discovered_completed_ns = fields.time("time_discovered_completed_ns");
    if (const json* duration = fields.find("duration_ms"); duration && duration->is_number()) {
        entry.duration_ms = duration->get<double>();
        if (!std::isfinite(*entry.duration_ms) || *entry.duration_ms < 0)
            fields.fail("duration_ms",
                        fmt::format("is {}, which is no duration", brief(*duration)));
    }
    entry.state = parse_state(fields);
    entry.input_sizes = fields.sizes("input_sizes");
    entry.input_dtypes = fields.strings("input_dtypes");
    entry.output_sizes = fields.sizes("output_sizes");
    entry.output_dtypes = fields.strings("output_dtypes");
    entry.is_p2p = fields.flag_or("is_p2p", entry.op.is_p2p());
    entry.retired = fields.flag_or("retired", false);
    if (const json* timeout = fields.find("timeout_ms"); timeout && !timeout->is_null())
        entry.timeout_ms = fields.integer_of("timeout_ms", *timeout);
    entry.frames = parse_frames(fields);
    return entry;
}

// pg_config's groups by name (the first of a name, as a lookup in order would find it): a dump
// can list tens of thousands of groups, so entries are not matched to them one by one.
std::unordered_map<std::string, int> groups_by_name(const std::vector<ProcessGroupConfig>& groups) {
    std::unordered_map<std::string, int> index;
    for (std::size_t i = 0; i < groups.size(); ++i)
        index.emplace(groups[i].name, static_cast<int>(i));
    return index;
}

bool lists_unnamed_group(const std::vector<ProcessGroupConfig>& groups) {
    return std::any_of(groups.begin(), groups.end(),
                       [](const ProcessGroupConfig& group) { return group.name.empty(); });
}

// The group names entries use that pg_config does not list, each once, in order of first use.
std::vector<const FlightRecorderEntry*> unlisted_groups(const FlightRecorderDump& dump) {
    const std::unordered_map<std::string, int> listed = groups_by_name(dump.pg_config);
    std::unordered_set<std::string> seen;
    std::vector<const FlightRecorderEntry*> firsts;
    for (const FlightRecorderEntry& entry : dump.entries)
        if (listed.count(entry.pg_name) == 0 && seen.insert(entry.pg_name).second)
            firsts.push_back(&entry);
    return firsts;
}

// PyTorch's Gloo backend registers a group's ranks with the flight recorder when it is built,
// before the group has its name, so pg_config lists it under "" while its entries carry the
// name given later ("0", "default_pg"). fr_trace looks groups up by name and stops there
// (KeyError). pipelens names the unnamed group after the entries' group only where nothing
// else can be meant: pg_config has exactly one unnamed group and the entries name exactly one
// group it does not list. Anything else is left for resolve_groups to refuse.
void name_the_unnamed_group(FlightRecorderDump& dump) {
    const std::vector<const FlightRecorderEntry*> unlisted = unlisted_groups(dump);
    const auto unnamed = [](const ProcessGroupConfig& group) { return group.name.empty(); };
    if (unlisted.size() != 1 ||
        std::count_if(dump.pg_config.begin(), dump.pg_config.end(), unnamed) != 1)
        return;
    ProcessGroupConfig& group =
        *std::find_if(dump.pg_config.begin(), dump.pg_config.end(), unnamed);
    group.name = unlisted.front()->pg_name;
    if (group.desc.empty())
        group.desc = unlisted.front()->pg_desc;
    std::string ranks;
    for (const int rank : group.ranks)
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
    dump.notes.push_back(fmt::format(
        "rank {}: pg_config lists a group without a name (ranks [{}]), as Gloo registers a "
        "group before naming it; its entries' group '{}' ({}) is taken to be that one",
        dump.rank, ranks, group.name, group.desc));
}

// Why a still unnamed group in pg_config could not stand for an unlisted one: the entries
// name several groups it does not list. Empty when pg_config has no unnamed group.
std::string unnamed_group_hint(const FlightRecorderDump& dump) {
    if (!lists_unnamed_group(dump.pg_config))
        return "";
    std::string names;
    for (const FlightRecorderEntry* first : unlisted_groups(dump))
        names += (names.empty() ? "'" : ", '") + first->pg_name + "'";
    return fmt::format(" (its one unnamed group cannot be told apart: the entries name {})", names);
}

// A dump taken as another rank's (a renamed or swapped file) reads as a job where ranks send to
// themselves or join groups they are not in, and its analysis is wrong without a word: the
// dump's rank must be a member of each group it recorded an op of, and a send's source or a
// recv's destination must be that rank.
void check_own_rank(const FlightRecorderDump& dump, const FlightRecorderEntry& entry,
                    const std::vector<int>& members, const Fields& fields,
                    std::string_view rank_source) {
    const std::string misnamed =
        fmt::format("the dump is rank {} (by {}): is the file misnamed, or from another job?",
                    dump.rank, rank_source);
    if (!members.empty() && !std::binary_search(members.begin(), members.end(), dump.rank))
        fields.fail("process_group",
                    fmt::format("is '{}', whose ranks are [{}], but {}", entry.pg_name,
                                fmt::join(members, ", "), misnamed));
    if (!entry.op.is_p2p())
        return;
    const int own = global_rank(entry.pg_name, members,
                                entry.op.is_send() ? entry.op.src : entry.op.dst, fields);
    if (own != dump.rank)
        fields.fail("profiling_name", fmt::format("'{}' is posted by rank {}, but {}",
                                                  entry.profiling_name, own, misnamed));
}

// Each entry's group (an index into pg_config) and, for a send or recv, its peer's global rank.
void resolve_groups(FlightRecorderDump& dump, const json& entries, std::string_view rank_source) {
    name_the_unnamed_group(dump);
    const std::unordered_map<std::string, int> groups = groups_by_name(dump.pg_config);
    std::vector<std::vector<int>> members(dump.pg_config.size());
    for (std::size_t group = 0; group < members.size(); ++group) {
        members[group] = dump.pg_config[group].ranks;
        std::sort(members[group].begin(), members[group].end());
    }
    for (std::size_t i = 0; i < dump.entries.size(); ++i) {
        FlightRecorderEntry& entry = dump.entries[i];
        const auto found = groups.find(entry.pg_name);
        entry.group = found == groups.end() ? -1 : found->second;
        const Fields fields(entries[i], fmt::format("{}: entry {}", dump.file, i));
        if (entry.group < 0)
            fields.fail("process_group",
                        fmt::format("is '{}', which the dump's pg_config does not list{}",
                                    entry.pg_name, unnamed_group_hint(dump)));
        const auto group = static_cast<std::size_t>(entry.group);
        check_own_rank(dump, entry, members[group], fields, rank_source);
        if (entry.op.is_p2p())
            entry.peer_rank = global_rank(dump.pg_config[group].name, members[group],
                                          entry.op.is_send() ? entry.op.dst : entry.op.src, fields);
    }
}

// The op types PyTorch's process groups record and fr_trace knows. Another is still matched by
// sequence id, but no size rule was written for it: said once per rank, so a misspelt or new
// name is not passed over without a word (upstream's fr_trace refuses it outright).
bool known_op_type(std::string_view type) {
    static constexpr std::string_view kKnown[] = {"send",
                                                  "recv",
                                                  "recv_any_source",
                                                  "coalesced",
                                                  "barrier",
                                                  "all_reduce",
                                                  "allreduce_coalesced",
                                                  "_allreduce_sparse",
                                                  "reduce",
                                                  "_reduce_oop",
                                                  "broadcast",
                                                  "_broadcast_oop",
                                                  "all_gather",
                                                  "_all_gather_base",
                                                  "_allgather_base",
                                                  "allgather_coalesced",
                                                  "allgather_into_tensor_coalesced",
                                                  "all_gather_into_tensor_coalesced",
                                                  "reduce_scatter",
                                                  "_reduce_scatter_base",
                                                  "reduce_scatter_tensor_coalesced",
                                                  "gather",
                                                  "scatter",
                                                  "all_to_all",
                                                  "alltoall",
                                                  "alltoall_base"};
    return std::find(std::begin(kKnown), std::end(kKnown), type) != std::end(kKnown);
}

void note_unknown_ops(FlightRecorderDump& dump) {
    std::set<std::string> unknown;
    for (const FlightRecorderEntry& entry : dump.entries)
        if (!known_op_type(entry.op.type) && unknown.insert(entry.profiling_name).second)
            dump.notes.push_back(fmt::format(
                "rank {}: op '{}' is not one pipelens knows: matched by sequence id, its sizes "
                "not checked",
                dump.rank, entry.profiling_name));
}

// The dump's own `rank` wins over its name. A rank the trace cannot hold is refused here, naming
// where it was read: a run of that many ranks once made the whole output trace unreadable, and
// a name ending in a timestamp (fr_dump_1732051234.json) was read as rank 732051234.
int dump_rank(const json& dump, const std::string& file) {
    const Fields top(dump, file);
    if (const json* rank = top.find("rank"); rank != nullptr) {
        const std::int64_t value = top.integer_of("rank", *rank);
        if (value < 0 || value >= traces::kMostRanks)
            top.fail("rank", fmt::format("is {}, which is not a rank of a job pipelens can hold "
                                         "(at most {} ranks)",
                                         value, traces::kMostRanks));
        return static_cast<int>(value);
    }
    if (const auto rank = rank_from_file_name(file, RankNaming::rank_word_or_trailing)) {
        if (*rank >= traces::kMostRanks)
            throw ImportError(fmt::format(
                "{}: the dump has no `rank` key and the number its name ends in is not a rank "
                "of a job pipelens can hold (at most {} ranks); name the dump after its rank "
                "(<prefix><rank>, e.g. nccl_trace_rank_3)",
                file, traces::kMostRanks));
        return *rank;
    }
    throw ImportError(fmt::format(
        "{}: cannot tell which rank this dump is: it has no `rank` key and its name does not end "
        "in the rank (PyTorch names dumps <prefix><rank>, e.g. nccl_trace_rank_3)",
        file));
}

FlightRecorderDump dump_from_json(const json& dump, const std::string& file) {
    if (!dump.is_object())
        throw ImportError(file + ": not a flight-recorder dump (the top level is not a dict)");
    FlightRecorderDump out;
    out.file = file;
    const Fields top(dump, file);
    const json& version = top.require("version");
    if (!version.is_string() || !known_dump_version(version.get<std::string>()))
        throw ImportError(fmt::format(
            "{}: flight-recorder dump version {} is not one pipelens reads (2.N: the format "
            "PyTorch's FlightRecorder has written since 2.0)",
            file, brief(version)));
    out.version = version.get<std::string>();
    out.rank = dump_rank(dump, file);
    if (newer_than_checked(out.version))
        out.notes.push_back(fmt::format(
            "rank {}: dump version {} is newer than those pipelens was checked against (2.0 to "
            "2.10); its fields were read as 2.10's",
            out.rank, out.version));
    out.pg_config = parse_pg_config(dump, file);
    out.pg_status = parse_pg_status(dump, file, out.notes);
    const json* entries = top.find("entries");
    if (entries == nullptr || entries->is_null())
        return out;  // the JSON form leaves the key out when nothing was recorded
    if (!entries->is_array())
        top.fail("entries", "should be a list");
    for (std::size_t i = 0; i < entries->size(); ++i) {
        const Fields fields((*entries)[i], fmt::format("{}: entry {}", file, i));
        out.entries.push_back(parse_entry((*entries)[i], fields));
    }
    resolve_groups(out, *entries, top.find("rank") ? "its `rank` key" : "its file name");
    note_unknown_ops(out);
    return out;
}

}  // namespace

std::string_view entry_state_name(EntryState state) {
    switch (state) {
        case EntryState::scheduled:
            return "scheduled";
        case EntryState::started:
            return "started";
        case EntryState::completed:
            return "completed";
    }
    return "?";
}

OpName parse_profiling_name(std::string_view text) {
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0)
        throw ImportError(
            fmt::format("'{}' is not of the form backend:op (e.g. nccl:all_reduce)", text));
    OpName op;
    op.backend = std::string(text.substr(0, colon));
    std::string_view rest = text.substr(colon + 1);
    const std::size_t space = rest.find(' ');
    op.type = std::string(rest.substr(0, space));
    if (op.type.empty())
        throw ImportError(fmt::format("'{}' names no op", text));
    if (!op.is_p2p())
        return op;
    // "send 1->2": from 1 to 2; "recv 2<-1": 2 receives from 1.
    const std::string_view peers =
        space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    const std::string_view arrow = op.is_send() ? "->" : "<-";
    const std::size_t at = peers.find(arrow);
    const auto left = at == std::string_view::npos ? std::nullopt : parse_int(peers.substr(0, at));
    const auto right =
        at == std::string_view::npos ? std::nullopt : parse_int(peers.substr(at + arrow.size()));
    if (!left || !right || *left < 0 || *right < 0 || *left > 1'000'000'000 ||
        *right > 1'000'000'000)
        throw ImportError(
            fmt::format("'{}' should name its ranks as {} A{}B", text, op.type, arrow));
    op.src = static_cast<int>(op.is_send() ? *left : *right);
    op.dst = static_cast<int>(op.is_send() ? *right : *left);
    return op;
}

namespace {

std::optional<int> minor_of_version_2(std::string_view version) {
    const std::size_t dot = version.find('.');
    if (dot == std::string_view::npos || version.find(' ') != std::string_view::npos)
        return std::nullopt;
    const auto major = parse_int(version.substr(0, dot));
    const auto minor = parse_int(version.substr(dot + 1));
    if (!major || !minor || *major != 2 || *minor < 0)
        return std::nullopt;
    return static_cast<int>(*minor);
}

}  // namespace

bool known_dump_version(std::string_view version) {
    return minor_of_version_2(version).has_value();
}

bool newer_than_checked(std::string_view version) {
    const std::optional<int> minor = minor_of_version_2(version);
    return minor && *minor > 10;
}

FlightRecorderDump parse_flight_recorder_dump(std::string_view bytes, const std::string& file) {
    const std::size_t first = bytes.find_first_not_of(" \t\r\n");
    if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80)
        return dump_from_json(read_pickle(bytes, file), file);
    if (first != std::string_view::npos && bytes[first] == '{')
        return dump_from_json(parse_json_document(bytes, file), file);
    throw ImportError(file + ": not a flight-recorder dump (neither a pickle nor a JSON object)");
}

FlightRecorderDump read_flight_recorder_dump(const std::string& path) {
    return parse_flight_recorder_dump(read_input_file(path), path);
}

std::vector<FlightRecorderDump> read_flight_recorder_dumps(const std::vector<std::string>& paths) {
    std::vector<FlightRecorderDump> dumps;
    std::map<int, std::string> file_of_rank;
    for (const std::string& path : paths) {
        FlightRecorderDump dump = read_flight_recorder_dump(path);
        const auto [seen, fresh] = file_of_rank.emplace(dump.rank, path);
        if (!fresh)
            throw ImportError(fmt::format("{} and {} both hold rank {}'s dump; give one per rank",
                                          seen->second, path, dump.rank));
        if (!dumps.empty() && dump.version != dumps.front().version)
            throw ImportError(fmt::format(
                "{} is a version {} dump but {} is version {}: the ranks of one job write one "
                "version; are these dumps from different runs?",
                path, dump.version, dumps.front().file, dumps.front().version));
        dumps.push_back(std::move(dump));
    }
    std::sort(
        dumps.begin(), dumps.end(),
        [](const FlightRecorderDump& a, const FlightRecorderDump& b) { return a.rank < b.rank; });
    return dumps;
}

}  // namespace pipelens::import
