// One rank's PyTorch profiler trace as the import keeps it: streamed once (chrome_trace_stream)
// and reduced to the action ranges, torch.profiler's ProfilerStep#N ranges, the communication
// the profiler recorded, memory samples and the GPU work with its launches (40 bytes a kernel).
// Everything else (operator ranges, flows, annotations) is dropped as it streams past, so memory
// stays proportional to the pipeline's actions and kernels, not to the trace's text; only a trace
// that marks no action keeps the few kinds of operator a single-stage schedule is read from
// (single_stage_profile.hpp), and drops them at its first action range.
//
// Invariants: times are on the epoch (Kineto's relative times shifted by baseTimeNanoseconds);
// ranges (action and ProfilerStep), recorded communication and receive transfers are sorted by
// start; the GPU launches
// are finished (gpu_launches.hpp); a time that could wrap round int64 is refused while reading
// (profiler_event_times.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/import/chrome_trace_stream.hpp"
#include "engine/import/gpu_launches.hpp"
#include "engine/import/profiler_memory.hpp"
#include "engine/import/receive_arrival.hpp"
#include "engine/import/single_stage_profile.hpp"

namespace pipelens::import {

enum class CommKind { send, recv, wait };

struct Range {
    std::string name;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::string thread;  // "pid/tid": nesting is only within one thread
    std::uint64_t offset = 0;
};

struct CommCall {
    CommKind kind = CommKind::wait;
    std::int64_t bytes = -1;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::string thread;
};

struct RankFile {
    std::string path;
    std::optional<int> rank;  // the global rank: distributedInfo.rank, else from the file name
    std::optional<int> world_size;  // distributedInfo.world_size
    std::vector<ProcessGroupInfo> groups;
    std::vector<Range> cpu_ranges;             // PP:... and Forward i / Backward i
    std::vector<Range> profiler_steps;         // ProfilerStep#N: torch.profiler's steps
    GpuLaunches gpu;                           // kernels and copies, and when they were launched
    std::vector<CommCall> recorded_comm;       // record_param_comms
    std::vector<CommCall> named_comm;          // nccl:/gloo: send and recv ranges (fallback)
    std::vector<TimedSpan> receive_transfers;  // nccl:/gloo: recv ranges by start: arrivals
    std::vector<MemorySample> memory;          // [memory] samples of every device, by time
    StageOperators stage_operators;  // for a trace without action ranges (single_stage_profile)
    std::uint64_t events = 0;
    std::string who;  // "global rank 3", for messages
};

// "Forward 3" / "Backward 3": GPipe's loop's ranges.
bool is_gpipe_name(std::string_view name);
// "ProfilerStep#12": the range torch.profiler's step() opens for each step when the profile has
// a schedule (record_steps), from one step() call to the next.
bool is_profiler_step_name(std::string_view name);
// "PP:1F0": a range PyTorch's pipelining runtime marks an action with.
inline bool is_runtime_name(std::string_view name) {
    return name.starts_with("PP:");
}

// Streams `path` once; throws ImportError naming the file and byte of what cannot be read.
RankFile read_rank_file(const std::string& path);

}  // namespace pipelens::import
