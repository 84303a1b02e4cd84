// One NCCL flight-recorder dump (one rank's), read from PyTorch's default pickle form or the JSON
// form of `_dump_nccl_trace_json`, into plain value types with PyTorch's field names.
//
// Format (torch/csrc/distributed/c10d/FlightRecorder.hpp and FlightRecorderDetail.hpp): a dict
// with `version` ("2.0" ... "2.10"), `pg_config` (group name -> {name, desc, ranks: "[0, 1]"}),
// `pg_status` (pg id -> last enqueued/started/completed collective) and `entries`, one per
// recorded op with `record_id`, `pg_id`, `process_group` (name, desc), `collective_seq_id`,
// `p2p_seq_id`, `op_id`, `profiling_name` ("nccl:send 1->2", "nccl:recv 2<-1",
// "nccl:all_reduce"), `time_created_ns`, `time_discovered_started_ns`,
// `time_discovered_completed_ns` (None in pickles, 0 in JSON when not seen), `duration_ms`,
// `state`, `input_sizes`, `input_dtypes`, `output_sizes`, `output_dtypes`, `is_p2p`, `retired`,
// `timeout_ms`, `frames`. The JSON form has no `entries` key when nothing was recorded.
//
// Invariants of a read dump: `rank` >= 0 (from a `rank` key, else the digits that end the file
// name: PyTorch writes `<prefix><rank>`); the version is one upstream's analyzer knows; every
// entry's group is listed in `pg_config` and its p2p peer is a member of it (`peer_rank` is
// that peer's global rank). Errors are ImportError naming the file (and entry).
//
// Gloo registers a group with the flight recorder before the group is named, so its pg_config
// lists the group under "" while the entries carry the later name. When pg_config has exactly
// one unnamed group and the entries name exactly one group it does not list, that group is the
// unnamed one: it takes the entries' name (and description, where it has none) and `notes`
// says so. More than one candidate either way stays an error. (PyTorch's fr_trace stops on such
// a dump with a KeyError.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::import {

struct ProcessGroupConfig {
    std::string name;        // PyTorch's group name ("0", "1", or a hash)
    std::string desc;        // the user's description ("default_pg", "PP", ...)
    std::vector<int> ranks;  // global ranks, as listed
};

struct ProcessGroupStatus {
    std::string pg_id;
    std::int64_t last_enqueued_collective = -1;
    std::int64_t last_started_collective = -1;
    std::int64_t last_completed_collective = -1;
};

enum class EntryState { scheduled, started, completed };
std::string_view entry_state_name(EntryState state);

struct StackFrame {
    std::string name;
    std::string filename;
    std::int64_t line = 0;
};

// `profiling_name` taken apart: "nccl:send 1->2" is type "send", src 1, dst 2 (ranks within
// the group); collectives have src = dst = -1.
struct OpName {
    std::string backend;  // "nccl"
    std::string type;     // "send", "recv", "all_reduce", "coalesced", ...
    int src = -1;
    int dst = -1;
    bool is_send() const { return type == "send"; }
    bool is_recv() const { return type == "recv"; }
    bool is_p2p() const { return is_send() || is_recv(); }
};
// Throws ImportError (without a file name; callers add it) when the text is not of that form.
OpName parse_profiling_name(std::string_view text);

struct FlightRecorderEntry {
    std::int64_t record_id = 0;
    std::int64_t pg_id = 0;
    std::string pg_name;
    std::string pg_desc;
    std::int64_t collective_seq_id = 0;
    std::int64_t p2p_seq_id = 0;
    std::int64_t op_id = 0;
    std::string profiling_name;
    OpName op;
    std::int64_t time_created_ns = 0;
    std::optional<std::int64_t> time_discovered_started_ns;
    std::optional<std::int64_t> time_discovered_completed_ns;
    std::optional<double> duration_ms;
    EntryState state = EntryState::scheduled;
    std::vector<std::vector<std::int64_t>> input_sizes;
    std::vector<std::string> input_dtypes;
    std::vector<std::vector<std::int64_t>> output_sizes;
    std::vector<std::string> output_dtypes;
    bool is_p2p = false;
    bool retired = false;
    std::optional<std::int64_t> timeout_ms;
    std::vector<StackFrame> frames;
    // Derived when read: the index of the entry's group in the dump's pg_config, and for a
    // send/recv the global rank of the other side.
    int group = -1;
    int peer_rank = -1;
};

struct FlightRecorderDump {
    std::string file;  // as given, for messages
    int rank = -1;
    std::string version;
    std::vector<ProcessGroupConfig> pg_config;
    std::vector<ProcessGroupStatus> pg_status;
    std::vector<FlightRecorderEntry> entries;  // in recorded order (record_id ascending)
    std::vector<std::string> notes;            // what reading had to assume, for the report
};

// Versions of the form "2.N", which FlightRecorder has written since 2.0 ("2.10" in PyTorch
// 2.11); others are refused. Those past 2.10 are read as 2.10 and the dump's notes say so.
bool known_dump_version(std::string_view version);
bool newer_than_checked(std::string_view version);

// Parses a dump from its bytes; `file` names it in errors and gives the rank when the dump has
// no `rank` key. Throws ImportError.
FlightRecorderDump parse_flight_recorder_dump(std::string_view bytes, const std::string& file);

// Reads one file (pickle or JSON, told by its first byte).
FlightRecorderDump read_flight_recorder_dump(const std::string& path);

// Reads every file, all before returning; sorted by rank. Two files of one rank are an error
// naming both.
std::vector<FlightRecorderDump> read_flight_recorder_dumps(const std::vector<std::string>& paths);

}  // namespace pipelens::import
