// Reads one rank's profiler trace: see profiler_rank_file.hpp.
#include "engine/import/profiler_rank_file.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/import/profiler_args.hpp"
#include "engine/import/profiler_event_times.hpp"
#include "engine/import/rank_file_name.hpp"

namespace pipelens::import {

// "Forward 3": a microbatch number of at most 9 digits, so that it fits an int (a longer one is
// no microbatch of a real run, and reading it once threw a bare "stoi").
bool is_gpipe_name(std::string_view name) {
    for (std::string_view prefix : {"Forward ", "Backward "})
        if (name.size() > prefix.size() && name.size() <= prefix.size() + 9 &&
            name.substr(0, prefix.size()) == prefix)
            return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()),
                               name.end(), [](char c) { return c >= '0' && c <= '9'; });
    return false;
}

bool is_profiler_step_name(std::string_view name) {
    constexpr std::string_view prefix = "ProfilerStep#";
    return name.size() > prefix.size() && name.size() <= prefix.size() + 9 &&
           name.substr(0, prefix.size()) == prefix &&
           std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

namespace {

bool is_action_range(std::string_view name) {
    return is_runtime_name(name) || is_gpipe_name(name);
}

std::optional<CommKind> comm_kind_of(std::string_view collective) {
    collective = unquoted(collective);
    if (collective == "send" || collective == "isend")
        return CommKind::send;
    if (collective == "recv" || collective == "irecv" || collective == "recvAnySource")
        return CommKind::recv;
    if (collective == "wait")
        return CommKind::wait;
    return std::nullopt;
}

// A wait on a Work object as a profiled operator: "c10d::wait", "Work.wait", "aten::wait".
bool is_wait_op(std::string_view name) {
    const auto separator = name.find_last_of(":.");
    return separator != std::string_view::npos && name.substr(separator + 1) == "wait";
}

CommCall comm_call(const ChromeEvent& event, CommKind kind, std::string thread) {
    CommCall call;
    call.kind = kind;
    call.start_ns = event.ts_ns;
    call.end_ns = event.ts_ns + std::max<std::int64_t>(event.dur_ns, 0);
    call.thread = std::move(thread);
    std::int64_t elements = integer_of(arg_text(event, "In msg nelems")).value_or(0);
    if (elements <= 0)
        elements = integer_of(arg_text(event, "Out msg nelems")).value_or(0);
    const std::int64_t width = dtype_bytes(arg_text(event, "dtype"));
    if (elements > 0 && width > 0)
        call.bytes = elements * width;
    return call;
}

void keep_event(RankFile& file, const ChromeEvent& event) {
    ++file.events;
    if (event.has_ts)
        check_event_time(file.path, event);
    if (file.cpu_ranges.empty())  // until a range shows the actions are marked
        keep_stage_operator(file.stage_operators, event, file.path);
    if (event.ph == "i" || event.ph == "I") {
        if (event.name != "[memory]")
            return;
        const auto total = integer_of(arg_text(event, "Total Allocated"));
        if (!total)
            return;
        if (*total < 0)  // an allocator's total: a trace would hold it as damage
            throw ImportError(fmt::format(
                "{}: byte {}: a [memory] event's \"Total Allocated\" is {} bytes; an allocator's "
                "total is zero or more",
                file.path, event.offset, *total));
        file.memory.push_back({event.ts_ns, *total,
                               integer_of(arg_text(event, "Device Type")).value_or(0),
                               integer_of(arg_text(event, "Device Id")).value_or(-1)});
        return;
    }
    if (event.ph != "X")
        return;
    // A range's gpu_user_annotation twin misses what other threads launched (gpu_launches.hpp).
    if (event.cat == "gpu_user_annotation" || file.gpu.keep(event))
        return;
    std::string thread = fmt::format("{}/{}", event.pid_text, event.tid_text);
    if (is_action_range(event.name)) {
        check_range_times(file.path, event);
        file.cpu_ranges.push_back({std::string(event.name), event.ts_ns,
                                   event.ts_ns + std::max<std::int64_t>(event.dur_ns, 0),
                                   std::move(thread), event.offset});
        if (file.cpu_ranges.size() == 1)
            file.stage_operators = {};
        return;
    }
    if (is_profiler_step_name(event.name)) {
        check_range_times(file.path, event, "a training step's bounds (torch.profiler's step())");
        file.profiler_steps.push_back({std::string(event.name), event.ts_ns,
                                       event.ts_ns + std::max<std::int64_t>(event.dur_ns, 0),
                                       std::move(thread), event.offset});
        return;
    }
    if (event.name == "record_param_comms") {
        if (const auto kind = comm_kind_of(arg_text(event, "Collective name")))
            file.recorded_comm.push_back(comm_call(event, *kind, std::move(thread)));
        return;
    }
    for (const auto& [prefix, kind] : {std::pair{std::string_view("nccl:send"), CommKind::send},
                                       std::pair{std::string_view("gloo:send"), CommKind::send},
                                       std::pair{std::string_view("nccl:recv"), CommKind::recv},
                                       std::pair{std::string_view("gloo:recv"), CommKind::recv}})
        if (event.name.substr(0, prefix.size()) == prefix) {
            file.named_comm.push_back(comm_call(event, kind, std::move(thread)));
            return;
        }
    if (is_wait_op(event.name))
        file.named_comm.push_back(comm_call(event, CommKind::wait, std::move(thread)));
}

void move_to_epoch(RankFile& file, const ChromeTraceHeader& header) {
    if (!header.base_time_ns)
        return;
    const std::int64_t base = *header.base_time_ns;
    check_base_time(file.path, base);
    auto shift = [base](std::int64_t& time) {
        if (time < base)  // Kineto's newer files: ts relative to baseTimeNanoseconds
            time += base;
    };
    for (auto* ranges : {&file.cpu_ranges, &file.profiler_steps})
        for (Range& range : *ranges) {
            const std::int64_t length = range.end_ns - range.start_ns;
            shift(range.start_ns);
            range.end_ns = range.start_ns + length;
        }
    file.gpu.shift_times(shift);
    for (auto* calls : {&file.recorded_comm, &file.named_comm})
        for (CommCall& call : *calls) {
            const std::int64_t length = call.end_ns - call.start_ns;
            shift(call.start_ns);
            call.end_ns = call.start_ns + length;
        }
    for (MemorySample& sample : file.memory)
        shift(sample.time_ns);
    for (StageOp& op : file.stage_operators.ops) {
        const std::int64_t length = op.end_ns - op.start_ns;
        shift(op.start_ns);
        op.end_ns = op.start_ns + length;
    }
    for (AutogradFlow& flow : file.stage_operators.flows)
        shift(flow.ts_ns);
}

}  // namespace

RankFile read_rank_file(const std::string& path) {
    RankFile file;
    file.path = path;
    const ChromeTraceHeader header =
        read_chrome_trace(path, [&file](const ChromeEvent& event) { keep_event(file, event); });
    file.rank = header.rank ? header.rank : rank_from_file_name(path);
    file.world_size = header.world_size;
    file.groups = header.process_groups;
    move_to_epoch(file, header);
    file.gpu.finish();
    for (const CommCall& call : file.named_comm)
        if (call.kind == CommKind::recv)
            file.receive_transfers.push_back({call.start_ns, call.end_ns, call.thread});
    if (file.recorded_comm.empty())  // older traces: only the process group's own ranges
        file.recorded_comm = std::move(file.named_comm);
    else  // waits are never record_param_comms in some versions: keep the named ones
        for (CommCall& call : file.named_comm)
            if (call.kind == CommKind::wait)
                file.recorded_comm.push_back(std::move(call));
    auto by_start = [](const auto& left, const auto& right) {
        return left.start_ns < right.start_ns;
    };
    std::sort(file.cpu_ranges.begin(), file.cpu_ranges.end(), by_start);
    std::sort(file.profiler_steps.begin(), file.profiler_steps.end(), by_start);
    std::stable_sort(file.memory.begin(), file.memory.end(),
                     [](const MemorySample& left, const MemorySample& right) {
                         return left.time_ns < right.time_ns;
                     });
    std::sort(file.recorded_comm.begin(), file.recorded_comm.end(), by_start);
    std::stable_sort(file.receive_transfers.begin(), file.receive_transfers.end(), by_start);
    return file;
}

}  // namespace pipelens::import
