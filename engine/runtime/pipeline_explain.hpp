// `pipelens explain`: what a pipeline is made of before it runs, the analogue of upstream's
// ExplainOutput for a pipeline: how many stages and why the model was split where it was, the
// ops each stage runs (captured while one microbatch goes through it) and their count, the
// parameters per stage, the tensor metadata at every boundary, and the schedule's static check.
// Torch-free interface; the capture itself runs LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/runtime/pipeline_run.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/tensor/tensor_meta.hpp"

namespace pipelens::runtime {

struct StageExplanation {
    int stage = 0;
    int rank = 0;
    std::vector<std::string> layers;
    std::vector<TensorMeta> inputs;
    std::vector<TensorMeta> outputs;
    std::int64_t parameter_count = 0;  // elements
    std::vector<std::string> ops;      // top-level ATen ops of one forward, in order
};

struct PipelineExplanation {
    std::string model;
    int stage_count = 0;
    std::string split_policy;  // "even: 8 layers over 4 stages" or the split points given
    std::vector<StageExplanation> stages;
    std::int64_t op_count = 0;
    std::int64_t parameter_count = 0;
    std::string schedule;      // "1F1B pp=4 v=1 m=8"
    std::string static_check;  // "ok", or the check's or dry run's report
};

PipelineExplanation explain_pipeline(const run_record::PipelineRunOptions& options,
                                     const Schedule& lowered);

// Why each stage after the first is a graph of its own: "pipeline split: stage 1 (rank 1)
// begins at layers.2", one per stage boundary, as ExplainOutput's break reasons.
std::vector<std::string> break_reasons(const PipelineExplanation& explanation);

// The text form: upstream's ExplainOutput layout first (Graph Count, Graph Break Count, Op
// Count, Break Reasons, Ops per Graph; a stage is a graph), then the pipeline's own facts.
std::string format_explanation(const PipelineExplanation& explanation);

}  // namespace pipelens::runtime
