// Real runs on LibTorch ranks (threads, `local` transport): for every schedule kind and every
// built-in model the pipelined loss, outputs and parameter gradients match the whole model run
// on one rank; split points move layers between stages; and each injected fault is reported
// with the upstream message on exactly the rank that detects it, the others stopping.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <torch/script.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "engine/recorder/state_replay.hpp"
#include "engine/run_record/run_trace.hpp"
#include "engine/runtime/pipeline_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::runtime {
namespace {

Schedule lowered(ScheduleKind kind, int pp, int v, int m) {
    return lower(generate_schedule({kind, pp, v, m}));
}

run_record::PipelineRunOptions options_for(const std::string& model) {
    run_record::PipelineRunOptions options;
    options.model = model;
    options.hidden = 16;
    options.sequence = 4;
    options.heads = 2;
    options.batch_size = 16;
    options.timeout_ms = 5'000;
    return options;
}

void expect_matches_reference(const run_record::PipelineRunResult& result) {
    ASSERT_TRUE(result.completed);
    for (const run_record::RankRun& rank : result.ranks)
        EXPECT_FALSE(rank.failure) << rank.failure->message;
    EXPECT_TRUE(result.reference.checked);
    EXPECT_TRUE(result.reference.outputs_match) << result.reference.output_max_error;
    EXPECT_TRUE(result.reference.gradients_match) << result.reference.gradient_max_error;
    EXPECT_NEAR(result.loss, result.reference.reference_loss, 1e-5);
    EXPECT_GT(result.step_time_ns, 0);
}

struct KindCase {
    ScheduleKind kind;
    int pp, v, m;
};

class EveryScheduleKind : public ::testing::TestWithParam<KindCase> {};

TEST_P(EveryScheduleKind, MlpMatchesTheSingleRankRun) {
    const KindCase shape = GetParam();
    const Schedule schedule = lowered(shape.kind, shape.pp, shape.v, shape.m);
    const run_record::PipelineRunResult result = run_pipeline(options_for("mlp"), schedule);
    expect_matches_reference(result);
    ASSERT_EQ(result.ranks.size(), static_cast<std::size_t>(shape.pp));
    for (const run_record::RankRun& rank : result.ranks)
        EXPECT_EQ(rank.timeline.size(), schedule.ranks[rank.rank].size());  // every action ran
}

INSTANTIATE_TEST_SUITE_P(Kinds, EveryScheduleKind,
                         ::testing::Values(KindCase{ScheduleKind::gpipe, 2, 1, 4},
                                           KindCase{ScheduleKind::one_f_one_b, 4, 1, 8},
                                           KindCase{ScheduleKind::interleaved_1f1b, 2, 2, 4},
                                           KindCase{ScheduleKind::looped_bfs, 2, 2, 4},
                                           KindCase{ScheduleKind::interleaved_zero_bubble, 2, 2, 4},
                                           KindCase{ScheduleKind::zbv_zero_bubble, 2, 2, 4},
                                           KindCase{ScheduleKind::dual_pipe_v, 2, 2, 4},
                                           KindCase{ScheduleKind::zero_bubble_h2, 3, 1, 8},
                                           KindCase{ScheduleKind::zero_bubble_auto, 3, 1, 8}),
                         [](const auto& info) {
                             return std::string(schedule_kind_name(info.param.kind));
                         });

// Deferred receives and a 2p zero-bubble order execute on real ranks like any other lowering.
TEST(PipelineRun, DeferredReceivesAndZeroBubbleTwoPMatchTheSingleRankRun) {
    LoweringOptions deferred;
    deferred.defer_receives = true;
    for (ScheduleKind kind : {ScheduleKind::interleaved_1f1b, ScheduleKind::zbv_zero_bubble}) {
        const Schedule schedule = lower(generate_schedule({kind, 2, 2, 4}), deferred);
        expect_matches_reference(run_pipeline(options_for("mlp"), schedule));
    }
    ScheduleShape two_p{ScheduleKind::zero_bubble_auto, 3, 1, 8};
    two_p.zero_bubble = {5, 6, 4, 1, 6};
    expect_matches_reference(
        run_pipeline(options_for("mlp"), lower(generate_schedule(two_p), deferred)));
}

TEST(BuiltInModels, ExampleCarriesANoGradValueAndASkipAcrossBoundaries) {
    for (ScheduleKind kind : {ScheduleKind::one_f_one_b, ScheduleKind::zbv_zero_bubble}) {
        const int v = kind == ScheduleKind::one_f_one_b ? 1 : 2;
        const Schedule schedule = lowered(kind, 2, v, 4);
        run_record::PipelineRunOptions options = options_for("example");
        options.layers = 3 * schedule.stage_count;  // stages start after an even layer
        const run_record::PipelineRunResult result = run_pipeline(options, schedule);
        expect_matches_reference(result);
        // Stage 1 starts after an even layer: (x, the constant, the skip), only the constant
        // without gradient.
        const auto& boundary = result.stage_inputs.at(1);
        ASSERT_EQ(boundary.size(), 3u);
        EXPECT_TRUE(boundary[0].requires_grad);
        EXPECT_FALSE(boundary[1].requires_grad);
        EXPECT_TRUE(boundary[2].requires_grad);
        EXPECT_EQ(to_string(boundary), "(f32[4, 16], f32[16], f32[4, 16])");
    }
}

TEST(BuiltInModels, KwargsAndTransformer) {
    expect_matches_reference(
        run_pipeline(options_for("kwargs"), lowered(ScheduleKind::one_f_one_b, 2, 1, 4)));
    const run_record::PipelineRunResult transformer =
        run_pipeline(options_for("transformer"), lowered(ScheduleKind::interleaved_1f1b, 2, 2, 4));
    expect_matches_reference(transformer);
    EXPECT_EQ(to_string(transformer.stage_inputs.at(0)), "(f32[4, 4, 16])");
}

TEST(BuiltInModels, TiedWeightsAreReplicatedAndTheirGradientsSummed) {
    // The first and the last stage use one weight: on different ranks (1F1B pp=3) each keeps a
    // copy and the copies' gradients are added up; on one rank (ZBV pp=2: stages 0 and 3 on
    // rank 0) the stages share the copy.
    expect_matches_reference(
        run_pipeline(options_for("tied"), lowered(ScheduleKind::one_f_one_b, 3, 1, 4)));
    expect_matches_reference(
        run_pipeline(options_for("tied"), lowered(ScheduleKind::zbv_zero_bubble, 2, 2, 4)));
}

TEST(BuiltInModels, TorchScriptFileSplitAtItsChildren) {
    // A scripted module with four children, saved as a user would with torch.jit.save.
    torch::jit::Module root("Root");
    auto generator = torch::make_generator<torch::CPUGeneratorImpl>(7);
    for (int index = 0; index < 4; ++index) {
        torch::jit::Module child("Layer" + std::to_string(index));
        child.register_parameter(
            "weight", (torch::randn({8, 8}, generator, torch::kFloat32) * 0.3).requires_grad_(),
            false);
        child.define(
            "def forward(self, x):\n    return torch.relu(torch.matmul(x, self.weight))\n");
        root.register_module("layer" + std::to_string(index), child);
    }
    const auto path = std::filesystem::temp_directory_path() /
                      ("pipelens_model_" + std::to_string(::getpid()) + ".pt");
    root.save(path.string());
    run_record::PipelineRunOptions options = options_for(path.string());
    options.input_shape = {8};
    options.split_points = {"layer1:end"};
    const run_record::PipelineRunResult result =
        run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 2, 1, 4));
    expect_matches_reference(result);
    EXPECT_EQ(to_string(result.stage_inputs.at(1)), "(f32[4, 8])");
    options.input_shape.clear();
    EXPECT_THROW(run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 2, 1, 4)),
                 std::invalid_argument);
    std::filesystem::remove(path);
}

TEST(SplitPoints, MoveLayersBetweenStagesAndStillMatch) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.layers = 4;
    options.split_points = {"layers.0:end"};  // stage 0 = layer 0, stage 1 = layers 1-3
    expect_matches_reference(run_pipeline(options, lowered(ScheduleKind::gpipe, 2, 1, 4)));
    options.split_points = {"layers.5"};
    try {
        run_pipeline(options, lowered(ScheduleKind::gpipe, 2, 1, 4));
        FAIL() << "no error";
    } catch (const std::invalid_argument& error) {
        EXPECT_EQ(std::string(error.what()),
                  "split point 'layers.5': no such layer (the model has 4 layers: layers.0 .. "
                  "layers.3)");
    }
    // A number past int's range once escaped as std::stoi's bare "stoi".
    options.split_points = {"99999999999999999999"};
    try {
        run_pipeline(options, lowered(ScheduleKind::gpipe, 2, 1, 4));
        FAIL() << "no error";
    } catch (const std::invalid_argument& error) {
        EXPECT_EQ(std::string(error.what()),
                  "split point '99999999999999999999': no such layer (the model has 4 layers: "
                  "layers.0 .. layers.3)");
    }
}

// The rank that detects a fault reports it; every other rank stops, naming that rank.
run_record::RunFailure only_failure_of_kind(const run_record::PipelineRunResult& result,
                                            const std::string& kind, int expected_rank) {
    EXPECT_FALSE(result.completed);
    const run_record::RunFailure* found = nullptr;
    for (const run_record::RankRun& rank : result.ranks) {
        if (!rank.failure)
            continue;
        if (rank.failure->kind == kind) {
            EXPECT_EQ(rank.rank, expected_rank) << rank.failure->message;
            found = &*rank.failure;
        } else {
            EXPECT_EQ(rank.failure->kind, "stopped") << rank.failure->message;
            // "stopped: rank 1 failed at 1F0: ...", or "rank 1: <a message naming no rank>"
            const std::string& message = rank.failure->message;
            EXPECT_TRUE(message.find(fmt::format("rank {} ", expected_rank)) != std::string::npos ||
                        message.find(fmt::format("rank {}:", expected_rank)) != std::string::npos)
                << message;
        }
    }
    EXPECT_NE(found, nullptr) << "no " << kind << " failure";
    return found ? *found : run_record::RunFailure{};
}

TEST(Faults, WrongBatchSizeIntoStageZero) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.faults = {"input=batch+1"};
    const auto result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    const run_record::RunFailure failure = only_failure_of_kind(result, "shape_mismatch", 0);
    EXPECT_EQ(failure.message,
              "Stage 0 forward inputs[0] has a shape mismatch: expected torch.Size([4, 16]) "
              "actual torch.Size([5, 16]) (rank 0, microbatch 0)");
    EXPECT_EQ(failure.action, "0F0");
    EXPECT_EQ(failure.expected, "torch.Size([4, 16])");
}

TEST(Faults, IntegerInput) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.faults = {"input=int32"};
    const auto result = run_pipeline(options, lowered(ScheduleKind::gpipe, 2, 1, 4));
    EXPECT_EQ(only_failure_of_kind(result, "dtype_mismatch", 0).message,
              "Stage 0 forward inputs[0] has a dtype mismatch: expected torch.float32 actual "
              "torch.int32 (rank 0, "
              "microbatch 0)");
}

TEST(Faults, StageOutputChangesDtypeOrShape) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.faults = {"stage1=dtype:bf16"};
    auto result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    EXPECT_EQ(only_failure_of_kind(result, "dtype_mismatch", 1).message,
              "Stage 1 forward outputs[0] has a dtype mismatch: expected torch.float32 actual "
              "torch.bfloat16 (rank 1, "
              "microbatch 0)");
    options.faults = {"stage1=flatten"};
    result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    EXPECT_EQ(only_failure_of_kind(result, "shape_mismatch", 1).message,
              "Stage 1 forward outputs[0] has a shape mismatch: expected torch.Size([4, 16]) "
              "actual torch.Size([64]) (rank 1, microbatch 0)");
}

// PyTorch validates every stage's forward outputs, the last stage's (the model's output, before
// the loss) included.
TEST(Faults, TheLastStagesOutputsAreValidatedToo) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.faults = {"stage2=dtype:bf16"};
    auto result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    run_record::RunFailure failure = only_failure_of_kind(result, "dtype_mismatch", 2);
    EXPECT_EQ(failure.message,
              "Stage 2 forward outputs[0] has a dtype mismatch: expected torch.float32 actual "
              "torch.bfloat16 (rank 2, "
              "microbatch 0)");
    EXPECT_EQ(failure.action, "2F0");
    EXPECT_EQ(failure.stage, 2);
    options.faults = {"stage2=flatten"};
    result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    EXPECT_EQ(only_failure_of_kind(result, "shape_mismatch", 2).message,
              "Stage 2 forward outputs[0] has a shape mismatch: expected torch.Size([4, 16]) "
              "actual torch.Size([64]) (rank 2, microbatch 0)");
}

// NaN passes every metadata check; the model's outputs are looked at after the step, and a NaN
// compares as a mismatch of unknown size (NaN), never as an error of 0.
TEST(Faults, NanOutputsFailTheRunAndCompareAsNan) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.faults = {"stage1=nan"};
    options.check_accuracy = true;
    const auto result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    const run_record::RunFailure failure = only_failure_of_kind(result, "non_finite", 2);
    EXPECT_EQ(failure.message,
              "Stage 2 forward outputs[0] has 64 non-finite values (NaN or Inf) of 64 and the loss "
              "is nan (rank 2, microbatch 0); they first appear in stage 1's outputs (rank 1, "
              "microbatch 0), as --check-accuracy found");
    EXPECT_EQ(failure.action, "2F0");
    EXPECT_EQ(failure.microbatch, 0);
    EXPECT_EQ(failure.expected, "finite values");
    EXPECT_FALSE(result.reference.outputs_match);
    EXPECT_TRUE(std::isnan(result.reference.output_max_error));
    ASSERT_TRUE(result.accuracy.first_divergence);
    EXPECT_EQ(result.accuracy.first_divergence->stage, 1);
    EXPECT_EQ(result.accuracy.first_divergence->microbatch, 0);
    EXPECT_TRUE(result.accuracy.first_divergence->non_finite);
    EXPECT_TRUE(std::isnan(result.accuracy.first_divergence->max_abs_error));
    EXPECT_TRUE(std::isnan(result.accuracy.largest_abs_error()));
    for (const run_record::StageAccuracy& entry : result.accuracy.stages)
        EXPECT_EQ(entry.non_finite, entry.stage >= 1) << entry.stage << " " << entry.microbatch;
}

TEST(Faults, AStuckRankBecomesATimeoutNotAHang) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.faults = {"stage1=sleep:60s"};
    // Long enough for every rank to reach the first step's barrier on a loaded machine (the
    // timeout bounds that wait too), far below the sleep.
    options.timeout_ms = 2000;
    const auto result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    EXPECT_FALSE(result.completed);
    int timeouts = 0;
    for (const run_record::RankRun& rank : result.ranks) {
        ASSERT_TRUE(rank.failure) << "rank " << rank.rank;
        if (rank.failure->kind == "timeout") {
            ++timeouts;
            EXPECT_NE(rank.failure->message.find("no data from rank 1"), std::string::npos)
                << rank.failure->message;
        } else {
            EXPECT_EQ(rank.failure->kind, "stopped") << rank.failure->message;
        }
    }
    EXPECT_GE(timeouts, 1);
    EXPECT_EQ(result.ranks[1].failure->kind, "stopped");  // the sleeper was woken and stopped
}

// Debug backends: each fault-injecting one raises its own error class on the rank holding the
// stage, recorded with the stage, and the others stop.
TEST(StageBackends, CompileErrorFailsWhileTheStageIsBuilt) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.backends = {"stage1=compile-error"};
    const auto result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    const run_record::RunFailure failure = only_failure_of_kind(result, "compile_error", 1);
    EXPECT_EQ(failure.stage, 1);
    EXPECT_EQ(failure.microbatch, -1);
    EXPECT_EQ(failure.message,
              "stage 1: backend 'compile-error' raised ReluCompileError while compiling "
              "layers.2, layers.3: it runs aten::relu");
}

TEST(StageBackends, RuntimeErrorFailsWhenTheFirstReluRuns) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.backends = {"stage2=runtime-error"};
    const auto result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 3, 1, 4));
    const run_record::RunFailure failure = only_failure_of_kind(result, "runtime_error", 2);
    EXPECT_EQ(failure.stage, 2);
    EXPECT_EQ(failure.microbatch, 0);
    EXPECT_EQ(failure.action, "2F0");
    EXPECT_EQ(failure.message,
              "rank 2 failed at 2F0: stage 2: backend 'runtime-error' raised "
              "ReluRuntimeError: a ReLU ran");
}

TEST(StageBackends, CheckedFindsNanThatEagerPassesOn) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.faults = {"stage0=nan"};
    options.check_reference = false;
    const auto eager = run_pipeline(options, lowered(ScheduleKind::gpipe, 2, 1, 4));
    // NaN flows through every action; only the model's output is found NaN, after the step.
    EXPECT_EQ(only_failure_of_kind(eager, "non_finite", 1).action, "1F0");
    EXPECT_TRUE(std::isnan(eager.loss));
    options.backends = {"checked"};
    const auto checked = run_pipeline(options, lowered(ScheduleKind::gpipe, 2, 1, 4));
    const run_record::RunFailure failure = only_failure_of_kind(checked, "non_finite", 1);
    EXPECT_EQ(failure.message,
              "rank 1 failed at 1F0: backend 'checked': stage 1 inputs[0] has 64 non-finite values "
              "(NaN or Inf) (stage 1, microbatch 0)");
}

TEST(StageBackends, AccuracyErrorIsLocalisedToItsStageByCheckAccuracy) {
    run_record::PipelineRunOptions options = options_for("mlp");
    options.backends = {"stage2=accuracy-error"};
    options.check_accuracy = true;
    const auto result = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 4, 1, 4));
    ASSERT_TRUE(result.completed);
    EXPECT_FALSE(result.reference.outputs_match);
    ASSERT_TRUE(result.accuracy.checked);
    ASSERT_EQ(result.accuracy.stages.size(), 16u);  // 4 stages x 4 microbatches
    ASSERT_TRUE(result.accuracy.first_divergence);
    EXPECT_EQ(result.accuracy.first_divergence->stage, 2);
    EXPECT_EQ(result.accuracy.first_divergence->microbatch, 0);
    EXPECT_GT(result.accuracy.first_divergence->max_abs_error, 0.5);
    for (const run_record::StageAccuracy& entry : result.accuracy.stages)
        EXPECT_EQ(entry.diverges, entry.stage >= 2) << entry.stage << " " << entry.microbatch;

    options.backends = {};
    const auto clean = run_pipeline(options, lowered(ScheduleKind::one_f_one_b, 4, 1, 4));
    EXPECT_FALSE(clean.accuracy.first_divergence);
}

TEST(StageBackends, ABackendWithNothingToActOnIsAUsageError) {
    run_record::PipelineRunOptions options = options_for("transformer");  // GELU, no ReLU
    options.backends = {"stage0=accuracy-error"};
    try {
        run_pipeline(options, lowered(ScheduleKind::gpipe, 2, 1, 4));
        FAIL() << "no error";
    } catch (const std::invalid_argument& error) {
        EXPECT_EQ(std::string(error.what()),
                  "backend 'accuracy-error' has nothing to act on: stage 0 (blocks.0, blocks.1) "
                  "calls no ReLU it can reach");
    }
    options.backends = {"stage9=checked"};
    EXPECT_THROW(run_pipeline(options, lowered(ScheduleKind::gpipe, 2, 1, 4)),
                 std::invalid_argument);
}

// A write that fails partway (here a second ranks row for rank 0, which the trace's UNIQUE
// constraint refuses) leaves the run marked failed with the reason, not `running`.
TEST(Recording, ARunWhoseWritingFailsIsMarkedFailed) {
    const Schedule schedule = lowered(ScheduleKind::gpipe, 2, 1, 4);
    run_record::PipelineRunResult result = run_pipeline(options_for("mlp"), schedule);
    ASSERT_TRUE(result.completed);
    result.ranks.push_back(result.ranks.front());
    const std::filesystem::path path = testing::fresh_trace("real_run_write_fails");
    {
        traces::TraceWriter writer(path);
        EXPECT_THROW(run_record::record_real_run(writer, schedule, result, plain_experiment()),
                     traces::TraceError);
    }
    const std::vector<traces::RunRecord> runs = traces::TraceReader(path).runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, traces::RunStatus::failed);
    EXPECT_EQ(runs[0].failure, path.string() +
                                   ": cannot add rank 0 to run 1: UNIQUE constraint failed: "
                                   "ranks.run_id, ranks.rank");
}

// Every rank's recording travels to rank 0; replaying it rebuilds the state the rank ended in.
TEST(Recording, EveryRankRecordsTheStateItRanFrom) {
    run_record::PipelineRunOptions options = options_for("example");
    options.backends = {"stage1=checked"};
    const auto result = run_pipeline(options, lowered(ScheduleKind::interleaved_1f1b, 2, 2, 4));
    expect_matches_reference(result);
    ASSERT_EQ(result.recordings.size(), 2u);
    for (const run_record::RankRecording& recording : result.recordings) {
        const recorder::StateRecorder replayed = recorder::replay_events(recording.parts.events);
        EXPECT_EQ(recorder::state_fields(replayed.state()), recording.parts.state);
        EXPECT_FALSE(recorder::compare_event_streams(recording.parts.events, replayed.events()));
        EXPECT_EQ(replayed.state().stages.at(1).backend, "checked");
        EXPECT_EQ(recorder::validate_state(replayed.state()), std::vector<std::string>{});
        // Every call has its moment on the run's clock, in order; all are set-up, made before
        // the step's time zero.
        std::optional<std::int64_t> previous;
        for (const recorder::Event& event : recording.parts.events) {
            ASSERT_TRUE(event.time_ns) << recorder::to_string(event);
            EXPECT_LT(*event.time_ns, 0) << recorder::to_string(event);
            if (previous) {
                EXPECT_GE(*event.time_ns, *previous) << recorder::to_string(event);
            }
            previous = event.time_ns;
        }
    }
}

}  // namespace
}  // namespace pipelens::runtime
