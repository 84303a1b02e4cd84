// PyTorch profiler traces (Chrome/Kineto JSON, plain or gzip, one file per rank) as a pipelens
// run. torch.distributed.pipelining's runtime wraps every action it executes in a
// `PP:<action>` range (`PP:0F1`, `PP:1SEND_F0`, `PP:(0F2;3B0)OVERLAP_F_B`); its GPipe loop wraps
// receive, compute and send of microbatch i in `Forward i` / `Backward i`. Those ranges become
// Action IR; an action that launched GPU work is timed by that work (from its first kernel to its
// last, launched on any thread while its range ran: gpu_launches.hpp), else by its CPU range,
// and the run's notes count which.
//
// What a range contains is separated out: a compute range that first waits for its inputs
// (PyTorch waits for a RECV inside the consuming action) starts, as an action, when the wait
// ends, and the wait becomes the end of the RECV it waited for, so waiting shows as a bubble,
// not as compute. A RECV range only posts the receive: the RECV ends when its data arrived, at
// the end of the process group's transfer span it began (receive_arrival.hpp), where the trace
// has one. Communication is found by the profiler's own records of it
// (`record_param_comms` with its "Collective name", "Dst Rank"/"Src Rank", message size and
// dtype; `nccl:`/`gloo:` ranges where those are missing).
//
// Invariants: the files may be any set of global ranks, one file each (the rank from the
// trace's distributedInfo, else from the file name); they become pipeline ranks 0..n-1 in
// pipeline order (pipeline_ranks.hpp) and the run keeps each one's global rank; a trace with
// several steps imports one (`step`, default the last one every rank completed), the steps told
// apart by torch.profiler's ProfilerStep#N ranges where the trace has them (profiler_steps.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/import/imported_run.hpp"

namespace pipelens::import {

struct ProfilerImportOptions {
    std::optional<int> step;  // which occurrence of the actions (0 = first); default: the last
};

ImportedRun read_pytorch_profiler(const std::vector<std::string>& files,
                                  const ProfilerImportOptions& options = {});

}  // namespace pipelens::import
