// Chrome trace writing. Flow arrows use the v1 flow events ("s" at the send, "f" with binding
// point "e" at the recv) that both Perfetto and the legacy viewer draw; both ends sit inside
// their slices, which is what binds an arrow to a slice.
//
// Invariant: complete ("X") slices of one thread never partly overlap, as the format requires.
// A receive is drawn as its transfer and holds no stream, so it can overlap the sends and other
// receives of its lane: each rank's lane is packed into as few threads as keep them apart
// ("communication", "communication 2", ...), and a flow end sits on its slice's thread.
#include "traces/chrome_export.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "traces/text/quantities.hpp"

namespace pipelens::traces {
namespace {

constexpr int kComputeThread = 0;
constexpr int kCommunicationThread = 1;
// Further threads of a lane: the communication lane's after its first, the compute lane's (a
// record whose computations overlap) far after them.
constexpr int kMoreComputeThreads = 1000;

int thread_of(ActionLane lane, int packed) {
    if (packed == 0)
        return lane == ActionLane::compute ? kComputeThread : kCommunicationThread;
    return lane == ActionLane::compute ? kMoreComputeThreads + packed
                                       : kCommunicationThread + packed;
}

// Each action's thread (index as `actions`), and per rank and lane how many threads it took:
// the first of the lane's threads whose last slice ended by the action's start.
struct ThreadPacking {
    std::vector<int> thread;
    std::map<std::pair<std::int32_t, ActionLane>, int> count;
};

ThreadPacking pack_threads(const std::vector<ActionRecord>& actions) {
    std::vector<std::size_t> order(actions.size());
    for (std::size_t index = 0; index < order.size(); ++index)
        order[index] = index;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t left, std::size_t right) {
        return std::tie(actions[left].rank, actions[left].lane, actions[left].start_ns) <
               std::tie(actions[right].rank, actions[right].lane, actions[right].start_ns);
    });
    ThreadPacking packing;
    packing.thread.resize(actions.size());
    std::map<std::pair<std::int32_t, ActionLane>, std::vector<std::int64_t>> ends;
    for (const std::size_t index : order) {
        const ActionRecord& action = actions[index];
        std::vector<std::int64_t>& lane_ends = ends[{action.rank, action.lane}];
        const auto free = std::find_if(lane_ends.begin(), lane_ends.end(),
                                       [&](std::int64_t end) { return end <= action.start_ns; });
        const auto packed = static_cast<int>(free - lane_ends.begin());
        if (free == lane_ends.end())
            lane_ends.push_back(action.end_ns);
        else
            *free = action.end_ns;
        packing.thread[index] = thread_of(action.lane, packed);
    }
    for (const auto& [key, lane_ends] : ends)
        packing.count[key] = static_cast<int>(lane_ends.size());
    return packing;
}

// Microseconds with three decimals, exactly from integer nanoseconds.
std::string microseconds(std::int64_t nanoseconds) {
    const char* sign = nanoseconds < 0 ? "-" : "";
    const std::int64_t magnitude = nanoseconds < 0 ? -nanoseconds : nanoseconds;
    return fmt::format("{}{}.{:03}", sign, magnitude / 1000, magnitude % 1000);
}

void append_json_string(fmt::memory_buffer& out, std::string_view text) {
    out.push_back('"');
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(c);
        } else if (static_cast<unsigned char>(c) < 0x20) {
            fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
        } else {
            out.push_back(c);
        }
    }
    out.push_back('"');
}

class ChromeWriter {
  public:
    explicit ChromeWriter(std::FILE* out) : out_(out) {}

    void begin() { raw("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"); }
    void end() {
        raw("\n]}\n");
        drain();
    }

    // Starts one event object; the caller appends its fields and close_event() ends it.
    fmt::memory_buffer& event() {
        if (!first_)
            raw(",\n");
        first_ = false;
        if (buffer_.size() > (1 << 20))
            drain();
        return buffer_;
    }

    void raw(std::string_view text) { buffer_.append(text.data(), text.data() + text.size()); }

  private:
    void drain() {
        if (std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size())
            throw ChromeWriteError("cannot write the Chrome trace");
        buffer_.clear();
    }

    std::FILE* out_;
    fmt::memory_buffer buffer_;
    bool first_ = true;
};

void write_thread_name(ChromeWriter& writer, int rank, int thread, const std::string& name) {
    fmt::format_to(std::back_inserter(writer.event()),
                   R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                   rank, thread, name);
}

// The further threads a lane was packed into, each named after its lane.
void write_more_threads(ChromeWriter& writer, const ThreadPacking& packing) {
    for (const auto& [key, count] : packing.count)
        for (int packed = 1; packed < count; ++packed)
            write_thread_name(
                writer, key.first, thread_of(key.second, packed),
                fmt::format("{} {}",
                            key.second == ActionLane::compute ? "compute" : "communication",
                            packed + 1));
}

void write_metadata(ChromeWriter& writer, int rank_count) {
    for (int rank = 0; rank < rank_count; ++rank) {
        fmt::format_to(
            std::back_inserter(writer.event()),
            R"({{"ph":"M","name":"process_name","pid":{0},"args":{{"name":"rank {0}"}}}})", rank);
        fmt::format_to(
            std::back_inserter(writer.event()),
            R"({{"ph":"M","name":"process_sort_index","pid":{0},"args":{{"sort_index":{0}}}}})",
            rank);
        fmt::format_to(
            std::back_inserter(writer.event()),
            R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"compute"}}}})",
            rank, kComputeThread);
        fmt::format_to(
            std::back_inserter(writer.event()),
            R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"communication"}}}})",
            rank, kCommunicationThread);
    }
}

void write_action(ChromeWriter& writer, const ActionRecord& action, int thread) {
    fmt::memory_buffer& out = writer.event();
    out.append(std::string_view(R"({"ph":"X","name":)"));
    append_json_string(out, action.label);
    fmt::format_to(std::back_inserter(out),
                   R"(,"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"stage":{},)"
                   R"("microbatch":{},"step":{},"bytes":{})",
                   action.lane == ActionLane::compute ? "compute" : "communication", action.rank,
                   thread, microseconds(action.start_ns),
                   microseconds(action.end_ns - action.start_ns), action.stage, action.microbatch,
                   action.step, action.bytes);
    if (action.pair_id >= 0)
        fmt::format_to(std::back_inserter(out), R"(,"pair":{})", action.pair_id);
    out.append(std::string_view("}}"));
}

void write_flow_end(ChromeWriter& writer, const ActionRecord& action, int thread, bool is_send) {
    // The send end sits at the send's start, the recv end at the recv's end: the moment the
    // data left and the moment it arrived.
    const std::int64_t at = is_send ? action.start_ns : action.end_ns;
    fmt::format_to(std::back_inserter(writer.event()),
                   R"({{"ph":"{}","name":"p2p","cat":"p2p","id":{},"pid":{},"tid":{},"ts":{}{}}})",
                   is_send ? "s" : "f", action.pair_id, action.rank, thread, microseconds(at),
                   is_send ? "" : R"(,"bp":"e")");
}

}  // namespace

ChromeExportCounts write_chrome_trace(const TraceReader& reader, std::int64_t run_id,
                                      std::FILE* out) {
    const RunRecord run = reader.run(run_id);
    ChromeExportCounts counts;
    ChromeWriter writer(out);
    writer.begin();
    write_metadata(writer, run.pp);

    const std::vector<PairRecord> pairs = reader.pairs(run_id);
    // By (rank, pair id): each training step's copy of a transfer has its own pair id, so a
    // flow joins the send and receive of one step.
    const auto key = [](std::int32_t rank, std::int32_t pair_id) {
        return (static_cast<std::int64_t>(rank) << 32) | static_cast<std::uint32_t>(pair_id);
    };
    const std::vector<ActionRecord> actions = reader.actions(run_id);
    const ThreadPacking packing = pack_threads(actions);
    write_more_threads(writer, packing);
    // An arrow needs both ends: in a failed run a pair's SEND may never have run, or its RECV
    // not been posted, and a flow event without its other end is an import error to Perfetto.
    std::unordered_set<std::int64_t> rows;
    for (const ActionRecord& action : actions)
        if (action.pair_id >= 0)
            rows.insert(key(action.rank, action.pair_id));
    std::unordered_map<std::int64_t, bool> send_of_pair;  // key -> is send
    for (const PairRecord& pair : pairs) {
        const std::int64_t send = key(pair.send_rank, pair.pair_id);
        const std::int64_t recv = key(pair.recv_rank, pair.pair_id);
        if (!rows.count(send) || !rows.count(recv))
            continue;
        send_of_pair[send] = true;
        send_of_pair[recv] = false;
    }
    for (std::size_t index = 0; index < actions.size(); ++index) {
        const ActionRecord& action = actions[index];
        write_action(writer, action, packing.thread[index]);
        ++counts.actions;
        if (action.pair_id < 0)
            continue;
        const auto found = send_of_pair.find(key(action.rank, action.pair_id));
        if (found == send_of_pair.end())
            continue;
        write_flow_end(writer, action, packing.thread[index], found->second);
        if (found->second)
            ++counts.flows;
    }
    for (const MemoryRecord& sample : reader.memory(run_id)) {
        fmt::format_to(std::back_inserter(writer.event()),
                       R"({{"ph":"C","name":"memory","pid":{},"ts":{},"args":{{"bytes":{}}}}})",
                       sample.rank, microseconds(sample.time_ns), sample.bytes);
        ++counts.memory_samples;
    }
    writer.end();
    return counts;
}

std::string chrome_size_note(const std::string& path, std::uintmax_t bytes) {
    if (bytes < kBrowserJsonBytes)
        return {};
    return fmt::format(
        "{} is {}: a browser's Perfetto UI holds a whole trace in about 2 GB of memory, several "
        "times its file's size, so it may not open this one; Perfetto's trace_processor opens it "
        "in this machine's memory instead (`trace_processor --httpd {}`, then "
        "https://ui.perfetto.dev)",
        path, format_bytes(static_cast<std::int64_t>(bytes)), path);
}

}  // namespace pipelens::traces
