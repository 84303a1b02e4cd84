// One rank executing its lowered actions for one training step: F, I, W, B and OVERLAP_F_B on
// its stages, SEND/RECV over the transport, loss on the last stage. Every action is timed
// (steady clock, ns from the step's common start), stage 0's inputs and every stage's outputs
// are checked against the metadata shape inference fixed, and the first failure stops the rank
// and aborts the others through the transport, so no rank is left waiting.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/run_record/faults.hpp"
#include "engine/runtime/device_timing.hpp"
#include "engine/runtime/memory_account.hpp"
#include "engine/runtime/pipeline_run.hpp"
#include "engine/runtime/pipeline_stage.hpp"
#include "engine/runtime/transport.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens::runtime {

struct RankPlan {
    int rank = 0;
    const Schedule* lowered = nullptr;
    std::map<int, std::unique_ptr<PipelineStage>> stages;  // this rank's, by stage index
    std::vector<StageMeta> stage_meta;                     // every stage's, by index
    std::vector<TensorList> microbatch_inputs;  // stage 0's, when this rank holds stage 0
    std::vector<torch::Tensor> targets;         // the last stage's, when this rank holds it
    std::vector<run_record::Fault> faults;
    std::chrono::milliseconds timeout{10'000};
    int tag_offset = 0;  // added to every pair id: steps must not reuse each other's tags
    // The account this rank's tensors are charged to while the step runs; none: no memory is
    // recorded.
    MemoryAccount* memory = nullptr;
    c10::Device device = c10::kCPU;  // where its stages compute: receive buffers go there
    // A GPU's memory (the caching allocator's), sampled at each action like `memory`; none on
    // the CPU, where `memory` counts the rank's tensors.
    DeviceMemory* device_memory = nullptr;
    // Marks each action's work "PP:<action>" for LibTorch's profiler (while one is recording).
    bool mark_actions = false;
};

struct TimedAction {
    int step = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

struct RankOutcome {
    int rank = 0;
    std::vector<TimedAction> timeline;  // the actions that ran, in order
    // Tensor bytes the rank held: at every action's start and end, and at the high-water mark
    // inside it where that is higher; on the same clock as the timeline.
    std::vector<run_record::MemoryPoint> memory;
    std::int64_t peak_memory_bytes = 0;
    std::optional<run_record::RunFailure> failure;
    std::optional<std::chrono::steady_clock::time_point> epoch;  // the step's time zero
};

// Runs the step. `epoch` is the common time zero of all ranks' timelines.
RankOutcome execute_rank(RankPlan& plan, Transport& transport,
                         std::chrono::steady_clock::time_point epoch);

}  // namespace pipelens::runtime
