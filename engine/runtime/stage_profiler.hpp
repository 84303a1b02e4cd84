// `run --profile`, compute side: on each rank, after the measured step, the rank's own stages
// and each of their model layers are timed action by action (F, I, W and B alone, and
// OVERLAP_F_B as the executor runs it), with the memory each keeps per microbatch. It measures
// stages and layers, never a schedule's actions, so what it finds does not depend on the
// schedule that will later be simulated with it. Every rank profiles at the same time (after a
// barrier): cores and caches are shared as in a real step.
//
// Invariants: the stages are left reset (no microbatch state, no gradients); a layer is timed
// as a stage of its own with the stage's backend, never as the last stage (no loss), so
// "stage minus its layers" is the per-stage overhead plus, on the last stage, the loss.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <vector>

#include "engine/run_record/run_result.hpp"
#include "engine/runtime/model_library.hpp"
#include "engine/runtime/pipeline_stage.hpp"
#include "engine/stage_plan/stage_split.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::runtime {

// What one rank may spend timing its stages and layers (links come on top): `--profile` must
// add at most a few seconds to a run.
inline constexpr std::chrono::milliseconds kStageProfileBudget{1500};

// The `layer` of a whole stage's figures, and of the last stage's loss timed on its own: the
// trace's codes (traces/trace_records.hpp).
inline constexpr int kWholeStage = traces::kProfileWholeStage;
inline constexpr int kLossLayer = traces::kProfileLoss;

struct StageProfileInput {
    int rank = 0;
    std::map<int, std::unique_ptr<PipelineStage>>* stages = nullptr;  // the rank's, by index
    const PipelineModel* model = nullptr;
    const std::vector<StageLayers>* split = nullptr;  // every stage's layers
    TensorList first_stage_inputs;                    // microbatch 0's model inputs
    torch::Tensor last_stage_target;                  // microbatch 0's target
    c10::Device device = c10::kCPU;                   // where the rank's stages compute
    std::chrono::nanoseconds budget{std::chrono::milliseconds(2000)};
};

std::vector<run_record::ProfileFigure> profile_stages(const StageProfileInput& input);

}  // namespace pipelens::runtime
