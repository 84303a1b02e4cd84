// Building a run from PyTorch profiler traces: each rank's file read once (profiler_rank_file),
// its ranges (or, for a single-stage schedule, its operators) turned into actions, the ranks
// put in pipeline order and their clocks aligned.
//
// One rule times every action, whichever way it was read: the GPU work launched while its CPU
// span ran, where there is any (time_on_gpu, gpu_launches.hpp), else that CPU span.
#include "engine/import/pytorch_profiler.hpp"

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "engine/import/clock_alignment.hpp"
#include "engine/import/gpu_launches.hpp"
#include "engine/import/pipeline_ranks.hpp"
#include "engine/import/profiler_rank_file.hpp"
#include "engine/import/profiler_steps.hpp"
#include "engine/import/receive_arrival.hpp"
#include "engine/import/schedule_recovery.hpp"
#include "engine/import/single_stage_profile.hpp"
#include "engine/run_record/parallel_for.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/text/shortened.hpp"

namespace pipelens::import {
namespace {

// ---- From ranges to actions ----

struct BuiltAction {
    Action action;
    ImportedTiming timing;
    bool on_gpu = false;
    std::int64_t waited_until_ns = -1;   // compute: when its leading waits for inputs ended
    bool arrival_from_transfer = false;  // RECV: its end is its transfer span's (receive_arrival)
};

struct RankBuild {
    std::vector<BuiltAction> actions;
    int gpu_timed = 0;
    int cpu_timed = 0;
    int waits_separated = 0;
    std::int64_t waited_ns = 0;
};

// The communication calls on `range`'s thread inside it.
std::vector<const CommCall*> nested_calls(const RankFile& file, const Range& range) {
    std::vector<const CommCall*> calls;
    auto at = std::lower_bound(
        file.recorded_comm.begin(), file.recorded_comm.end(), range.start_ns,
        [](const CommCall& call, std::int64_t start) { return call.start_ns < start; });
    for (; at != file.recorded_comm.end() && at->start_ns <= range.end_ns; ++at)
        if (at->end_ns <= range.end_ns && at->thread == range.thread)
            calls.push_back(&*at);
    return calls;
}

// Where a compute range's own work starts: after the waits (or blocking receives) that begin
// in its first half, which are it waiting for inputs.
std::int64_t compute_start(const Range& range, const std::vector<const CommCall*>& calls) {
    const std::int64_t middle = range.start_ns + (range.end_ns - range.start_ns) / 2;
    std::int64_t start = range.start_ns;
    for (const CommCall* call : calls)
        if (call->kind != CommKind::send && call->start_ns < middle)
            start = std::max(start, call->end_ns);
    return start;
}

std::int64_t bytes_of(const std::vector<const CommCall*>& calls, CommKind kind) {
    std::int64_t bytes = -1;
    for (const CommCall* call : calls)
        if (call->kind == kind && call->bytes >= 0)
            bytes = std::max<std::int64_t>(bytes, 0) + call->bytes;
    return bytes;
}

bool is_receive(const BuiltAction& action) {
    return action.action.kind == ActionKind::recv_forward ||
           action.action.kind == ActionKind::recv_backward;
}

// The rule that times every action (top of this file): the GPU work launched from `from_ns` to
// `to_ns`, the CPU span the action was read from, where there is any. Says whether there was.
bool time_on_gpu(BuiltAction& action, const GpuLaunches& gpu, std::int64_t from_ns,
                 std::int64_t to_ns) {
    const std::optional<GpuSpan> span = gpu.work_launched(from_ns, to_ns);
    if (!span)
        return false;
    action.timing.start_ns = span->start_ns;
    action.timing.end_ns = span->end_ns;
    action.on_gpu = true;
    return true;
}

// Keeps `action`, counted as GPU- or CPU-timed; a CPU-timed one's wait for inputs since its
// range began at `range_start_ns` is counted as separated out.
void add_timed(RankBuild& build, const BuiltAction& action, std::int64_t range_start_ns) {
    if (action.on_gpu) {
        ++build.gpu_timed;
    } else {
        ++build.cpu_timed;
        if (action.waited_until_ns > range_start_ns) {
            ++build.waits_separated;
            build.waited_ns += action.waited_until_ns - range_start_ns;
        }
    }
    build.actions.push_back(action);
}

Action parse_range_action(const RankFile& file, const Range& range, std::vector<Action>& parts) {
    try {
        return parse_action(std::string_view(range.name).substr(3), parts);
    } catch (const ActionParseError& error) {
        throw ImportError(fmt::format("{}: byte {}: range \"{}\" is not a pipeline action: {}",
                                      file.path, range.offset, shown_text(range.name, 80),
                                      error.what()));
    }
}

// A RECV range only posts the receive; it ends, as an action, when its data arrived
// (receive_arrival.hpp), as a single-stage schedule's receive does. RECV is no computation, so
// this moves no busy time; it only says when the input was there.
void end_at_arrival(const RankFile& file, const Range& range, BuiltAction& recv) {
    if (const auto arrival =
            receive_arrival(file.receive_transfers, {range.start_ns, range.end_ns, range.thread})) {
        recv.timing.end_ns = *arrival;
        recv.arrival_from_transfer = true;
    }
}

// PyTorch's runtime: one range per action, compute and communication alike.
void build_runtime_actions(const RankFile& file, const RankSteps& steps, int step,
                           std::vector<Action>& parts, RankBuild& build) {
    for (std::size_t index = 0; index < file.cpu_ranges.size(); ++index) {
        const Range& range = file.cpu_ranges[index];
        if (steps.of_range[index] != step || !is_runtime_name(range.name))
            continue;
        BuiltAction built{
            parse_range_action(file, range, parts), {range.start_ns, range.end_ns, -1}, false, -1};
        const std::vector<const CommCall*> calls = nested_calls(file, range);
        if (is_compute(built.action.kind)) {
            built.timing.start_ns = compute_start(range, calls);
            if (built.timing.start_ns > range.start_ns)  // it waited for an input
                built.waited_until_ns = built.timing.start_ns;
        } else if (is_communication(built.action.kind)) {
            const bool sends = built.action.kind == ActionKind::send_forward ||
                               built.action.kind == ActionKind::send_backward;
            built.timing.bytes = bytes_of(calls, sends ? CommKind::send : CommKind::recv);
        }
        if (!time_on_gpu(built, file.gpu, range.start_ns, range.end_ns) && is_receive(built))
            end_at_arrival(file, range, built);
        add_timed(build, built, range.start_ns);
    }
}

// Whether `consumer` is the computation that takes `recv`'s data: a forward takes RECV_F's, an
// input or full backward RECV_B's, of the same stage and microbatch (inside an OVERLAP_F_B, one
// of its parts).
bool consumes(const BuiltAction& consumer, const BuiltAction& recv,
              const std::vector<Action>& parts) {
    if (!is_compute(consumer.action.kind))
        return false;
    std::span<const Action> consumed{&consumer.action, 1};
    if (consumer.action.kind == ActionKind::overlap_forward_backward)
        consumed = {parts.data() + consumer.action.link, consumer.action.part_count};
    const ActionKind kind = recv.action.kind;
    return std::any_of(consumed.begin(), consumed.end(), [&](const Action& part) {
        const bool right_kind =
            kind == ActionKind::recv_forward
                ? part.kind == ActionKind::forward
                : part.kind == ActionKind::backward_input || part.kind == ActionKind::full_backward;
        return right_kind && part.stage == recv.action.stage &&
               part.microbatch == recv.action.microbatch;
    });
}

// The first computation at or after `recv`'s start that consumes its data, or null.
BuiltAction* consumer_of(RankBuild& build, const BuiltAction& recv,
                         const std::vector<Action>& parts) {
    for (BuiltAction& consumer : build.actions)
        if (consumer.timing.start_ns >= recv.timing.start_ns && consumes(consumer, recv, parts))
            return &consumer;
    return nullptr;
}

// Receives and the computations that wait for them, on CPU-timed ranks. A RECV whose trace has
// no transfer span of it is only posted in its range: its data arrived when the action that
// consumes it stopped waiting. One that has one ends at the arrival (end_at_arrival), and its
// consumer, which PyTorch starts before it waits for its input (the wait is inside the
// consumer's range and leaves no trace), starts computing only then: the time before is a wait,
// shown as a bubble like the recorded waits (add_timed), not as busy.
void pair_receives_with_consumers(RankBuild& build, const std::vector<Action>& parts) {
    for (BuiltAction& recv : build.actions) {
        if (recv.on_gpu || !is_receive(recv))
            continue;
        BuiltAction* consumer = consumer_of(build, recv, parts);
        if (consumer == nullptr)
            continue;
        if (!recv.arrival_from_transfer) {
            recv.timing.end_ns = std::max(recv.timing.end_ns, consumer->waited_until_ns);
            continue;
        }
        if (consumer->on_gpu || recv.timing.end_ns <= consumer->timing.start_ns ||
            recv.timing.end_ns >= consumer->timing.end_ns)
            continue;
        if (consumer->waited_until_ns < 0)
            ++build.waits_separated;
        build.waited_ns += recv.timing.end_ns - consumer->timing.start_ns;
        consumer->timing.start_ns = recv.timing.end_ns;
        consumer->waited_until_ns = recv.timing.end_ns;
    }
}

// GPipe's loop: `Forward i` / `Backward i` hold receive, compute and send of microbatch i on
// the rank's one stage (stage = rank).
void build_gpipe_actions(const RankFile& file, int rank, const RankSteps& steps, int step,
                         RankBuild& build) {
    for (std::size_t index = 0; index < file.cpu_ranges.size(); ++index) {
        const Range& range = file.cpu_ranges[index];
        if (steps.of_range[index] != step || !is_gpipe_name(range.name))
            continue;
        const bool forward = range.name[0] == 'F';
        const int microbatch = std::stoi(range.name.substr(range.name.find(' ') + 1));
        const std::vector<const CommCall*> calls = nested_calls(file, range);
        const std::int64_t start = compute_start(range, calls);
        std::int64_t end = range.end_ns;
        std::int64_t first_recv = -1;
        for (const CommCall* call : calls) {
            if (call->kind == CommKind::recv && call->start_ns < start && first_recv < 0)
                first_recv = call->start_ns;
            if (call->kind == CommKind::send && call->start_ns >= start) {
                end = std::min(end, call->start_ns);
                BuiltAction send{
                    make_action(rank,
                                forward ? ActionKind::send_forward : ActionKind::send_backward,
                                microbatch),
                    {call->start_ns, call->end_ns, call->bytes},
                    false,
                    -1};
                time_on_gpu(send, file.gpu, call->start_ns, call->end_ns);
                add_timed(build, send, call->start_ns);
            }
        }
        if (first_recv >= 0) {
            BuiltAction recv{
                make_action(rank, forward ? ActionKind::recv_forward : ActionKind::recv_backward,
                            microbatch),
                {first_recv, start, bytes_of(calls, CommKind::recv)},
                false,
                -1};
            time_on_gpu(recv, file.gpu, first_recv, start);
            add_timed(build, recv, first_recv);
        }
        BuiltAction compute{
            make_action(rank, forward ? ActionKind::forward : ActionKind::full_backward,
                        microbatch),
            {start, std::max(start, end), -1},
            false,
            start};
        time_on_gpu(compute, file.gpu, start, std::max(start, end));
        add_timed(build, compute, range.start_ns);
    }
}

// Each rank's file is streamed on a worker of its own (as many at once as there are cores):
// files are independent, and one core tokenizes about a million events a second. The first
// failure in file order is the one reported, and no later file is started after it.
std::vector<RankFile> read_files_in_parallel(const std::vector<std::string>& paths) {
    std::vector<RankFile> files(paths.size());
    run_record::parallel_for(
        paths.size(), 0, [&](std::size_t index) { files[index] = read_rank_file(paths[index]); });
    return files;
}

ImportError no_action_ranges(const RankFile& file, std::string_view nor) {
    return ImportError(fmt::format(
        "{}: no pipeline action ranges among the {} events of {}{} "
        "(torch.distributed.pipelining marks each action as a \"PP:<action>\" range, "
        "GPipe's loop as \"Forward i\" / \"Backward i\"; a single-stage schedule, which marks "
        "none, is read from its operators when every rank's trace holds its c10d::send/recv_ "
        "calls); was the profiled code a pipelining schedule's step()?",
        file.path, file.events, file.who, nor));
}

// Every file lacks action ranges and holds point-to-point posts: a single-stage schedule's step.
bool single_stage_traces(const std::vector<RankFile>& files) {
    return std::all_of(files.begin(), files.end(), [](const RankFile& file) {
        return file.cpu_ranges.empty() && file.stage_operators.has_point_to_point();
    });
}

// The files in pipeline order (pipeline_ranks.hpp), each knowing its global rank.
// Traces of different jobs mixed: their ranks and actions would be matched as one run's and
// fail, if at all, on whatever came out wrong first.
void refuse_different_jobs(const std::vector<RankFile>& files) {
    const RankFile* sized = nullptr;
    for (const RankFile& file : files) {
        if (!file.world_size)
            continue;
        if (file.rank && *file.rank >= *file.world_size)
            throw ImportError(fmt::format(
                "{}: rank {} cannot be in a job of {} ranks (distributedInfo.world_size: ranks "
                "0 to {}); the file is damaged, or its rank was read from its name",
                file.path, *file.rank, *file.world_size, *file.world_size - 1));
        if (sized != nullptr && *sized->world_size != *file.world_size)
            throw ImportError(
                fmt::format("{} was written by a job of {} ranks and {} by one of {} "
                            "(distributedInfo.world_size): give the traces of one run",
                            sized->path, *sized->world_size, file.path, *file.world_size));
        sized = &file;
    }
}

// A single-stage schedule's stage is its rank's place in the pipeline, so a file left out
// shifts every later stage down one: global ranks 0, 1, 3 of 4 paired rank 1's sends (to 2) with
// rank 3's receives (from 2). Unless a process group of exactly these ranks says they are the
// whole pipeline, they must be the whole job.
void refuse_part_of_a_single_stage_pipeline(const std::vector<RankFile>& files,
                                            const PipelineRanks& ranks) {
    const auto sized = std::find_if(files.begin(), files.end(), [](const RankFile& file) {
        return file.world_size.has_value();
    });
    if (ranks.group || sized == files.end() || *sized->world_size == static_cast<int>(files.size()))
        return;
    throw ImportError(fmt::format(
        "{} single-stage traces (global ranks {}) of a job of {} ranks: a single-stage "
        "schedule's stages are its ranks in order, and no process group of exactly these ranks "
        "says they are the whole pipeline; give every pipeline rank's trace",
        files.size(), fmt::join(ranks.global_ranks, ", "), *sized->world_size));
}

std::vector<RankFile> read_files(const std::vector<std::string>& paths, PipelineRanks& ranks) {
    std::vector<RankFile> files = read_files_in_parallel(paths);
    refuse_different_jobs(files);
    std::vector<RankSource> sources;
    std::vector<std::string> paths_without_rank;
    for (const RankFile& file : files) {
        sources.push_back({file.path, file.rank, file.groups});
        if (!file.rank)
            paths_without_rank.push_back(file.path);
    }
    ranks = pipeline_ranks(sources);
    std::vector<RankFile> ordered;
    for (std::size_t pipeline_rank = 0; pipeline_rank < ranks.order.size(); ++pipeline_rank) {
        ordered.push_back(std::move(files[ranks.order[pipeline_rank]]));
        ordered.back().rank = ranks.global_ranks[pipeline_rank];
    }
    for (RankFile& file : ordered)
        file.who = paths_without_rank.empty() ? fmt::format("global rank {}", *file.rank)
                                              : std::string("its one rank (the trace names none)");
    if (single_stage_traces(ordered)) {
        refuse_part_of_a_single_stage_pipeline(ordered, ranks);
        return ordered;
    }
    for (const RankFile& file : ordered)
        if (file.cpu_ranges.empty())
            throw no_action_ranges(file, "");
    return ordered;
}

// Single-stage schedules mark no actions: each rank's are read from the operators step `step`
// ran, and every rank must show the same number of microbatches (the most any rank's forwards
// show).
std::vector<StageRecovery> recover_single_stage(const std::vector<RankFile>& files,
                                                const std::vector<RankSteps>& steps, int step) {
    std::vector<StageRecovery> recovered;
    int microbatches = 0;
    for (std::size_t rank = 0; rank < files.size(); ++rank) {
        recovered.push_back(recover_stage_actions(step_operators(files[rank], steps[rank], step),
                                                  static_cast<int>(rank)));
        const auto& actions = recovered.back().actions;
        microbatches = std::max(
            microbatches,
            static_cast<int>(std::count_if(actions.begin(), actions.end(), [](const Action& a) {
                return a.kind == ActionKind::forward;
            })));
    }
    if (microbatches == 0)
        throw no_action_ranges(files.front(),
                               ", nor a forward among its operators (none "
                               "recorded an autograd node)");
    for (std::size_t rank = 0; rank < files.size(); ++rank)
        check_single_stage(recovered[rank], static_cast<int>(rank), static_cast<int>(files.size()),
                           microbatches, files[rank].path, files[rank].who);
    return recovered;
}

void add_recovered(RankBuild& build, const StageRecovery& recovered, const GpuLaunches& gpu) {
    for (std::size_t index = 0; index < recovered.actions.size(); ++index) {
        const ImportedTiming& cpu = recovered.timings[index];
        BuiltAction action{recovered.actions[index], cpu, false, -1};
        time_on_gpu(action, gpu, cpu.start_ns, cpu.end_ns);
        add_timed(build, action, cpu.start_ns);
    }
}

void add_notes(ImportedRun& run, const std::vector<RankBuild>& builds, int step, int steps,
               const ClockAlignment& clocks) {
    int gpu = 0;
    int cpu = 0;
    int waits = 0;
    std::int64_t waited = 0;
    for (const RankBuild& build : builds) {
        gpu += build.gpu_timed;
        cpu += build.cpu_timed;
        waits += build.waits_separated;
        waited += build.waited_ns;
    }
    run.notes.push_back(fmt::format("step {} of {} in the traces imported", step, steps));
    run.notes.push_back(
        gpu == 0
            ? fmt::format("times are CPU ranges: the traces hold no GPU work launched in one ({} "
                          "actions)",
                          cpu)
            : fmt::format("{} actions timed on the GPU (the kernels and copies launched "
                          "while their CPU range ran, on any thread), {} by their CPU range",
                          gpu, cpu));
    if (waits > 0)
        run.notes.push_back(fmt::format(
            "{} waits for inputs inside compute ranges ({} in all) separated out: they show as "
            "bubbles and end the RECV waited for",
            waits, duration_text(waited)));
    run.notes.push_back(clock_alignment_note(clocks));
}

}  // namespace

}  // namespace pipelens::import

namespace pipelens::import {

ImportedRun read_pytorch_profiler(const std::vector<std::string>& files,
                                  const ProfilerImportOptions& options) {
    PipelineRanks pipeline;
    std::vector<RankFile> ranks = read_files(files, pipeline);
    std::vector<std::string> file_notes = trim_step_edges(ranks);
    const bool single_stage = single_stage_traces(ranks);
    std::vector<RankSteps> per_rank_steps;
    for (const RankFile& file : ranks)
        per_rank_steps.push_back(rank_steps(file));
    const std::vector<std::string> aligned = align_profiler_steps(ranks, per_rank_steps);
    file_notes.insert(file_notes.end(), aligned.begin(), aligned.end());
    const int steps = common_steps(per_rank_steps);
    const std::string uneven = uneven_steps(ranks, per_rank_steps);
    const int step = chosen_step(steps, options.step, uneven);
    const std::vector<std::string> step_notes = profiler_step_notes(ranks, per_rank_steps, step);
    file_notes.insert(file_notes.begin(), step_notes.begin(), step_notes.end());
    const std::vector<StageRecovery> recovered =
        single_stage ? recover_single_stage(ranks, per_rank_steps, step)
                     : std::vector<StageRecovery>{};
    ImportedRun run;
    run.format = "pytorch-profiler";
    run.global_ranks = pipeline.global_ranks;
    run.schedule.ranks.resize(ranks.size());
    run.timings.resize(ranks.size());
    run.memory.resize(ranks.size());
    std::vector<RankBuild> builds(ranks.size());
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        const RankFile& file = ranks[rank];
        run.sources.push_back(file.path);
        RankBuild& build = builds[rank];
        const bool runtime_ranges =
            std::any_of(file.cpu_ranges.begin(), file.cpu_ranges.end(),
                        [](const Range& range) { return is_runtime_name(range.name); });
        if (single_stage)
            add_recovered(build, recovered[rank], file.gpu);
        else if (runtime_ranges)
            build_runtime_actions(file, per_rank_steps[rank], step, run.schedule.parts, build);
        else
            build_gpipe_actions(file, static_cast<int>(rank), per_rank_steps[rank], step, build);
        pair_receives_with_consumers(build, run.schedule.parts);
        std::stable_sort(build.actions.begin(), build.actions.end(),
                         [](const BuiltAction& left, const BuiltAction& right) {
                             return left.timing.start_ns < right.timing.start_ns;
                         });
        for (const BuiltAction& action : build.actions) {
            run.schedule.ranks[rank].push_back(action.action);
            run.timings[rank].push_back(action.timing);
        }
        RankMemory memory = rank_memory(file.memory, file.gpu.operations_by_device(),
                                        step_window(file, per_rank_steps[rank], step),
                                        fmt::format("{} ({})", file.path, file.who));
        run.memory[rank] = std::move(memory.points);
        if (!memory.note.empty())
            file_notes.push_back(std::move(memory.note));
        for (traces::MemoryRecord& point : run.memory[rank])
            point.rank = static_cast<std::int32_t>(rank);
    }
    const std::string source =
        files.size() == 1 ? files.front() : fmt::format("{} traces", files.size());
    std::vector<std::string> rank_names;
    for (std::size_t rank = 0; rank < ranks.size(); ++rank)
        rank_names.push_back(
            fmt::format("rank {} = {} ({})", rank, ranks[rank].path, ranks[rank].who));
    infer_shape(run.schedule, source, rank_names);
    const std::vector<ScheduleKind> kinds = recognise_schedules(run.schedule);
    run.schedule.name = kinds.empty() ? "imported" : std::string(schedule_kind_name(kinds.front()));
    link_send_recv_pairs(run.schedule);
    const ClockAlignment clocks = align_clocks(run);
    add_notes(run, builds, step, steps, clocks);
    // Step k of each file is taken as one training step; files that cover different numbers of
    // steps may not start at the same one, which nothing in them says.
    if (!uneven.empty())
        run.notes.push_back(fmt::format(
            "the traces hold different numbers of steps ({}): step {} of each was imported as "
            "one step; if their profiles did not start at the same step, import traces of the "
            "same window",
            uneven, step));
    if (std::string note = coinciding_kinds_note(kinds); !note.empty())
        run.notes.push_back(std::move(note));
    run.notes.insert(run.notes.end(), file_notes.begin(), file_notes.end());
    if (single_stage)
        run.notes.insert(
            run.notes.begin(),
            "no \"PP:\" ranges: a single-stage schedule's actions read from its operators "
            "(F: those that recorded autograd nodes; B: the autograd engine's evaluate_function "
            "ranges; SEND/RECV: c10d::send/recv_), microbatches in the order they ran");
    if (std::string note = pipeline_ranks_note(pipeline); !note.empty())
        run.notes.insert(run.notes.begin(), std::move(note));
    return run;
}

}  // namespace pipelens::import
